/**
 * GET /metrics: the Prometheus exposition (daemon/metrics.ts). Operator only: the
 * counters reveal the book's activity (how many transfers, how many refused and why).
 * Prometheus scrapes it with the operator's bearer (`authorization` in its scrape config).
 *
 * GET /v1/ops/store: the store's state as an operator reads it when commands are refused:
 * whether it keeps what it acknowledges and why not, and whether writes work. Operator
 * only, like the metrics; `/v1/health` stays `{status: "ok"}` (CONTRACT 1).
 */
import type { FastifyInstance } from 'fastify';
import type { Kernel } from '../../src/book/kernel.js';
import { requireOperator } from '../http/auth.js';
import { wireReply } from '../http/replies.js';
import { noQuery, nullable, object, responses, str, uintNumber } from '../http/schemas.js';
import type { Metrics } from '../metrics.js';

export function metricsRoutes(app: FastifyInstance, kernel: Kernel, metrics: Metrics): void {
  app.get(
    '/metrics',
    { schema: { summary: 'Operator only: metrics in the Prometheus text format', querystring: noQuery, response: responses({ 200: { description: 'text/plain; version=0.0.4', type: 'string' } }) } },
    async (request, reply) => {
      requireOperator(request, kernel, 'the metrics');
      const text = await metrics.registry.metrics();
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
