/** The verbs of `ledgerctl events`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildTail } from './tail.js';

export const verbs: readonly Builder[] = [buildTail];
