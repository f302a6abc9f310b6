/**
 * Dual control at the edge (CONTRACT 13): the gate that refuses a covered act sent
 * directly (403 ERR-ApprovalRequired, nothing stored), and the dispatch that runs a
 * proposal's request through its own route, as its proposer, in one of two modes:
 * `check` when the proposal is submitted (schema, role, on-behalf-of, the route's own
 * checks and the kernel's precheck; nothing stored) and `submit` when it is approved
 * (the act submitted under the client key `proposal:<id>`, carrying the approval).
 *
 * A dispatched request is authenticated by a one-time ticket of 32 random bytes in a
 * header only this process knows, never by a bearer: no client can reach a route as
 * another member through it.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../../src/auth/authority.js';
import { type ApprovalAct, type ApprovalPolicy, approvalActsOf, approverRoleOf, coveredByRules, mayBeIssuanceAbove, ruleInForce } from '../../src/auth/approvals.js';
import type { Member } from '../../src/auth/members.js';
import { holdsRole } from '../../src/auth/members.js';
import type { Kernel, Submission } from '../../src/book/kernel.js';
import { refuse } from '../../src/errors.js';
import type { Command, OperationApproval, Role } from '../../src/model/model.js';
import type { AccountId } from '../../src/model/values.js';
import type { MemberCaller } from './auth.js';
import { routeRoles } from './roles.js';
import { routeOf } from './route-of.js';

/** A proposal's request as stored: what its proposer asked for. */
export interface ProposalRequest {
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
  readonly on_behalf_of?: string;
}

export interface Dispatch {
  readonly mode: 'check' | 'submit';
  readonly actor: Actor;
  readonly member: MemberCaller;
  /** submit: the proposal approved and by whom. */
  readonly approval: OperationApproval | null;
  /** check: set by the route once the request passed every check, with the acts it is and the role approving it needs. */
  checked: { readonly acts: readonly ApprovalAct[]; readonly approverRole: Role } | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** A proposal's request run through its route (null: a client's own request). */
    dispatch: Dispatch | null;
  }
  interface FastifyInstance {
    approvals: ApprovalGate;
  }
}

const ticketHeader = 'x-ledgerd-dispatch';

/** Thrown by a route in check mode once its request passed every check: the dispatch answers 204, nothing stored. */
export class DispatchChecked extends Error {}

/** The policy and the members, as the gate needs them; read again after any decision that may change either. */
export class ApprovalGate {
  private state: Promise<{ policy: ApprovalPolicy; members: Member[] }> | null = null;
  private readonly tickets = new Map<string, Dispatch>();
  readonly close: () => void;

  constructor(private readonly kernel: Kernel) {
    this.close = kernel.onDecision(({ operation }) => {
      const t = operation.command.type;
      if (t === 'register_credential' || t === 'set_member_role' || t === 'remove_member' || t === 'set_approval_policy') this.state = null;
    });
  }

  current(): Promise<{ policy: ApprovalPolicy; members: Member[] }> {
    if (this.state === null) {
      const reading = this.kernel.approvalState();
      this.state = reading;
      reading.catch(() => {
        if (this.state === reading) this.state = null;
      });
    }
    return this.state;
  }

  /** Runs `request` through its route as `dispatch` says, and answers the route's reply. */
  async dispatch(app: FastifyInstance, request: ProposalRequest, dispatch: Dispatch) {
    const ticket = randomBytes(32).toString('hex');
    this.tickets.set(ticket, dispatch);
    try {
      return await app.inject({
        method: request.method as 'POST',
        url: request.path,
        payload: JSON.stringify(request.body),
        headers: { 'content-type': 'application/json', [ticketHeader]: ticket, ...(request.on_behalf_of === undefined ? {} : { 'on-behalf-of': request.on_behalf_of }) },
      });
    } finally {
      this.tickets.delete(ticket);
    }
  }

  carriesTicket(request: FastifyRequest): boolean {
    return request.headers[ticketHeader] !== undefined;
  }

  /** The dispatch a request carries a ticket of (each ticket serves once), null for none; a ticket not ours is refused. */
  take(request: FastifyRequest): Dispatch | null {
    const ticket = request.headers[ticketHeader];
    if (ticket === undefined) return null;
    const found = typeof ticket === 'string' ? this.tickets.get(ticket) : undefined;
    if (found === undefined) refuse('ERR-CredentialInvalid', 'the bearer token is missing, unknown or expired');
    this.tickets.delete(ticket as string);
    return found;
  }
}

const operationIdOf = (request: FastifyRequest): string => (routeOf(request).schema as { operationId?: string } | undefined)?.operationId ?? '';

/**
 * The gate of a member's command (CONTRACT 13). An approved act passes; a checked proposal
 * notes the acts it is; a covered act sent directly is refused while another member could
 * approve it, and otherwise taken and marked `unapproved` (its audit item says so).
 * `command` is null for a route that submits no kernel command (decided at once).
 */
export async function gateApproval(request: FastifyRequest, command: Command | null, options: { legalObligation?: boolean; isTreasury?: (account: AccountId) => Promise<boolean> } = {}): Promise<{ unapproved: boolean }> {
  const member = request.member;
  if (member === null || request.dispatch?.mode === 'submit') return { unapproved: false };
  const { policy, members } = await request.server.approvals.current();
  const treasuries = new Set<string>();
  if (command !== null && mayBeIssuanceAbove(command, policy) && command.type === 'transfer' && options.isTreasury) {
    for (const leg of command.legs) if (await options.isTreasury(leg.from)) treasuries.add(leg.from);
  }
  const acts = approvalActsOf(operationIdOf(request), command, policy, (account) => treasuries.has(account), options.legalObligation ?? false);
  const dispatch = request.dispatch;
  if (dispatch?.mode === 'check') {
    const routeRole = routeRoles[operationIdOf(request)] ?? 'operator';
    const byActs = approverRoleOf(acts);
    dispatch.checked = { acts, approverRole: holdsRole(byActs, routeRole) ? byActs : routeRole };
    return { unapproved: false };
  }
  const actor = request.actor!;
  const rule = ruleInForce(policy, acts, members, actor.credential);
  if (rule !== null) refuse('ERR-ApprovalRequired', `the approval rule ${rule} covers this act: propose it (POST /v1/ops/proposals) for another member to approve`);
  return { unapproved: coveredByRules(policy, acts) };
}

/** A dispatched check is done once the route's own checks passed: nothing more is taken. */
export function endCheck(request: FastifyRequest): void {
  if (request.dispatch?.mode === 'check') throw new DispatchChecked();
}

/**
 * An approved act's submission: under `proposal:<id>`, the approval on it, its digest
 * the request's and the approver's (so another approver's racing approval is a reused key,
 * and the same approver's retry a repeat).
 */
export function approvedSubmission(sub: Submission, dispatch: Dispatch | null): Submission {
  if (dispatch?.mode !== 'submit' || dispatch.approval === null) return sub;
  return { ...sub, ...approvedKey(sub, dispatch), approval: dispatch.approval };
}

/** The client key and digest an act goes under: the request's own, or an approved act's. */
export function approvedKey(own: { clientKey: string | null; requestDigest: string }, dispatch: Dispatch | null): { clientKey: string | null; requestDigest: string } {
  if (dispatch?.mode !== 'submit' || dispatch.approval === null) return own;
  const { proposal, approver } = dispatch.approval;
  return { clientKey: `proposal:${proposal.slice('did:ledger:proposal:'.length)}`, requestDigest: createHash('sha256').update(`${own.requestDigest}\n${approver}`).digest('hex') };
}
