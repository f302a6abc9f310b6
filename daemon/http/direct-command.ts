/**
 * Commands decided at once, outside the kernel's rounds (anchoring and disclosures):
 * they change nothing in the book's balances, so they need no decision round, but they
 * are still commands (spec 2.1, CONTRACT 4): taken under a client key (the caller's or
 * derived from the request), and a repeat under it answers the stored reply, never a
 * second effect; the same key with another request is ERR-ClientKeyReused. The reply
 * is terminal (`Completed`) and stored under `dck/<principal>/<sha256 of the key>`.
 *
 * Before it is decided, a command passes the gates every kernel command passes
 * (src/decide/gates.ts, through `Kernel.gate`): the caller's restriction, the accounts
 * it names, the kernel accepting commands. A repeat is answered from its stored reply
 * before any gate, as the kernel answers repeats.
 *
 * A refusal stores nothing: the caller may try again under the same key.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kernel } from '../../src/book/kernel.js';
import type { GatedAccount } from '../../src/decide/gates.js';
import { refuse } from '../../src/errors.js';
import { check, recordJson } from '../../src/model/decode.js';
import type { Wire } from '../../src/queries/wire.js';
import type { Store } from '../../src/store/port.js';
import { keys } from '../../src/model/keys.js';
import { callerOf } from './auth.js';
import { sha256Hex } from '../../src/sha256.js';
import { requestDigest } from './digest.js';
import { wireReply } from './replies.js';
import { noteCommand } from './request-log.js';
import type { DirectCommand } from '../../src/decide/decide-auth.js';
import { approvedKey, endCheck, gateApproval } from './approvals.js';

const operationIdOf = (request: FastifyRequest): string => (request.routeOptions.schema as { operationId?: string } | undefined)?.operationId ?? request.routeOptions.url ?? '';

/** What a command decided at once was justified by: a disclosure's legal obligation. */
function justificationOf(body: unknown): string | null {
  const obligation = (body as { legal_obligation?: unknown } | null)?.legal_obligation;
  return typeof obligation === 'string' ? obligation : null;
}

/**
 * Records a member's act decided at once (its audit item, with `writes` in the same batch),
 * through the decider so the trail stays numbered in order; or refuses as the decision did.
 */
export async function recordAct(kernel: Kernel, command: DirectCommand): Promise<void> {
  const refused = await kernel.decideDirect(command);
  if (refused !== null) refuse(refused.error, refused.description);
}

/**
 * A command whose result is large and can be made again exactly (a disclosure): its
 * reply is stored without the result, with what `rebuild` needs, so what a caller makes
 * the daemon keep stays small (docs/reliability.md, Bytes kept per request).
 */
export interface CompactResult {
  /** What to keep of the result. */
  keep(result: Record<string, Wire>): Wire;
  /** The result again, byte for byte, from what was kept and the request as stored. */
  rebuild(kept: Wire, request: unknown): Promise<Record<string, Wire>>;
}

export class DirectCommands {
  /** Keys being decided now: a second request under one waits for the first. */
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(
    private readonly kernel: Kernel,
    private readonly store: Store,
  ) {}

  /**
   * Answers `request` with the stored reply of its client key, or gates it (`accounts`:
   * those it names) and decides it with `decide` (a refusal throws), and stores and
   * answers the reply carrying its result.
   */
  async answer(request: FastifyRequest, reply: FastifyReply, accounts: readonly GatedAccount[], decide: () => Promise<Record<string, Wire>>, compact?: CompactResult): Promise<string> {
    const caller = callerOf(request);
    const behalf = request.headers['on-behalf-of'];
    if (behalf !== undefined && behalf !== caller.principal) refuse('ERR-NotAuthorised', 'the initiating principal holds no authority that covers this command on behalf of another identity (taken in its own name only)');
    const path = request.url.split('?')[0]!;
    const header = request.headers['client-key'];
    // An approved act goes under proposal:<id>, its digest the approver's too (http/approvals.ts).
    const own = { clientKey: typeof header === 'string' ? header : null, requestDigest: requestDigest({ ...caller, onBehalfOf: null }, request.method, path, request.body) };
    const approved = approvedKey(own, request.dispatch);
    const digest = approved.requestDigest;
    const clientKey = approved.clientKey ?? digest;
    const storeKey = keys.directReply(caller.principal, sha256Hex(clientKey));
    const before = this.inFlight.get(storeKey);
    const run = (async () => {
      if (before !== undefined) await before.catch(() => undefined);
      const stored = await this.store.get(storeKey);
      // A proposal's check repeats nothing: it is checked as a new request.
      if (stored !== undefined && request.dispatch?.mode !== 'check') {
        const what = `direct command reply ${storeKey}`;
        const record = recordJson(stored, what);
        if (check.string(record, 'digest', what) !== digest) refuse('ERR-ClientKeyReused', 'the client key was used for another request');
        const answered = check.object(record, 'reply', what) as Record<string, Wire>;
        noteCommand(request, String(answered.operation_reference), true);
        if (record.kept === undefined || compact === undefined) return answered;
        return { ...answered, result: await compact.rebuild(record.kept as Wire, record.request) };
      }
      if (await this.kernel.tookClientKey(caller.principal, clientKey)) refuse('ERR-ClientKeyReused', 'the client key was used for another request');
      const { unapproved } = await gateApproval(request, null, { legalObligation: justificationOf(request.body) !== null });
      await this.kernel.gate(caller, accounts);
      const result = await decide();
      endCheck(request);
      const answer: Wire = {
        client_key: clientKey,
        client_key_derived: typeof header !== 'string',
        operation_reference: `direct-${sha256Hex(`${caller.principal}\n${clientKey}`).slice(0, 32)}`,
        terminal: true,
        class: 'terminal',
        state: 'Completed',
        result,
      };
      noteCommand(request, answer.operation_reference as string, false);
      // The request is kept with its reply: what was asked, and under which justification.
      const kept = compact === undefined ? { reply: answer } : { reply: { ...answer, result: undefined }, kept: compact.keep(result) };
      const record = { key: storeKey, value: JSON.stringify({ digest, request: request.body ?? null, ...kept }) };
      // A member's act goes on the audit trail in the batch that stores its reply (CONTRACT 13).
      if (request.member === null) await this.store.write([{ type: 'put', ...record }], true);
      else {
        const approval = request.dispatch?.approval ?? undefined;
        await recordAct(this.kernel, { type: 'record_act', credential: caller.credential, act: operationIdOf(request), operation: answer.operation_reference as string, justification: justificationOf(request.body), writes: [record], ...(approval ? { approval } : {}), ...(unapproved ? { unapproved } : {}) });
      }
      return answer;
    })();
    this.inFlight.set(storeKey, run);
    try {
      return wireReply(reply, await run);
    } finally {
      if (this.inFlight.get(storeKey) === run) this.inFlight.delete(storeKey);
    }
  }
}
