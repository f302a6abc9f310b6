/** The verbs of `ledgerctl transfers`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildTransferCreate } from './create.js';

export const verbs: readonly Builder[] = [buildTransferCreate];
