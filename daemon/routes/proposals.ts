/**
 * Dual control (CONTRACT 13): proposals submitted, listed, shown, approved and rejected,
 * and the approval policy read and (by an approved proposal only) changed. A proposal's
 * request is checked at submission by running it through its own route as its proposer
 * (http/approvals.ts, mode `check`); approving runs it again (mode `submit`) and answers
 * the act's command reply with `result.operation`. Which role each route needs: http/roles.ts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { approvalActs, parsePolicy } from '../../src/auth/approvals.js';
import { type Proposal, type ProposalState, stateAt } from '../../src/auth/proposals.js';
import { type ApprovalPolicy } from '../../src/auth/approvals.js';
import { justificationBytesMax } from '../../src/auth/constants.js';
import { parseJustification } from '../../src/auth/grants.js';
import { holdsRole } from '../../src/auth/members.js';
import { proposalPageMax } from '../../src/constants.js';
import { type ErrorCode, refuse } from '../../src/errors.js';
import { canonicalJson } from '../../src/model/canonical.js';
import type { Wire } from '../../src/queries/wire.js';
import type { ProposalRequest } from '../http/approvals.js';
import { callerOf, requireOperator } from '../http/auth.js';
import { acknowledge } from '../http/command.js';
import { requestDigest } from '../http/digest.js';
import { wireReply } from '../http/replies.js';
import { commandHeaders, commandReplySchema, identityId, noQuery, object, reference, responses, str, uintNumber } from '../http/schemas.js';
import { type RouteContext, withSlot, withView } from './context.js';
import { memberName } from './members.js';

/** Proposals a listing page answers when the query names no limit. */
export const proposalPageDefault = 50;

const proposalId = str('did:ledger:proposal:<id>', { pattern: '^did:ledger:proposal:[A-Za-z0-9]{1,64}$' });
const states = ['open', 'approved', 'rejected', 'expired'] as const;

const requestSchema = object(
  {
    method: { enum: ['POST'], description: 'a command route' },
    path: str('the command route, as a client would send it (no query, no dot segments, no escapes)', { pattern: '^/v1/(?!.*\\.\\.)[A-Za-z0-9:._~/-]{1,500}$' }),
    body: { type: 'object', description: "exactly what that route takes" },
    on_behalf_of: identityId,
  },
  ['method', 'path', 'body'],
);

const proposalSchema = object(
  {
    proposal: proposalId,
    request: requestSchema,
    justification: str('as the proposer gave it'),
    proposer: memberName,
    proposed_at: uintNumber('ms'),
    state: { enum: [...states] },
    decided_by: memberName,
    decided_at: uintNumber('ms'),
    reason: str('why it was rejected'),
    operation_reference: str('the act an approval submitted'),
  },
  ['proposal', 'request', 'justification', 'proposer', 'proposed_at', 'state'],
);

const policyMembers = {
  rules: { type: 'array', maxItems: approvalActs.length, items: { enum: [...approvalActs] } },
  issuanceAboveMinor: { type: 'object', description: 'asset symbol → minor units (decimal string)', maxProperties: 256, additionalProperties: str('minor units', { pattern: '^(0|[1-9][0-9]{0,37})$' }) },
  ttlMs: uintNumber('how long a proposal stays open (ms)'),
};
const policySchema = object(policyMembers, ['rules', 'issuanceAboveMinor', 'ttlMs']);

export function proposalView(p: Proposal, nowMs: number): Wire {
  const state = stateAt(p, nowMs);
  return {
    proposal: p.id,
    request: JSON.parse(p.request) as Wire,
    justification: p.justification,
    proposer: p.proposer,
    proposed_at: p.proposedAtMs,
    state,
    ...(p.decidedBy === null ? {} : { decided_by: p.decidedBy, decided_at: p.decidedAtMs }),
    ...(p.reason === null ? {} : { reason: p.reason }),
    ...(p.operation === null ? {} : { operation_reference: p.operation }),
  };
}

const policyView = (p: ApprovalPolicy): Wire => ({ rules: [...p.rules], issuanceAboveMinor: { ...p.issuanceAboveMinor }, ttlMs: p.ttlMs });

const replies = responses({ 200: commandReplySchema, 202: commandReplySchema });
const params = object({ proposal: proposalId }, ['proposal']);
const idOf = (request: FastifyRequest) => (request.params as { proposal: string }).proposal;

/** Relays a dispatched route's refusal as this route's own (same code, same description). */
function relayRefusal(status: number, body: string): never {
  let parsed: { error?: string; description?: string } = {};
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    // A reply that is no refusal body: a bug of the route, answered as one.
  }
  if (typeof parsed.error !== 'string') refuse('ERR-Internal', `the proposed request was answered ${status}`);
  refuse(parsed.error as ErrorCode, parsed.description ?? '');
}

