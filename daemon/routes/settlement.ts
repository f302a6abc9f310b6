/**
 * Settlement routes (CONTRACT 9, docs/settlement.md): assets registered, bound and
 * deprecated; withdrawals; taking in the layer (sync, observations); what the book
 * and the layer say of each other (rescans, comparisons, status). Every /v1/ops/*
 * route is the operator's alone. Commands that need the layer are refused with
 * ERR-SettlementLayerUnavailable (503, Retry-After) while it does not serve.
 */
import type { FastifyInstance } from 'fastify';
import { assetPrecisionMax, assetsMax, deadlineHorizonMaxMs, rescanSeqsMax, symbolLengthMax } from '../../src/constants.js';
import { refuse } from '../../src/errors.js';
import type { Destination } from '../../src/model/model.js';
import { parseAccountId, parseAmountMinor, parseAssetSymbol } from '../../src/model/values.js';
import { decodeAttestationRecord, decodeDepositRecord } from '../../src/settlement/book.js';
import { requireOperator } from '../http/auth.js';
import { acknowledge, deadlineOf } from '../http/command.js';
import { wireReply } from '../http/replies.js';
import { accountId, amount, assetSymbol, commandHeaders, commandReplySchema, noQuery, object, reference, responses, str, uintNumber } from '../http/schemas.js';
import { comparisonView } from '../../src/checkpoints/views.js';
import { type RouteContext, withSlot, withView } from './context.js';
import { settlementProgress } from '../settlement.js';
import { settlementKeys } from '../../src/model/keys.js';
import { layerSymbolLengthMax, settlementPendingCountMax } from '../constants.js';

const hex32 = str('32 bytes, lowercase hex', { pattern: '^[0-9a-f]{64}$' });
const replies = responses({ 200: commandReplySchema, 202: commandReplySchema });
/** Commands decided at once (daemon/http/direct-command.ts): their reply is terminal. */
const decidedAtOnce = responses({ 200: commandReplySchema });
const destinationSchema = {
  oneOf: [object({ account: hex32 }, ['account']), object({ instance: { type: 'integer', minimum: 0, maximum: 0xffff_ffff }, account_ref: hex32 }, ['instance', 'account_ref'])],
};
const attestationSchema = object(
  {
    asset: str('asset symbol'), verdict: { enum: ['book_only', 'binding', 'bound'] }, mismatch: { type: ['string', 'null'], description: 'why the layer contradicts the asset: symbol, decimals or status' },
    height: uintNumber('the final block that carried it'), operation_reference: str('the operation that took it in'),
  },
  ['asset', 'verdict', 'mismatch', 'height', 'operation_reference'],
);
const coordinateSchema = object({ digest: hex32, instance: { type: 'integer', minimum: 0, maximum: 0xffff_ffff }, seq: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } }, ['digest', 'instance', 'seq']);

function destinationOf(value: Record<string, unknown>): Destination {
  return typeof value.account === 'string' ? { account: value.account } : { instance: value.instance as number, accountRef: value.account_ref as string };
}

