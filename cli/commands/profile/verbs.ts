/** The verbs of `ledgerctl profile`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildAdd } from './add.js';
import { buildList } from './list.js';
import { buildRemove } from './remove.js';
import { buildRename } from './rename.js';
import { buildShow } from './show.js';
import { buildUse } from './use.js';

export const verbs: readonly Builder[] = [buildAdd, buildUse, buildList, buildShow, buildRemove, buildRename];
