/** Controls of the embedded settlement layer (CONTRACT 9), the operator's alone: blocks on request. */
import type { FastifyInstance } from 'fastify';
import { layerBlocksPerRequestMax } from '../../src/constants.js';
import { requireOperator } from '../http/auth.js';
import { wireReply } from '../http/replies.js';
import { commandHeaders, noQuery, object, responses, uintNumber } from '../http/schemas.js';
import type { RouteContext } from './context.js';

const layerHeadSchema = object(
  { height: uintNumber('the head height'), final_height: uintNumber('the highest final height'), serving: { type: 'boolean' } },
  ['height', 'final_height', 'serving'],
);

export function layerRoutes(app: FastifyInstance, { kernel, clock, settlement }: RouteContext): void {
  app.post(
    '/v1/ops/layer/blocks',
    {
      schema: {
        operationId: 'produceLayerBlocks', summary: 'Operator, embedded layer only: make `count` blocks now',
        headers: commandHeaders,
        querystring: noQuery,
        body: object({ count: { type: 'integer', minimum: 1, maximum: layerBlocksPerRequestMax } }, ['count']),
        response: responses({ 200: layerHeadSchema }),
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'making blocks on the settlement layer');
      const { count } = request.body as { count: number };
      await settlement.layer.produceBlocks(count, clock());
      // Taken in before answering, so the checkpoints have moved when the caller reads them.
      await settlement.checkpoints.ingest();
      const head = settlement.layer.currentHead;
      return wireReply(reply, { height: head.height, final_height: head.finalHeight, serving: settlement.layer.serving });
    },
  );
}
