/**
 * Disclosures (spec endpoints 19 and 21, CONTRACT 9): made by the subject's owner or
 * by the operator under a legal obligation, signed by the clerk; verified against this
 * deployment's final checkpoints and clerk key by any authenticated caller.
 */
import type { FastifyInstance } from 'fastify';
import { disclose, parseAssertion, parseRecipient } from '../../src/disclosures/disclose.js';
import { type Trust, verifyDisclosure } from '../../src/disclosures/verify.js';
import { parseAccountId } from '../../src/model/values.js';
import { callerOf } from '../http/auth.js';
import type { Query } from '../http/query.js';
import { wireReply } from '../http/replies.js';
import { accountId, commandHeaders, commandReplySchema, identityId, object, reference, responses, str } from '../http/schemas.js';
import type { RouteContext } from './context.js';
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
      return settlement.direct.answer(request, reply, async () => {
        const body = request.body as DisclosureBody;
        const assets = kernel.assetList.map((a) => a.id);
        const assertion = parseAssertion(body.assertion, new Set(assets));
        const recipient = parseRecipient(body.recipient_identity, body.recipient_reference);
        // The snapshot counts against the caller's slots as every query's does (daemon/snapshot-slots.ts).
        return request.server.snapshots.hold(caller, async () => {
          const view = store.snapshot();
          try {
            const hex = await disclose(
              {
                actor: caller, operator: kernel.principals.operator, subject: parseAccountId(body.subject, 'subject'), assertion,
                checkpoint: body.checkpoint ?? null, legalObligation: body.legal_obligation ?? null, recipient, withLiabilities: body.with_liabilities === true,
              },
              {
                view, checkpoints, assets, instance: layer.instance, clerk, nowMs: clock(),
                operationPostings: async (ref) => (await kernel.operation(ref))?.result?.postings,
              },
            );
            return { disclosure: hex };
          } finally {
            await view.close();
          }
        });
      });
    },
  );

  const trust: Trust = {
    clerkPublicKeyHex: clerk.publicKeyHex,
    instance: layer.instance,
    finalCheckpoint: async (number) => {
      const c = await checkpoints.get(number);
      return c === undefined || c.status !== 'final' ? undefined : { number: c.number, commitment: c.commitment, kernel_root: c.kernelRoot, entry_sequence: c.entrySequence };
    },
  };

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
      return wireReply(reply, { ...(await verifyDisclosure(disclosure ?? null, trust)) });
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
      return wireReply(reply, { ...(await verifyDisclosure(disclosure, trust)) });
    },
  );
}
