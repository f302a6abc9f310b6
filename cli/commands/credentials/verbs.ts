/** The verbs of `ledgerctl credentials`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildRegister } from './register.js';

export const verbs: readonly Builder[] = [buildRegister];