export function settlementRoutes(app: FastifyInstance, { kernel, config, clock, settlement }: RouteContext): void {
  const { layer } = settlement;
  const operatorOnly = (what: string) => async (request: Parameters<typeof requireOperator>[0]) => requireOperator(request, kernel, what);

  app.post(
    '/v1/ops/assets',
    {
      schema: {
        operationId: 'registerAsset', summary: 'Operator: register an asset (book_only)',
        headers: commandHeaders, querystring: noQuery,
        body: object({ id: assetSymbol, kind: { enum: ['fiat', 'stable', 'native', 'other'] }, precision: { type: 'integer', minimum: 0, maximum: assetPrecisionMax }, reference }, ['id', 'kind', 'precision']),
        response: replies,
      },
      preHandler: operatorOnly('registering assets'),
    },
    async (request, reply) => {
      const body = request.body as { id: string; kind: 'fiat' | 'stable' | 'native' | 'other'; precision: number };
      return acknowledge(kernel, request, reply, { type: 'register_asset', asset: parseAssetSymbol(body.id, 'id'), kind: body.kind, precision: body.precision });
    },
  );

  const assetParams = object({ asset: str('asset symbol', { pattern: `^[A-Z][A-Z0-9]{0,${symbolLengthMax - 1}}$`, maxLength: symbolLengthMax }) }, ['asset']);
  app.post(
    '/v1/ops/assets/:asset/binding',
    {
      schema: {
        operationId: 'bindAsset', summary: 'Operator: bind an asset to a location on the settlement layer (binding, then bound once attested in a final block)',
        headers: commandHeaders, params: assetParams, querystring: noQuery,
        body: object({ location: hex32, reference }, ['location']),
        response: replies,
      },
      preHandler: operatorOnly('binding assets'),
    },
    async (request, reply) => {
      await settlement.requireServing(clock());
      const { asset } = request.params as { asset: string };
      const { location } = request.body as { location: string };
      return acknowledge(kernel, request, reply, { type: 'bind_asset', asset: parseAssetSymbol(asset), location });
    },
  );

  app.post(
    '/v1/ops/assets/:asset/deprecate',
    {
      schema: {
        operationId: 'deprecateAsset', summary: 'Operator: deprecate an asset (no new movements in it; holds taken still finish)',
        headers: commandHeaders, params: assetParams, querystring: noQuery,
        body: object({ reference }),
        response: replies,
      },
      preHandler: operatorOnly('deprecating assets'),
    },
    async (request, reply) => {
      const { asset } = request.params as { asset: string };
      return acknowledge(kernel, request, reply, { type: 'deprecate_asset', asset: parseAssetSymbol(asset) });
    },
  );

  app.post(
    '/v1/withdrawals',
    {
      schema: {
        operationId: 'createWithdrawal', summary: 'Move value out of the book to the settlement layer: encumbered, instructed, then Submitted and Completed or Expired',
        headers: commandHeaders, querystring: noQuery,
        body: object({ account: accountId, amount, asset: assetSymbol, destination: destinationSchema, deadline: { type: ['integer', 'null'], minimum: 0 }, reference }, ['account', 'amount', 'asset', 'destination']),
        response: replies,
      },
    },
    async (request, reply) => {
      await settlement.requireServing(clock());
      const body = request.body as Record<string, unknown>;
      return acknowledge(kernel, request, reply, {
        type: 'withdraw',
        account: parseAccountId(body.account, 'account'),
        asset: parseAssetSymbol(body.asset),
        amountMinor: parseAmountMinor(body.amount),
        destination: destinationOf(body.destination as Record<string, unknown>),
        deadlineMs: deadlineOf(body.deadline, config.transferDeadlineMs, clock(), deadlineHorizonMaxMs),
      });
    },
  );

  app.post(
    '/v1/ops/settlement/sync',
    {
      schema: {
        operationId: 'syncSettlement', summary: 'Operator: take in the settlement layer up to its head now; the result lists the operations moved',
        headers: commandHeaders, querystring: noQuery, body: object({ reference }), response: replies,
      },
      preHandler: operatorOnly('taking in the settlement layer'),
    },
    async (request, reply) => acknowledge(kernel, request, reply, (await withSlot(request, () => settlement.settleCommand(kernel, true)))!),
  );

  app.post(
    '/v1/ops/settlement/observations',
    {
      schema: {
        operationId: 'observeDeposit', summary: 'Operator: take in one inbox record by its coordinate',
        headers: commandHeaders, querystring: noQuery, body: object({ coordinate: coordinateSchema, reference }, ['coordinate']), response: replies,
      },
      preHandler: operatorOnly('observing the settlement layer'),
    },
    async (request, reply) => {
      await settlement.requireServing(clock());
      const { coordinate } = request.body as { coordinate: { digest: string; instance: number; seq: number } };
      const [record] = coordinate.instance === layer.instance ? await withSlot(request, () => layer.inbox(coordinate.seq, coordinate.seq)) : [];
      if (record === undefined || record.coordinate.digest !== coordinate.digest) refuse('ERR-EvidenceInsufficient', `the layer holds no record ${coordinate.seq} with that digest in instance ${coordinate.instance}`);
      const head = layer.currentHead;
      const deposit = { seq: record.coordinate.seq, digest: record.coordinate.digest, location: record.location, amountMinor: record.amountMinor, accountRef: record.accountRef, height: record.height };
      return acknowledge(kernel, request, reply, { type: 'observe', deposit, final: record.height !== null && record.height <= head.finalHeight });
    },
  );

  app.post(
    '/v1/ops/settlement/rescans',
    {
      schema: {
        operationId: 'rescanInbox', summary: `Operator: the inbox positions from..to (at most ${rescanSeqsMax}) the book never took in, holds as unassociated, or holds and the layer no longer shows`,
        headers: commandHeaders, querystring: noQuery,
        body: object({ from: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }, to: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } }, ['from', 'to']),
        response: decidedAtOnce,
      },
      preHandler: operatorOnly('rescanning the settlement layer'),
    },
    async (request, reply) => {
      const { from, to } = request.body as { from: number; to: number };
      if (to < from || to - from >= rescanSeqsMax) refuse('ERR-QueryUnbounded', `a rescan covers from..to, from ≤ to, at most ${rescanSeqsMax} positions`);
      return settlement.direct.answer(request, reply, [], async () => {
        await settlement.requireServing(clock());
        const head = layer.currentHead;
        const onLayer = new Map((await withSlot(request, () => layer.inbox(from, to))).map((r) => [r.coordinate.seq, r]));
        const inBook = new Map(
          (await withSlot(request, () => kernel.settlementRecords(settlementKeys.depositPrefix, settlementKeys.deposit(from), to - from + 1)))
            .map(([key, text]) => [parseInt(key.slice(settlementKeys.depositPrefix.length), 16), decodeDepositRecord(text)!] as const)
            .filter(([seq]) => seq <= to),
        );
        const missing = [...onLayer.values()]
          .filter((r) => r.height !== null && r.height <= head.finalHeight && (inBook.get(r.coordinate.seq) === undefined || inBook.get(r.coordinate.seq)!.verdict === 'recorded'))
          .map((r) => ({ digest: r.coordinate.digest, seq: r.coordinate.seq }));
        const unassociated = [...inBook.values()].filter((d) => d.verdict === 'unassociated').length;
        const unknown = [...inBook]
          .filter(([seq, d]) => d.verdict !== 'recorded' && onLayer.get(seq)?.coordinate.digest !== d.digest)
          .map(([seq, d]) => ({ digest: d.digest, instance: layer.instance, seq }));
        return { settlement: { rescan: { missing, unassociated, unknown } } };
      });
    },
  );

  app.post(
    '/v1/ops/settlement/comparisons',
    {
      schema: {
        operationId: 'compareSettlement', summary: 'Operator: per bound asset, what the book records as held on the layer against what the layer holds, at the last final block taken in',
        headers: commandHeaders, querystring: noQuery, body: object({}), response: decidedAtOnce,
      },
      preHandler: operatorOnly('comparing the book with the settlement layer'),
    },
    async (request, reply) =>
      settlement.direct.answer(request, reply, [], async () => ({ settlement: { comparison: comparisonView(await withView(request, (view) => settlement.compare(view, clock()))) } })),
  );

  app.get(
    '/v1/ops/settlement/status',
    {
      schema: {
        operationId: 'settlementStatus', summary: 'Operator: the adapter status, the layer head and how far the book took it in',
        querystring: noQuery,
        response: responses({
          200: object(
            {
              declared_at: uintNumber('ms'), fresh_until: uintNumber('ms: the first time the declaration no longer holds'), serving: { type: 'boolean' },
              height: uintNumber('the layer head'), final_height: uintNumber('the highest final height'), taken_in: uintNumber('the last final height the book took in'),
              cut: uintNumber('the inbox length at that height'), pending_instructions: uintNumber(`withdrawals not yet Completed or Expired (counted up to ${settlementPendingCountMax + 1})`),
              attestations: { type: 'array', items: attestationSchema, description: "per asset, what the book made of the layer's latest attestation of its location in a final block" },
            },
            ['declared_at', 'fresh_until', 'serving', 'height', 'final_height', 'taken_in', 'cut', 'pending_instructions', 'attestations'],
          ),
        }),
      },
      preHandler: operatorOnly('reading the settlement status'),
    },
    async (request, reply) => {
      const nowMs = clock();
      const status = await layer.status(nowMs);
      // One record per registered asset at most, so assetsMax bounds the attestations read.
      const [progress, attestationRecords] = await withSlot(request, async () => [
        await settlementProgress(kernel),
        await kernel.settlementRecords(settlementKeys.attestationPrefix, settlementKeys.attestationPrefix, assetsMax),
      ] as const);
      const head = layer.currentHead;
      const attestations = attestationRecords.map(([key, text]) => {
        const { verdict, mismatch, height, operation } = decodeAttestationRecord(text);
        return { asset: key.slice(settlementKeys.attestationPrefix.length), verdict, mismatch, height, operation_reference: operation };
      });
      return wireReply(reply, {
        declared_at: status.declaredAtMs,
        fresh_until: status.freshUntilMs,
        serving: status.serving,
        height: head.height,
        final_height: head.finalHeight,
        taken_in: progress.takenIn,
        cut: progress.cut,
        pending_instructions: progress.pending,
        attestations,
      });
    },
  );

  // ---------------------------------------------------------------- embedded layer controls

  app.post(
    '/v1/ops/layer/deposits',
    {
      schema: {
        operationId: 'placeLayerDeposit', summary: 'Operator, embedded layer only: place a deposit in the inbox for the account `account_ref` names',
        headers: commandHeaders, querystring: noQuery,
        body: object({ asset: assetSymbol, amount, account_ref: hex32, reference }, ['asset', 'amount', 'account_ref']),
        response: decidedAtOnce,
      },
      preHandler: operatorOnly('placing deposits on the settlement layer'),
    },
    async (request, reply) => {
      const body = request.body as Record<string, unknown>;
      const symbol = parseAssetSymbol(body.asset);
      const amountMinor = parseAmountMinor(body.amount);
      return settlement.direct.answer(request, reply, [], async () => {
        const asset = kernel.assetList.find((a) => a.id === symbol);
        if (asset === undefined) refuse('ERR-UnknownAsset', `asset ${symbol} is not registered`);
        if (asset.binding !== 'bound' || asset.location === null) refuse('ERR-UnsupportedLeg', `asset ${symbol} is not bound to the settlement layer`);
        const record = await layer.placeDeposit({ location: asset.location, amountMinor, accountRef: body.account_ref as string });
        return { settlement: { coordinate: { ...record.coordinate } } };
      });
    },
  );

  app.post(
    '/v1/ops/layer/status',
    {
      schema: {
        operationId: 'setLayerServing', summary: 'Operator, embedded layer only: stop or resume serving',
        headers: commandHeaders, querystring: noQuery, body: object({ serving: { type: 'boolean' } }, ['serving']),
        response: responses({ 200: object({ height: uintNumber('head'), final_height: uintNumber('final'), serving: { type: 'boolean' } }, ['height', 'final_height', 'serving']) }),
      },
      preHandler: operatorOnly('stopping or resuming the settlement layer'),
    },
    async (request, reply) => {
      const { serving } = request.body as { serving: boolean };
      await layer.setServing(serving, clock());
      const head = layer.currentHead;
      return wireReply(reply, { height: head.height, final_height: head.finalHeight, serving: layer.serving });
    },
  );

  app.post(
    '/v1/ops/layer/locations',
    {
      schema: {
        operationId: 'declareLayerLocation', summary: 'Operator, embedded layer only: declare what a location is (what the layer attests of it)',
        headers: commandHeaders, querystring: noQuery,
        body: object({ location: hex32, symbol: str('the symbol the layer attests', { maxLength: layerSymbolLengthMax }), decimals: { type: 'integer', minimum: 0, maximum: assetPrecisionMax }, status: { enum: ['active', 'retired'] } }, ['location', 'symbol', 'decimals', 'status']),
        response: responses({ 200: object({ location: hex32 }, ['location']) }),
      },
      preHandler: operatorOnly('declaring settlement-layer locations'),
    },
    async (request, reply) => {
      const body = request.body as { location: string; symbol: string; decimals: number; status: 'active' | 'retired' };
      await layer.registerLocation({ location: body.location, symbol: body.symbol, decimals: body.decimals, status: body.status });
      return wireReply(reply, { location: body.location });
    },
  );
}

