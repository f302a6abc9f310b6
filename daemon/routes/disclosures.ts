/**
 * Disclosures (spec endpoints 19 and 21, CONTRACT 9): made by the subject's owner or
 * by the operator under a legal obligation, signed by the clerk; verified against this
 * deployment's final checkpoints and clerk key by any authenticated caller.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type DisclosureMade, disclose, disclosureMade, parseAssertion, parseRecipient, rebuildDisclosure } from '../../src/disclosures/disclose.js';
import { type Trust, verifyDisclosure } from '../../src/disclosures/verify.js';
import { check, recordJson } from '../../src/model/decode.js';
import { parseAccountId } from '../../src/model/values.js';
import { callerOf } from '../http/auth.js';
import type { Query } from '../http/query.js';
import { wireReply } from '../http/replies.js';
import { accountId, commandHeaders, commandReplySchema, identityId, object, reference, responses, str } from '../http/schemas.js';
import { type RouteContext, withSlot } from './context.js';
import { disclosureVerifyBodyBytesMax, legalObligationLengthMax } from '../constants.js';

interface DisclosureBody {
  subject: unknown;
  assertion: unknown;
  checkpoint?: number;
  legal_obligation?: string;
  recipient_identity?: unknown;
  recipient_reference?: unknown;
  with_liabilities?: boolean;
}

export function disclosureRoutes(app: FastifyInstance, { kernel, clock, settlement }: RouteContext): void {
  const { checkpoints, clerk, layer, store } = settlement;

  app.post(
    '/v1/disclosures',
    {
      schema: {
        operationId: 'createDisclosure', summary: 'A signed assertion about an account, resting on a final checkpoint',
        headers: commandHeaders,
        body: object(
          {
            subject: accountId,
            assertion: { type: 'object', description: 'one of the shapes of docs/disclosures.md, discriminated by `shape`' },
            checkpoint: { type: 'integer', minimum: 1, description: 'the checkpoint to rest on; the latest final one if absent' },
            legal_obligation: str("the operator's justification under a legal obligation", { minLength: 1, maxLength: legalObligationLengthMax }),
            recipient_identity: identityId,
            recipient_reference: str('opaque 32-byte hex', { pattern: '^[0-9a-f]{64}$' }),
            with_liabilities: { type: 'boolean', description: "CONTRACT 12.7: a v2 disclosure with the subject's liabilities proof (holds_at_least only; default false)" },
            reference,
          },
          ['subject', 'assertion'],
        ),
        response: responses({ 200: commandReplySchema }),
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const body = request.body as DisclosureBody;
      // What the request says is checked first, as at any command's edge; then the gates every command passes.
      const subject = parseAccountId(body.subject, 'subject');
      /** The disclosure `asked` asks for, made (or, with `made`, made again) on one snapshot held against the caller's slots (daemon/snapshot-slots.ts). */
      const make = (asked: DisclosureBody, made?: DisclosureMade) => {
        const assets = kernel.assetList.map((a) => a.id);
        const assertion = parseAssertion(asked.assertion, new Set(assets));
        const recipient = parseRecipient(asked.recipient_identity, asked.recipient_reference);
        const about = parseAccountId(asked.subject, 'subject');
        return withSlot(request, async () => {
          const view = store.snapshot();
          try {
            const asking = {
              actor: caller, operator: kernel.principals.operator, subject: about, assertion,
              checkpoint: asked.checkpoint ?? null, legalObligation: asked.legal_obligation ?? null, recipient, withLiabilities: asked.with_liabilities === true,
            };
            const context = {
              view, checkpoints, assets, instance: layer.instance, clerk, nowMs: clock(),
              operationPostings: async (ref: string) => (await kernel.operation(ref))?.result?.postings,
            };
            return { disclosure: made === undefined ? await disclose(asking, context) : await rebuildDisclosure(asking, made, context) };
          } finally {
            await view.close();
          }
        });
      };
      // Refused now, before the gates, when the request itself is malformed.
      parseAssertion(body.assertion, new Set(kernel.assetList.map((a) => a.id)));
      parseRecipient(body.recipient_identity, body.recipient_reference);
      // A disclosure is kept as what it was made at (its checkpoint and time), not whole: a repeat rebuilds it byte for byte.
      return settlement.direct.answer(request, reply, [{ id: subject, moves: false }], () => make(body), {
        keep: (result) => ({ ...disclosureMade(result.disclosure as string) }),
        rebuild: (kept, asked) => {
          const what = 'kept disclosure';
          const j = recordJson(JSON.stringify(kept), what);
          return make(asked as DisclosureBody, { checkpoint: check.integer(j, 'checkpoint', what), issuedAtMs: check.integer(j, 'issuedAtMs', what) });
        },
      });
    },
  );

  /** What a disclosure is checked against, its checkpoints read in the caller's read slot. */
  const trustOf = (request: FastifyRequest): Trust => ({
    clerkPublicKeyHex: clerk.publicKeyHex,
    instance: layer.instance,
    finalCheckpoint: async (number) => {
      const c = await withSlot(request, () => checkpoints.get(number));
      return c === undefined || c.status !== 'final' ? undefined : { number: c.number, commitment: c.commitment, kernel_root: c.kernelRoot, entry_sequence: c.entrySequence };
    },
  });

  app.get(
    '/v1/disclosures/verify',
    {
      schema: {
        operationId: 'verifyDisclosure', summary: "Check a disclosure against this deployment's final checkpoints and clerk key (no side effect)",
        querystring: object({ disclosure: str('the disclosure, hex') }),
        response: responses({ 200: object({ passed: { type: 'boolean' }, report: str('one line per check: `name: ok` or `name: failed: why`') }, ['passed', 'report']) }),
      },
    },
    async (request, reply) => {
      const { disclosure } = request.query as Query;
      return wireReply(reply, { ...(await verifyDisclosure(disclosure ?? null, trustOf(request))) });
    },
  );

  // CONTRACT 12.7: the same check by POST, the disclosure in the body (a query string capped its size). A query, not a command: no client key, nothing stored.
  app.post(
    '/v1/disclosures/verify',
    {
      bodyLimit: disclosureVerifyBodyBytesMax,
      schema: {
        operationId: 'verifyDisclosureByPost', summary: 'Check a disclosure sent in the body (at most 4 MiB), as GET /v1/disclosures/verify does (no side effect)',
        body: object({ disclosure: str('the disclosure, hex') }, ['disclosure']),
        response: responses({ 200: object({ passed: { type: 'boolean' }, report: str('one line per check: `name: ok` or `name: failed: why`') }, ['passed', 'report']) }),
      },
    },
    async (request, reply) => {
      const { disclosure } = request.body as { disclosure: string };
      return wireReply(reply, { ...(await verifyDisclosure(disclosure, trustOf(request))) });
    },
  );
}
