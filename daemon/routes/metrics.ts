/**
 * GET /metrics: the Prometheus exposition (daemon/metrics.ts). The operator's members
 * only, auditors too (daemon/http/roles.ts): the counters reveal the book's activity (how
 * many transfers, how many refused and why). Prometheus scrapes it with a member's bearer
 * (`authorization` in its scrape config; an auditor's API key is enough). Each scrape
 * reads the layer's progress, the newest final checkpoint and the kept totals in one of
 * the scraper's read slots.
 */
import type { FastifyInstance } from 'fastify';
import type { Kernel } from '../../src/book/kernel.js';
import { decodeBalanceText } from '../../src/model/codec.js';
import { DamagedRecord } from '../../src/model/decode.js';
import { keys } from '../../src/model/keys.js';
import { totalMinor } from '../../src/book/totals.js';
import { requireOperator } from '../http/auth.js';
import { noQuery, responses } from '../http/schemas.js';
import type { BookReading, Metrics } from '../metrics.js';
import { type Settlement, settlementProgress } from '../settlement.js';
import { type RouteContext, withSlot } from './context.js';

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

async function bookReading(kernel: Kernel, settlement: Settlement, nowMs: number): Promise<BookReading> {
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
    nowMs,
  };
}

export function metricsRoutes(app: FastifyInstance, { kernel, settlement, clock }: RouteContext, metrics: Metrics): void {
  app.get(
    '/metrics',
    { schema: { summary: "The operator's members (auditor and up): metrics in the Prometheus text format", querystring: noQuery, response: responses({ 200: { description: 'text/plain; version=0.0.4', type: 'string' } }) } },
    async (request, reply) => {
      requireOperator(request, kernel, 'the metrics');
      const text = await withSlot(request, async () => {
        let reading: BookReading | null = null;
        try {
          reading = await bookReading(kernel, settlement, clock());
        } catch (error) {
          request.log.warn({ err: { message: (error as Error).message } }, 'metrics: the book could not be read; its gauges are NaN in this scrape');
        }
        return metrics.scrape(reading);
      });
      return reply.code(200).type(metrics.registry.contentType).send(text);
    },
  );
}