/** Proposals and their decisions are no proposal's request, however its path was spelt. */
function refuseDispatched(request: FastifyRequest): void {
  if (request.dispatch !== null) refuse('ERR-MalformedCommand', 'a proposal cannot propose proposals or their decisions');
}

/** Requests a proposal may not carry: itself or its decisions, and batches (propose each command alone). */
function unproposable(path: string): string | null {
  if (path.startsWith('/v1/ops/proposals') || path.startsWith('/v1/ops/approvals')) return path.startsWith('/v1/ops/approvals/policy') ? null : 'a proposal cannot propose proposals or their decisions';
  if (path === '/v1/batches') return 'a batch cannot be proposed: propose each command alone';
  return null;
}

export function proposalRoutes(app: FastifyInstance, { kernel, clock }: RouteContext): void {
  const gate = app.approvals;

  const find = async (request: FastifyRequest): Promise<Proposal> => {
    const found = await withView(request, (view) => view.proposal(idOf(request)));
    if (found === undefined) refuse('ERR-UnknownOperation', `no proposal ${idOf(request)}`);
    return found;
  };

  app.post(
    '/v1/ops/proposals',
    {
      schema: {
        operationId: 'createProposal', summary: 'Propose an act for another member to approve (operator and up; the request is checked now as its route checks it)',
        headers: commandHeaders, querystring: noQuery,
        body: object({ request: requestSchema, justification: str(`why, at most ${justificationBytesMax} bytes of UTF-8`), reference }, ['request', 'justification']),
        response: replies,
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'proposals');
      refuseDispatched(request);
      if (request.headers['on-behalf-of'] !== undefined) refuse('ERR-MalformedCommand', 'a proposal names on_behalf_of in its request, not as a header');
      const body = request.body as { request: ProposalRequest; justification: unknown };
      const justification = parseJustification(body.justification, 'a proposal');
      const why = unproposable(body.request.path);
      if (why !== null) refuse('ERR-MalformedCommand', why);
      const dispatch = { mode: 'check' as const, actor: callerOf(request), member: request.member!, approval: null, checked: null };
      const checked = await gate.dispatch(app, body.request, dispatch);
      if (checked.statusCode >= 400) relayRefusal(checked.statusCode, checked.body);
      if (dispatch.checked === null) refuse('ERR-MalformedCommand', `${body.request.method} ${body.request.path} is no command a proposal can carry`);
      const { acts, approverRole } = dispatch.checked;
      const stored: ProposalRequest = { method: body.request.method, path: body.request.path, body: body.request.body, ...(body.request.on_behalf_of === undefined ? {} : { on_behalf_of: body.request.on_behalf_of }) };
      return acknowledge(kernel, request, reply, { type: 'propose', request: canonicalJson(stored), justification, acts, approverRole });
    },
  );

  app.get(
    '/v1/ops/proposals',
    {
      schema: {
        operationId: 'listProposals', summary: 'Proposals, newest first, by state when asked (auditor and up)',
        querystring: object({
          state: { enum: [...states] },
          limit: { type: 'string', pattern: '^[0-9]{1,4}$', description: `proposals per page, 1-${proposalPageMax} (default ${proposalPageDefault})` },
          cursor: str("the previous page's next", { pattern: '^[0-9a-f]{16}$' }),
        }),
        response: responses({ 200: object({ items: { type: 'array', maxItems: proposalPageMax, items: proposalSchema }, next: str('cursor of the next page') }, ['items']) }),
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'proposals');
      const q = request.query as { state?: ProposalState; limit?: string; cursor?: string };
      const limit = q.limit === undefined ? proposalPageDefault : Number(q.limit);
      if (limit < 1 || limit > proposalPageMax) refuse('ERR-MalformedCommand', `limit is 1-${proposalPageMax}`);
      const beforeCseq = q.cursor === undefined ? null : parseInt(q.cursor, 16);
      if (beforeCseq !== null && !Number.isSafeInteger(beforeCseq)) refuse('ERR-MalformedCommand', 'cursor is not a page of this listing');
      const nowMs = clock();
      const page = await withView(request, (view) => view.proposals({ beforeCseq, limit, state: q.state ?? null, nowMs }));
      const next = page.nextBeforeCseq === null ? {} : { next: page.nextBeforeCseq.toString(16).padStart(16, '0') };
      return wireReply(reply, { items: page.items.map((p) => proposalView(p, nowMs)), ...next });
    },
  );

  app.get(
    '/v1/ops/proposals/:proposal',
    { schema: { operationId: 'getProposal', summary: 'One proposal (auditor and up)', params, querystring: noQuery, response: responses({ 200: proposalSchema }) } },
    async (request, reply) => {
      requireOperator(request, kernel, 'proposals');
      return wireReply(reply, proposalView(await find(request), clock()));
    },
  );

  app.post(
    '/v1/ops/proposals/:proposal/approve',
    {
      schema: {
        operationId: 'approveProposal', summary: "Approve another member's proposal: its act is submitted as its proposer sent it, under client key proposal:<id> (result.operation)",
        headers: commandHeaders, params, querystring: noQuery, body: object({ reference }), response: replies,
      },
    },
    async (request, reply) => approve(request, reply),
  );

  /** Checks what the edge can know now (the decision checks it all again, in order), then runs the act through its route. */
  async function approve(request: FastifyRequest, reply: FastifyReply): Promise<string> {
    requireOperator(request, kernel, 'proposals');
    refuseDispatched(request);
    if (request.headers['on-behalf-of'] !== undefined) refuse('ERR-MalformedCommand', 'an approval takes no on-behalf-of: the act goes as its proposer sent it');
    const p = await find(request);
    const approver = callerOf(request).credential;
    const state = stateAt(p, clock());
    // The approver's own retry is a repeat: its act's reply again, never a second act.
    const repeat = state === 'approved' && p.decidedByCredential === approver;
    if (state !== 'open' && !repeat) refuse('ERR-OperationTerminal', `proposal ${p.id} is ${state}`);
    if (approver === p.proposerCredential) refuse('ERR-NotAuthorised', `member ${request.member!.name} proposed ${p.id}: another member approves it`);
    if (!holdsRole(request.member!.role, p.approverRole)) refuse('ERR-NotAuthorised', `approving ${p.id} needs ${p.approverRole}; member ${request.member!.name} is ${request.member!.role}`);
    const proposer = await withSlot(request, () => kernel.member(p.proposerCredential));
    if (proposer === undefined || proposer.removedAtMs !== null) refuse('ERR-InvalidTransition', `the proposer of ${p.id} is no live member: reject it`);
    const actor = { principal: kernel.principals.operator, credential: p.proposerCredential, onBehalfOf: null, scope: null };
    const dispatch = { mode: 'submit' as const, actor, member: { name: proposer.name, role: proposer.role }, approval: { proposal: p.id, approver }, checked: null };
    const taken = await gate.dispatch(app, JSON.parse(p.request) as ProposalRequest, dispatch);
    if (taken.statusCode >= 400) {
      // Another member's approval got there first: its key is taken with another digest.
      if (taken.statusCode === 409 && taken.body.includes('ERR-ClientKeyReused')) refuse('ERR-OperationTerminal', `proposal ${p.id} was decided by another member`);
      relayRefusal(taken.statusCode, taken.body);
    }
    const answer = JSON.parse(taken.body) as Record<string, unknown> & { operation_reference: string; result?: Record<string, unknown> };
    // The approval's reply names the key it was sent under; the act went under proposal:<id> (its operation's view says so).
    const header = request.headers['client-key'];
    const key = typeof header === 'string' ? { client_key: header, client_key_derived: false } : { client_key: requestDigest(callerOf(request), request.method, request.url.split('?')[0]!, request.body), client_key_derived: true };
    return wireReply(reply, { ...answer, ...key, result: { ...(answer.result ?? {}), operation: answer.operation_reference } } as Wire, taken.statusCode);
  }

  app.post(
    '/v1/ops/proposals/:proposal/reject',
    {
      schema: {
        operationId: 'rejectProposal', summary: 'Reject a proposal (a member who could approve it), or withdraw one of your own',
        headers: commandHeaders, params, querystring: noQuery,
        body: object({ reason: str(`why, at most ${justificationBytesMax} bytes of UTF-8`), reference }, ['reason']),
        response: replies,
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'proposals');
      refuseDispatched(request);
      if (request.headers['on-behalf-of'] !== undefined) refuse('ERR-MalformedCommand', 'a rejection takes no on-behalf-of');
      const reason = parseJustification((request.body as { reason: unknown }).reason, 'a rejection');
      const p = await find(request);
      return acknowledge(kernel, request, reply, { type: 'reject_proposal', proposal: p.id, reason });
    },
  );

  app.get(
    '/v1/ops/approvals/policy',
    { schema: { operationId: 'getApprovalPolicy', summary: 'The approval policy in force (auditor and up)', querystring: noQuery, response: responses({ 200: policySchema }) } },
    async (request, reply) => {
      requireOperator(request, kernel, 'the approval policy');
      return wireReply(reply, policyView(await withView(request, (view) => view.approvalPolicy())));
    },
  );

  app.post(
    '/v1/ops/approvals/policy',
    {
      schema: {
        operationId: 'setApprovalPolicy', summary: 'Admin, by an approved proposal only (while another admin is live): replace the approval policy',
        headers: commandHeaders, querystring: noQuery,
        body: object({ ...policyMembers, reference }, ['rules']),
        response: replies,
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'the approval policy');
      const { reference: _, ...given } = request.body as Record<string, unknown>;
      const policy = parsePolicy(given);
      if (typeof policy === 'string') refuse('ERR-MalformedCommand', policy);
      return acknowledge(kernel, request, reply, { type: 'set_approval_policy', policy: JSON.stringify(policy) });
    },
  );
}
