/** The verbs of `ledgerctl custody`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildChanges } from './changes.js';

export const verbs: readonly Builder[] = [buildChanges];
