/**
 * POST /v1/reservations (spec endpoint 18) and its capture and release
 * (CONTRACT 4): each is a command with the usual reply.
 */
import type { FastifyInstance } from 'fastify';
import { deadlineHorizonMaxMs } from '../../src/constants.js';
import { parseAccountId, parseAmountMinor, parseAssetSymbol } from '../../src/model/values.js';
import { acknowledge, deadlineOf } from '../http/command.js';
import { accountId, amount, assetSymbol, commandHeaders, commandReplySchema, noQuery, object, operationRef, reference, responses } from '../http/schemas.js';
import type { RouteContext } from './context.js';

const reservationParams = object({ operation_reference: operationRef }, ['operation_reference']);
const replies = responses({ 200: commandReplySchema, 202: commandReplySchema });

export function reservationRoutes(app: FastifyInstance, { kernel, config, clock }: RouteContext): void {
  app.post(
    '/v1/reservations',
    {
      schema: {
        operationId: 'createReservation', summary: 'Reserve value against a payer account; decided later (Reserved or Rejected)',
        headers: commandHeaders,
        querystring: noQuery,
        body: object({ amount, asset: assetSymbol, payer: accountId, deadline: { type: ['integer', 'null'], minimum: 0 }, reference }, ['amount', 'asset', 'payer']),
        response: replies,
      },
    },
    async (request, reply) => {
      const body = request.body as Record<string, unknown>;
      return acknowledge(kernel, request, reply, {
        type: 'reserve',
        payer: parseAccountId(body.payer, 'payer'),
        asset: parseAssetSymbol(body.asset),
        amountMinor: parseAmountMinor(body.amount),
        deadlineMs: deadlineOf(body.deadline, config.reservationDeadlineMs, clock(), deadlineHorizonMaxMs),
      });
    },
  );

  app.post(
    '/v1/reservations/:operation_reference/capture',
    {
      schema: {
        operationId: 'captureReservation', summary: 'Move reserved value to `to`; a partial capture releases the rest',
        headers: commandHeaders,
        params: reservationParams,
        querystring: noQuery,
        body: object({ to: accountId, amount, reference }, ['to']),
        response: replies,
      },
    },
    async (request, reply) => {
      const body = request.body as Record<string, unknown>;
      const { operation_reference: reservation } = request.params as { operation_reference: string };
      return acknowledge(kernel, request, reply, {
        type: 'capture',
        reservation,
        to: parseAccountId(body.to, 'to'),
        amountMinor: body.amount === undefined ? null : parseAmountMinor(body.amount),
      });
    },
  );

  app.post(
    '/v1/reservations/:operation_reference/release',
    {
      schema: {
        operationId: 'releaseReservation', summary: 'Return reserved value to the payer',
        headers: commandHeaders,
        params: reservationParams,
        querystring: noQuery,
        body: object({ reference }),
        response: replies,
      },
    },
    async (request, reply) => {
      const { operation_reference: reservation } = request.params as { operation_reference: string };
      return acknowledge(kernel, request, reply, { type: 'release', reservation });
    },
  );
}
