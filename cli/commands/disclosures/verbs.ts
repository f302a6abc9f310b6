/** The verbs of `ledgerctl disclosures`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildCreate } from './create.js';
import { buildShow } from './show.js';
import { buildVerify } from './verify.js';

export const verbs: readonly Builder[] = [buildCreate, buildShow, buildVerify];
