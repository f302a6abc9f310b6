/**
 * POST /v1/reservations (spec endpoint 18) and its capture and release
 * (CONTRACT 4): each is a command with the usual reply.
 */
import type { FastifyInstance } from 'fastify';
import { deadlineHorizonMaxMs } from '../../src/constants.js';
import type { Command } from '../../src/model/model.js';
import { parseAccountId, parseAmountMinor, parseAssetSymbol } from '../../src/model/values.js';
import { acknowledge, deadlineOf } from '../http/command.js';
import { accountId, amount, assetSymbol, commandHeaders, commandReplySchema, noQuery, object, operationRef, reference, responses } from '../http/schemas.js';
import type { RouteContext } from './context.js';

const reservationParams = object({ operation_reference: operationRef }, ['operation_reference']);
const replies = responses({ 200: commandReplySchema, 202: commandReplySchema });

/** The bodies these routes take (a batch item's `body` too, with `reservation` for capture and release). */
export const reservationBodySchema = object(
  { amount, asset: assetSymbol, payer: accountId, deadline: { type: ['integer', 'null'], minimum: 0 }, reference },
  ['amount', 'asset', 'payer'],
);
export const captureBodySchema = object({ to: accountId, amount, reference }, ['to']);
export const releaseBodySchema = object({ reference });

type Body = Record<string, unknown>;

export function reservationCommand(body: unknown, { config, clock }: Pick<RouteContext, 'config' | 'clock'>): Command {
  const b = body as Body;
  return {
    type: 'reserve',
    payer: parseAccountId(b.payer, 'payer'),
    asset: parseAssetSymbol(b.asset),
    amountMinor: parseAmountMinor(b.amount),
    deadlineMs: deadlineOf(b.deadline, config.reservationDeadlineMs, clock(), deadlineHorizonMaxMs),
  };
}

export function captureCommand(body: unknown, reservation: string): Command {
  const b = body as Body;
  return { type: 'capture', reservation, to: parseAccountId(b.to, 'to'), amountMinor: b.amount === undefined ? null : parseAmountMinor(b.amount) };
}

export function releaseCommand(reservation: string): Command {
  return { type: 'release', reservation };
}

const reservationOf = (params: unknown) => (params as { operation_reference: string }).operation_reference;

export function reservationRoutes(app: FastifyInstance, context: RouteContext): void {
  const { kernel } = context;
  app.post(
    '/v1/reservations',
    {
      schema: {
        operationId: 'createReservation', summary: 'Reserve value against a payer account; decided later (Reserved or Rejected)',
        headers: commandHeaders,
        querystring: noQuery,
        body: reservationBodySchema,
        response: replies,
      },
    },
    async (request, reply) => acknowledge(kernel, request, reply, reservationCommand(request.body, context)),
  );

  app.post(
    '/v1/reservations/:operation_reference/capture',
    {
      schema: {
        operationId: 'captureReservation', summary: 'Move reserved value to `to`; a partial capture releases the rest',
        headers: commandHeaders,
        params: reservationParams,
        querystring: noQuery,
        body: captureBodySchema,
        response: replies,
      },
    },
    async (request, reply) => acknowledge(kernel, request, reply, captureCommand(request.body, reservationOf(request.params))),
  );

  app.post(
    '/v1/reservations/:operation_reference/release',
    {
      schema: {
        operationId: 'releaseReservation', summary: 'Return reserved value to the payer',
        headers: commandHeaders,
        params: reservationParams,
        querystring: noQuery,
        body: releaseBodySchema,
        response: replies,
      },
    },
    async (request, reply) => acknowledge(kernel, request, reply, releaseCommand(reservationOf(request.params))),
  );
}
