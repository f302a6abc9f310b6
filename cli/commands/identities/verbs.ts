/** The verbs of `ledgerctl identities`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildIdentityCreate } from './create.js';
import { buildIdentityList } from './list.js';
import { buildRecoveryTerms } from './recovery-terms.js';

export const verbs: readonly Builder[] = [buildIdentityCreate, buildIdentityList, buildRecoveryTerms];
