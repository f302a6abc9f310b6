/**
 * GET /metrics: the Prometheus exposition (daemon/metrics.ts). The operator's members
 * only, auditors too (daemon/http/roles.ts): the counters reveal the book's activity (how
 * many transfers, how many refused and why). Prometheus scrapes it with a member's bearer
 * (`authorization` in its scrape config; an auditor's API key is enough). The layer's
 * progress, the newest final checkpoint and the kept totals are read from the book by one
 * reader at a time in the daemon's own read slot; a scrape waits for a fresh read at most
 * `metricsBookReadWaitMs` and otherwise answers with the last values and their age, so it
 * never queues behind a stuck database nor holds a pooled connection itself.
 *
 * GET /v1/ops/store: the store's state as an operator reads it when commands are refused:
 * whether it keeps what it acknowledges and why not, and whether writes work. The
 * operator's members, like the metrics; `/v1/health` stays `{status: "ok"}` (CONTRACT 1).
 */
import type { FastifyInstance } from 'fastify';
import type { Kernel } from '../../src/book/kernel.js';
import { decodeBalanceText } from '../../src/model/codec.js';
import { DamagedRecord } from '../../src/model/decode.js';
import { keys } from '../../src/model/keys.js';
import { totalMinor } from '../../src/book/totals.js';
import { requireOperator } from '../http/auth.js';
import { wireReply } from '../http/replies.js';
import { noQuery, nullable, object, responses, str, uintNumber } from '../http/schemas.js';
import { metricsBookReadWaitMs } from '../constants.js';
import { LastReading } from '../last-reading.js';
import type { BookReading, Metrics } from '../metrics.js';
import { type Settlement, settlementProgress } from '../settlement.js';
import type { RouteContext } from './context.js';

/** Every registered asset's kept total is there, decodes and sums to zero. */
async function balanced(kernel: Kernel): Promise<boolean> {
  const texts = await kernel.storeForChecks.getMany(kernel.assetList.map((asset) => keys.tb(asset.id)));
  return texts.every((text) => {
    try {
      return text !== undefined && totalMinor(decodeBalanceText(text)) === 0n;
    } catch (error) {
      // A damaged total is a book that does not balance, not a failed scrape.
      if (error instanceof DamagedRecord) return false;
      throw error;
    }
  });
}

async function bookReading(kernel: Kernel, settlement: Settlement): Promise<BookReading> {
  const head = settlement.layer.currentHead;
  const progress = await settlementProgress(kernel);
  const checkpoint = await settlement.checkpoints.latestFinal();
  return {
    height: head.height,
    finalHeight: head.finalHeight,
    takenIn: progress.takenIn,
    pendingInstructions: progress.pending,
    finalCheckpointAtMs: checkpoint?.createdAtMs ?? null,
    balanced: await balanced(kernel),
  };
}

export function metricsRoutes(app: FastifyInstance, { kernel, settlement, clock }: RouteContext, metrics: Metrics): void {
  const inSlot = app.snapshots.gate(app.snapshots.internal);
  const book = new LastReading(() => inSlot(() => bookReading(kernel, settlement)), metricsBookReadWaitMs, clock, (error) =>
    app.log.warn({ err: { message: (error as Error).message } }, 'metrics: the book could not be read; its gauges keep their last values (ledgerd_book_gauges_age_seconds says how old)'),
  );
  app.get(
    '/metrics',
    { schema: { summary: "The operator's members (auditor and up): metrics in the Prometheus text format", querystring: noQuery, response: responses({ 200: { description: 'text/plain; version=0.0.4', type: 'string' } }) } },
    async (request, reply) => {
      requireOperator(request, kernel, 'the metrics');
      const text = await metrics.scrape(await book.get(), clock());
      return reply.code(200).type(metrics.registry.contentType).send(text);
    },
  );

  app.get(
    '/v1/ops/store',
    {
      schema: {
        operationId: 'storeStatus', summary: 'Operator: the store, whether it keeps what it acknowledges, and whether writes work',
        querystring: noQuery,
        response: responses({
          200: object(
            {
              kind: { enum: ['leveldb', 'postgres'] },
              durable: { type: 'boolean', description: 'false while the database\'s settings may lose an acknowledged commit (as ledgerd_store_durable)' },
              durability_risk: nullable(str('the settings that may lose it (fsync, synchronous_commit, synchronous_standby_names), or null')),
              on_risk: { type: ['string', 'null'], enum: ['refuse', 'degraded', null], description: 'store.durability: refuse every write (503) or serve degraded while durable is false; null on LevelDB' },
              deciding: { type: 'boolean', description: 'false while commands are refused with ERR-DecisionUnavailable because the store failed' },
              writes_failing_ms: uintNumber('ms the book\'s writes have been failing or hung (0 while they work)'),
            },
            ['kind', 'durable', 'durability_risk', 'on_risk', 'deciding', 'writes_failing_ms'],
          ),
        }),
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'the store status');
      const state = metrics.store();
      return wireReply(reply, {
        kind: state.kind,
        durable: state.durabilityRisk === null,
        durability_risk: state.durabilityRisk,
        on_risk: state.onRisk,
        deciding: kernel.writeAvailable,
        writes_failing_ms: state.writesFailingMs,
      });
    },
  );
}
