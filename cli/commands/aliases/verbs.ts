/** The verbs of `ledgerctl aliases`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildLookup } from './lookup.js';

export const verbs: readonly Builder[] = [buildLookup];
