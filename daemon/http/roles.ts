/**
 * The role each route needs from a member of the operator (CONTRACT 13), in one table:
 * every read an `auditor`'s, every command an `operator`'s, members (and taking a
 * backup, which carries the book's secrets) an `admin`'s. Checked in one hook, before
 * anything else of the request (a member below a route's role is refused whatever the
 * body). A route missing from the table stops the daemon at start, so none is served
 * unchecked. Callers other than the operator are not members: their routes decide.
 */
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { holdsRole } from '../../src/auth/members.js';
import { refuse } from '../../src/errors.js';
import type { Role } from '../../src/model/model.js';
import { routeOf } from './route-of.js';

/** Route (by operationId; one without, by method and path) → the least role that may call it. */
export const routeRoles: Readonly<Record<string, Role>> = {
  // Reads: every member.
  whoAmI: 'auditor',
  listAccounts: 'auditor',
  getAccount: 'auditor',
  getAccountBalances: 'auditor',
  getAccountCustody: 'auditor',
  getTrialBalance: 'auditor',
  listAssets: 'auditor',
  lookUpAlias: 'auditor',
  listCheckpoints: 'auditor',
  getCheckpoint: 'auditor',
  getClerk: 'auditor',
  getRecoveryTerms: 'auditor',
  getRecoveryMechanisms: 'auditor',
  verifyDisclosure: 'auditor',
  verifyDisclosureByPost: 'auditor',
  getCheckpointConsistency: 'auditor',
  getAccountLiabilities: 'auditor',
  streamEvents: 'auditor',
  listIdentityGrants: 'auditor',
  listAccountGrants: 'auditor',
  getOperation: 'auditor',
  listIntegratingParties: 'auditor',
  compareSettlement: 'auditor',
  settlementStatus: 'auditor',
  storeStatus: 'auditor',
  getStatement: 'auditor',
  listMovements: 'auditor',
  'GET /metrics': 'auditor',
  listMembers: 'auditor',
  listAudit: 'auditor',
  listOpsIdentities: 'auditor',
  listOpsAccounts: 'auditor',
  listOpsOperations: 'auditor',
  listOpsReservations: 'auditor',
  listOpsGrants: 'auditor',
  getBookCheck: 'auditor',
  listProposals: 'auditor',
  getProposal: 'auditor',
  getApprovalPolicy: 'auditor',
  // Commands: operators and admins.
  openAccount: 'operator',
  createTransfer: 'operator',
  createReservation: 'operator',
  captureReservation: 'operator',
  releaseReservation: 'operator',
  submitBatch: 'operator',
  registerCredential: 'operator',
  createIdentity: 'operator',
  issueGrant: 'operator',
  issueIssuanceGrant: 'operator',
  revokeGrant: 'operator',
  registerIntegratingParty: 'operator',
  createCheckpoint: 'operator',
  createDisclosure: 'operator',
  reclaimCustody: 'operator',
  openCustodyChange: 'operator',
  cancelCustodyChange: 'operator',
  completeCustodyChange: 'operator',
  freezeAccount: 'operator',
  unfreezeAccount: 'operator',
  closeAccount: 'operator',
  restrictIdentity: 'operator',
  unrestrictIdentity: 'operator',
  registerAsset: 'operator',
  bindAsset: 'operator',
  deprecateAsset: 'operator',
  createWithdrawal: 'operator',
  syncSettlement: 'operator',
  observeDeposit: 'operator',
  rescanInbox: 'operator',
  produceLayerBlocks: 'operator',
  placeLayerDeposit: 'operator',
  setLayerServing: 'operator',
  declareLayerLocation: 'operator',
  // Reads the whole book on one snapshot: not a command, but work an auditor should not start.
  startBookCheck: 'operator',
  createProposal: 'operator',
  approveProposal: 'operator',
  rejectProposal: 'operator',
  // Members and the book's secrets: admins.
  addMember: 'admin',
  setMemberRole: 'admin',
  removeMember: 'admin',
  backupBook: 'admin',
  setApprovalPolicy: 'admin',
};

const routeName = (route: { schema?: unknown; method: unknown; url?: string }): string => (route.schema as { operationId?: string } | undefined)?.operationId ?? `${String(route.method)} ${route.url ?? ''}`;

/** Refuses to serve a protected route the table does not name. */
export function checkRouteRoles(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.config?.public) return;
    if (routeRoles[routeName(route)] === undefined) throw new Error(`route ${String(route.method)} ${route.url} has no role in daemon/http/roles.ts`);
  });
}

/** The role check (after authentication): a member below the route's role gets ERR-NotAuthorised. */
export function requireRole(request: FastifyRequest): void {
  const member = request.member;
  if (member === null || request.is404) return;
  const route = routeOf(request);
  if (route.config.public) return;
  const needed = routeRoles[routeName(route)]!;
  if (!holdsRole(member.role, needed)) {
    refuse('ERR-NotAuthorised', `the initiating principal holds no authority that covers this route (member ${member.name} is ${member.role}; it needs ${needed})`);
  }
}
