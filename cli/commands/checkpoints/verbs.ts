/** The verbs of `ledgerctl checkpoints`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildConsistency, buildVerify } from './consistency.js';
import { buildCreate } from './create.js';
import { buildExport } from './export.js';
import { buildList } from './list.js';
import { buildShow } from './show.js';
import { buildWait } from './wait.js';

export const verbs: readonly Builder[] = [buildList, buildShow, buildCreate, buildWait, buildExport, buildConsistency, buildVerify];
