/** GET /v1/operations/{operation_reference} (CONTRACT 4): how an outcome is read. */
import type { FastifyInstance } from 'fastify';
import { operationVisible } from '../../src/auth/authority.js';
import { refuse } from '../../src/errors.js';
import { operationView } from '../../src/queries/views.js';
import { callerOf } from '../http/auth.js';
import { wireReply } from '../http/replies.js';
import { noQuery, object, operationRef, operationViewSchema, responses } from '../http/schemas.js';
import { type RouteContext, withSlot } from './context.js';

export function operationRoutes(app: FastifyInstance, { kernel }: RouteContext): void {
  app.get(
    '/v1/operations/:operation_reference',
    {
      schema: {
        operationId: 'getOperation', summary: "An operation's state and outcome",
        params: object({ operation_reference: operationRef }, ['operation_reference']),
        querystring: noQuery,
        response: responses({ 200: operationViewSchema }),
      },
    },
    async (request, reply) => {
      const { operation_reference: ref } = request.params as { operation_reference: string };
      const op = await withSlot(request, () => kernel.operation(ref));
      if (op === undefined || !operationVisible(op, callerOf(request), kernel.principals)) refuse('ERR-UnknownOperation', `no operation ${ref} is visible to the caller`);
      return wireReply(reply, operationView(op));
    },
  );
}
