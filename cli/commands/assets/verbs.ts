/** The verbs of `ledgerctl assets`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildBind } from './bind.js';
import { buildDeprecate } from './deprecate.js';
import { buildList } from './list.js';
import { buildRegister } from './register.js';

export const verbs: readonly Builder[] = [buildList, buildRegister, buildBind, buildDeprecate];
