/** The verbs of `ledgerctl withdrawals`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildWithdrawalCreate } from './create.js';

export const verbs: readonly Builder[] = [buildWithdrawalCreate];
