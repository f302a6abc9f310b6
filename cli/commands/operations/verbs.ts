/** The verbs of `ledgerctl operations`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildOperationList } from './list.js';
import { buildShow } from './show.js';
import { buildWait } from './wait.js';

export const verbs: readonly Builder[] = [buildOperationList, buildShow, buildWait];
