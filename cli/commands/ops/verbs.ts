/** The verbs of `ledgerctl ops`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildBackup } from './backup.js';
import { buildCheck } from './check.js';
import { buildIdentityRestrictions } from './identities.js';
import { buildIssuanceGrant } from './issuance-grant.js';
import { buildAudit, buildMembers } from './members.js';
import { buildParties } from './parties.js';
import { buildPolicy } from './policy.js';
import { buildProposals } from './proposals.js';

export const verbs: readonly Builder[] = [buildBackup, buildIssuanceGrant, buildParties, buildIdentityRestrictions, buildMembers, buildProposals, buildPolicy, buildAudit, buildCheck];
