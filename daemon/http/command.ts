/**
 * What every command route shares (spec 4, CONTRACT 4): the `client-key` and
 * `on-behalf-of` headers, the derived client key, the raw `reference`, submission
 * to the kernel, and the reply of spec 2.1 with 202 (not terminal) or 200 (terminal).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../src/auth/authority.js';
import { refuse } from '../../src/errors.js';
import type { Acknowledgement, Kernel, Submission } from '../../src/book/kernel.js';
import { approvedKey, approvedSubmission, endCheck, gateApproval } from './approvals.js';
import type { Command, Operation } from '../../src/model/model.js';
import { type AccountId, type IdentityId, type ReferenceJson, parseIdentityId, parseReferenceJson } from '../../src/model/values.js';
import { commandReply, isTerminal } from '../../src/queries/views.js';
import { callerOf } from './auth.js';
import { type Acting, requestDigest } from './digest.js';
import { rawMember } from './raw-json.js';
import { wireReply } from './replies.js';
import { noteCommand } from './request-log.js';
import { routeOf } from './route-of.js';
import { withSlot, withView } from '../routes/context.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as sent (UTF-8 text), for the raw `reference`. */
    rawBody: string | null;
  }
}

/**
 * The caller, acting for the identity named by `on-behalf-of` when that differs. The
 * operator and the identities principal may name any identity of the book; anyone
 * else only one it holds a live grant over (spec 5.6), and the decision then checks
 * the grant used is over that identity (postings name it only when one was used).
 */
export function actingCaller(request: FastifyRequest): Actor | Promise<Actor> {
  const caller = callerOf(request);
  const onBehalfOf = onBehalfOfHeader(request);
  // The caller itself: known at once, no read and no promise.
  if (onBehalfOf === null) return caller;
  return withView(request, (view) => view.onBehalfOfRefusal(caller.principal, onBehalfOf)).then((refused) => {
    if (refused) refuse(refused.error, refused.description);
    return { ...caller, onBehalfOf };
  });
}

/** The identity `on-behalf-of` names, or null when absent or naming the caller itself. */
function onBehalfOfHeader(request: FastifyRequest): IdentityId | null {
  const header = request.headers['on-behalf-of'];
  if (header === undefined) return null;
  const onBehalfOf: IdentityId = parseIdentityId(header, 'on-behalf-of');
  return onBehalfOf === callerOf(request).principal ? null : onBehalfOf;
}

function referenceOf(request: FastifyRequest): ReferenceJson | null {
  return request.rawBody === null ? null : rawReference(request.body, request.rawBody);
}

/** The `reference` of a body (parsed, and as sent), exactly as sent; its text is scanned only when the body has one. */
export function rawReference(body: unknown, rawBody: string): ReferenceJson | null {
  if (typeof body !== 'object' || body === null || !Object.hasOwn(body, 'reference')) return null;
  const raw = rawMember(rawBody, 'reference');
  return raw === null ? null : parseReferenceJson(raw);
}

/** The path a derived key covers: the request target without its query. */
function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** Whether an account is a treasury, read in the caller's slots (the issuance_above rule, CONTRACT 13). */
export const treasuryOf = (request: FastifyRequest) => async (id: AccountId) => (await withView(request, (view) => view.account(id)))?.kind === 'treasury';

/** Submits `command` under the request's caller, client key and reference. */
export async function submitFrom(kernel: Kernel, request: FastifyRequest, command: Command): Promise<Acknowledgement> {
  const actor = await actingCaller(request);
  const reference = referenceOf(request);
  const clientKey = request.headers['client-key'];
  // A covered act goes by a proposal (CONTRACT 13); a transfer's treasuries are read only when a threshold could apply.
  const { unapproved } = await gateApproval(request, command, { isTreasury: treasuryOf(request) });
  const sub: Submission = {
    command,
    actor,
    clientKey: typeof clientKey === 'string' ? clientKey : null,
    requestDigest: digestOf(request, actor),
    reference,
    // A member's command names its route on the audit trail (CONTRACT 13).
    ...(request.member === null ? {} : { act: (routeOf(request).schema as { operationId?: string } | undefined)?.operationId }),
    ...(unapproved ? { unapproved } : {}),
  };
  if (request.dispatch?.mode === 'check') {
    await kernel.precheck(sub);
    endCheck(request);
  }
  const ack = await kernel.submit(approvedSubmission(sub, request.dispatch));
  noteCommand(request, ack.operation.ref, ack.repeat);
  return ack;
}

const digestOf = (request: FastifyRequest, acting: Acting) => requestDigest(acting, request.method, pathOf(request.url), request.body);

/** Whether this request repeats a command already taken under its client key (a repeat is answered, never refused anew). */
export function isRepeat(kernel: Kernel, request: FastifyRequest): Promise<boolean> {
  const caller = callerOf(request);
  const header = request.headers['client-key'];
  const derived = () => digestOf(request, { ...caller, onBehalfOf: onBehalfOfHeader(request) });
  // An approved act goes under `proposal:<id>`: the approver's retry repeats that.
  const { clientKey } = approvedKey({ clientKey: typeof header === 'string' ? header : derived(), requestDigest: '' }, request.dispatch);
  return withSlot(request, () => kernel.tookClientKey(caller.principal, clientKey!));
}

/** The command reply (spec 2.1): 202 while not terminal, 200 once terminal. */
export function commandAnswer(reply: FastifyReply, operation: Operation, apiKey: string | null = null): string {
  return wireReply(reply, commandReply(operation, apiKey), isTerminal(operation) ? 200 : 202);
}

/** Submits `command` and answers with the command reply. */
export async function acknowledge(kernel: Kernel, request: FastifyRequest, reply: FastifyReply, command: Command): Promise<string> {
  const { operation } = await submitFrom(kernel, request, command);
  return commandAnswer(reply, operation);
}

/** Absolute deadline from a body's `deadline` (ms) or the configured default. */
export function deadlineOf(value: unknown, defaultMs: number, nowMs: number, horizonMs: number): number {
  if (value === undefined || value === null) return nowMs + defaultMs;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) refuse('ERR-MalformedCommand', 'deadline must be a uint64 time in ms, or null');
  if (value > nowMs + horizonMs) refuse('ERR-MalformedCommand', `deadline is more than ${horizonMs} ms ahead`);
  return value;
}
