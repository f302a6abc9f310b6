/** POST /v1/transfers (spec endpoint 7). */
import type { FastifyInstance } from 'fastify';
import { deadlineHorizonMaxMs } from '../../src/constants.js';
import type { Command, Leg } from '../../src/model/model.js';
import { parseAccountId, parseAmountMinor, parseAssetSymbol } from '../../src/model/values.js';
import { acknowledge, deadlineOf } from '../http/command.js';
import { accountId, amount, assetSymbol, commandHeaders, commandReplySchema, noQuery, object, reference, responses } from '../http/schemas.js';
import type { RouteContext } from './context.js';

const legSchema = object({ amount, asset: assetSymbol, from: accountId, to: accountId }, ['amount', 'asset', 'from', 'to']);

/** The body POST /v1/transfers takes (a batch item's `body` too). */
export const transferBodySchema = object({ legs: { type: 'array', items: legSchema }, deadline: { type: ['integer', 'null'], minimum: 0 }, reference }, ['legs']);

interface TransferBody {
  legs: { amount: unknown; asset: unknown; from: unknown; to: unknown }[];
  deadline?: unknown;
}

/** The transfer a body its schema accepted asks for. */
export function transferCommand(body: unknown, { config, clock }: Pick<RouteContext, 'config' | 'clock'>): Command {
  const transfer = body as TransferBody;
  const legs: Leg[] = transfer.legs.map((leg, i) => ({
    from: parseAccountId(leg.from, `legs[${i}].from`),
    to: parseAccountId(leg.to, `legs[${i}].to`),
    asset: parseAssetSymbol(leg.asset, `legs[${i}].asset`),
    amountMinor: parseAmountMinor(leg.amount, `legs[${i}].amount`),
  }));
  const deadlineMs = deadlineOf(transfer.deadline, config.transferDeadlineMs, clock(), deadlineHorizonMaxMs);
  return { type: 'transfer', legs, deadlineMs };
}

export function transferRoutes(app: FastifyInstance, context: RouteContext): void {
  app.post(
    '/v1/transfers',
    {
      schema: {
        operationId: 'createTransfer', summary: 'Move value between accounts: legs applied in order, all or nothing',
        headers: commandHeaders,
        querystring: noQuery,
        body: transferBodySchema,
        response: responses({ 200: commandReplySchema, 202: commandReplySchema }),
      },
    },
    async (request, reply) => acknowledge(context.kernel, request, reply, transferCommand(request.body, context)),
  );
}
