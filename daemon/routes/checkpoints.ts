/**
 * Checkpoints and the clerk (CONTRACT 9): `POST /v1/ops/checkpoints` (operator, an
 * anchoring command), `GET /v1/checkpoints` (newest first) and `/{number}`, and
 * `GET /v1/clerk`, to any authenticated caller.
 */
import type { FastifyInstance } from 'fastify';
import { checkpointsPageDefault } from '../../src/constants.js';
import { refuse } from '../../src/errors.js';
import { checkpointView, comparisonView } from '../../src/checkpoints/views.js';
import { requireOperator } from '../http/auth.js';
import { type Query, limitQuery, uintQuery } from '../http/query.js';
import { wireReply } from '../http/replies.js';
import { commandHeaders, commandReplySchema, digitsText, noQuery, object, responses, str, uintNumber } from '../http/schemas.js';
import { type RouteContext, withView } from './context.js';

const hex64 = str('32 bytes, lowercase hex', { pattern: '^[0-9a-f]{64}$' });

export const checkpointSchema = object(
  {
    commitment: hex64,
    created_at: uintNumber('ms'),
    entry_sequence: uintNumber('sequence of the last journal entry covered'),
    kernel_root: hex64,
    number: uintNumber("the settlement layer's anchor number"),
    status: { enum: ['pending', 'submitted', 'final'] },
  },
  ['commitment', 'created_at', 'entry_sequence', 'kernel_root', 'number', 'status'],
);

export function checkpointRoutes(app: FastifyInstance, { kernel, clock, settlement }: RouteContext): void {
  const { checkpoints, layer } = settlement;

  app.post(
    '/v1/ops/checkpoints',
    {
      schema: {
        operationId: 'createCheckpoint', summary: 'Operator: take a checkpoint of the journal now and anchor it',
        headers: commandHeaders,
        querystring: noQuery,
        body: object({}),
        response: responses({ 200: commandReplySchema }),
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'taking checkpoints');
      return settlement.direct.answer(request, reply, async () => {
        const nowMs = clock();
        await settlement.requireServing(nowMs);
        // The view is taken first: a caller over its snapshot bound is refused before a checkpoint is taken.
        return withView(request, async (view) => {
          const checkpoint = await checkpoints.take(nowMs);
          return { anchoring: { checkpoint: checkpointView(checkpoint), comparison: comparisonView(await settlement.compare(view, nowMs)) } };
        });
      });
    },
  );

  app.get(
    '/v1/checkpoints',
    {
      schema: {
        operationId: 'listCheckpoints', summary: 'Checkpoints, newest first',
        querystring: object({ limit: digitsText('1..1000, default 100'), before: digitsText('only checkpoints numbered below this (a page\'s `next`)') }),
        response: responses({ 200: object({ items: { type: 'array', items: checkpointSchema }, next: uintNumber('send as `before` for the next page; absent on the last') }, ['items']) }),
      },
    },
    async (request, reply) => {
      const query = request.query as Query;
      const limit = query.limit === undefined ? checkpointsPageDefault : limitQuery(query.limit);
      const before = uintQuery(query, 'before');
      const page = await checkpoints.list(before, limit);
      return wireReply(reply, { items: page.items.map(checkpointView), next: page.next ?? undefined });
    },
  );

  app.get(
    '/v1/checkpoints/:number',
    {
      schema: {
        operationId: 'getCheckpoint', summary: 'One checkpoint',
        params: object({ number: digitsText('checkpoint number') }, ['number']),
        querystring: noQuery,
        response: responses({ 200: checkpointSchema }),
      },
    },
    async (request, reply) => {
      const number = uintQuery(request.params as Query, 'number')!;
      const checkpoint = await checkpoints.get(number);
      if (checkpoint === undefined) refuse('ERR-AnchorNotFinal', `no checkpoint ${number}`);
      return wireReply(reply, checkpointView(checkpoint));
    },
  );

  app.get(
    '/v1/checkpoints/:number/consistency',
    {
      schema: {
        operationId: 'getCheckpointConsistency', summary: 'The RFC 9162 consistency proof from an earlier final checkpoint to this one (CONTRACT 12.1)',
        params: object({ number: digitsText('checkpoint number (the later one)') }, ['number']),
        querystring: object({ from: digitsText('the earlier final checkpoint, 1..number') }),
        response: responses({ 200: object({ from: checkpointSchema, to: checkpointSchema, proof: { type: 'array', items: hex64 } }, ['from', 'to', 'proof']) }),
      },
    },
    async (request, reply) => {
      // CONTRACT 12.1's order: malformed (the schema: digits, no other parameter), then from 0, then unbounded, then not final.
      const to = uintQuery(request.params as Query, 'number')!;
      const from = uintQuery(request.query as Query, 'from');
      if (from === 0) refuse('ERR-MalformedCommand', 'from must be a checkpoint number, 1 or more');
      if (from === null) refuse('ERR-QueryUnbounded', 'query parameter from is required: the earlier checkpoint');
      if (from > to) refuse('ERR-QueryUnbounded', 'from is after the checkpoint asked');
      const proof = await checkpoints.consistency(from, to);
      return wireReply(reply, { from: checkpointView(proof.from), to: checkpointView(proof.to), proof: proof.proof });
    },
  );

  app.get(
    '/v1/clerk',
    {
      schema: {
        operationId: 'getClerk', summary: "The clerk's public key, which signs disclosures",
        querystring: noQuery,
        response: responses({ 200: object({ public_key: hex64, algorithm: { enum: ['ed25519'] }, instance: uintNumber('this deployment on the settlement layer') }, ['public_key', 'algorithm', 'instance']) }),
      },
    },
    async (_request, reply) => wireReply(reply, { public_key: settlement.clerk.publicKeyHex, algorithm: 'ed25519', instance: layer.instance }),
  );
}
