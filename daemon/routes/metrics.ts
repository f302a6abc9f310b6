/**
 * GET /metrics: the Prometheus exposition (daemon/metrics.ts). Operator only: the
 * counters reveal the book's activity (how many transfers, how many refused and why).
 * Prometheus scrapes it with the operator's bearer (`authorization` in its scrape config).
 */
import type { FastifyInstance } from 'fastify';
import type { Kernel } from '../../src/book/kernel.js';
import { requireOperator } from '../http/auth.js';
import { noQuery, responses } from '../http/schemas.js';
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
}
