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
import { accountId, assetSymbol, commandHeaders, commandReplySchema, digitsText, noQuery, object, responses, str, uintNumber } from '../http/schemas.js';
import { inScope } from '../../src/auth/authority.js';
import { parseAccountId, parseAssetSymbol } from '../../src/model/values.js';
import { callerOf } from '../http/auth.js';
import { type RouteContext, withSlot, withView } from './context.js';

const hex64 = str('32 bytes, lowercase hex', { pattern: '^[0-9a-f]{64}$' });

export const checkpointSchema = object(
  {
    commitment: hex64,
    created_at: uintNumber('ms'),
    entry_sequence: uintNumber('sequence of the last journal entry covered'),
    kernel_root: hex64,
    number: uintNumber("the settlement layer's anchor number"),
    status: { enum: ['pending', 'submitted', 'final'] },
    version: { enum: [2], description: 'absent for a version-1 checkpoint (CONTRACT 12.3)' },
    previous: { ...hex64, description: "the prior checkpoint's commitment (version 2)" },
    liabilities: {
      type: 'object',
      description: 'version 2: per asset symbol, the root of its liabilities tree (CONTRACT 12.2)',
      additionalProperties: object({ leaves: uintNumber('leaves of the tree'), root: hex64, total: str('the sum of every leaf, unsigned decimal') }, ['leaves', 'root', 'total']),
    },
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
      return settlement.direct.answer(request, reply, [], async () => {
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
      const page = await withSlot(request, () => checkpoints.list(before, limit));
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
      const checkpoint = await withSlot(request, () => checkpoints.get(number));
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
      // Its snapshot counts against the caller's slots as every query's does (daemon/snapshot-slots.ts).
      const proof = await withSlot(request, () => checkpoints.consistency(from, to));
      return wireReply(reply, { from: checkpointView(proof.from), to: checkpointView(proof.to), proof: proof.proof });
    },
  );

  const liabilityPair = object({ hash: hex64, sum: str('unsigned decimal') }, ['hash', 'sum']);
  app.get(
    '/v1/accounts/:account/liabilities',
    {
      schema: {
        operationId: 'getAccountLiabilities', summary: "The account's proof in an asset's liabilities tree at a final checkpoint (CONTRACT 12.4): owner or operator",
        params: object({ account: accountId }, ['account']),
        querystring: object({ checkpoint: digitsText('a final checkpoint of version 2'), asset: assetSymbol }),
        response: responses({
          200: object(
            {
              account: str('the account'),
              asset: assetSymbol,
              instance: uintNumber('this deployment on the settlement layer'),
              checkpoint: checkpointSchema,
              leaf: object(
                { account: str('the account'), asset: assetSymbol, available: str('unsigned decimal'), checkpoint: uintNumber('checkpoint number'), encumbered: str('unsigned decimal'), reserved: str('unsigned decimal'), salt: hex64 },
                ['account', 'asset', 'available', 'checkpoint', 'encumbered', 'reserved', 'salt'],
              ),
              index: uintNumber('the leaf\'s position, by leaf hash'),
              path: { type: 'array', items: liabilityPair },
            },
            ['account', 'asset', 'instance', 'checkpoint', 'leaf', 'index', 'path'],
          ),
        }),
      },
    },
    async (request, reply) => {
      // CONTRACT 12.4's order: malformed (the schema), unbounded, the caller, the asset, the checkpoint, the leaf.
      const account = parseAccountId((request.params as { account: string }).account);
      const query = request.query as Query;
      const number = uintQuery(query, 'checkpoint');
      const asset = query.asset === undefined ? undefined : parseAssetSymbol(query.asset);
      if (number === null || asset === undefined) refuse('ERR-QueryUnbounded', 'query parameters checkpoint and asset are required: without them the query is unbounded');
      const caller = callerOf(request);
      const operator = caller.principal === kernel.principals.operator;
      const found = await withView(request, (view) => view.account(account));
      if (operator && found === undefined) refuse('ERR-UnknownAccount', `no account ${account}`);
      if (!operator && (found === undefined || found.owner !== caller.principal || !inScope(caller, account))) {
        refuse('ERR-NotAuthorised', `only the account's owner and the operator read its liabilities proof`);
      }
      if (!kernel.assetList.some((a) => a.id === asset)) refuse('ERR-UnknownAsset', `asset ${asset} is not registered`);
      const proof = await withSlot(request, () => checkpoints.liabilities(number, asset, account));
      return wireReply(reply, { account, asset, instance: proof.instance, checkpoint: checkpointView(proof.checkpoint), leaf: { ...proof.leaf }, index: proof.index, path: proof.path });
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
