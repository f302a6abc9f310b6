/** Book-wide reads: trial balance (spec endpoint 11), assets (13), aliases (14). */
import type { FastifyInstance } from 'fastify';
import { refuse } from '../../src/errors.js';
import { parseAssetSymbol } from '../../src/model/values.js';
import { assetView, trialBalanceView } from '../../src/queries/views.js';
import { callerOf, requireOperator } from '../http/auth.js';
import type { Query } from '../http/query.js';
import { wireReply } from '../http/replies.js';
import { accountId, assetSchema, assetSymbol, noQuery, object, responses, str, trialBalanceSchema } from '../http/schemas.js';
import { type RouteContext, withView } from './context.js';
import { aliasPartLengthMax } from '../constants.js';

export function bookRoutes(app: FastifyInstance, { kernel }: RouteContext): void {
  app.get(
    '/v1/trial-balance',
    {
      schema: {
        operationId: 'getTrialBalance', summary: 'Operator only: the signed sum of every balance per asset',
        // `amount` is accepted and ignored (spec 4, endpoint 11).
        querystring: object({ asset: assetSymbol, amount: { description: 'accepted and ignored' } }),
        response: responses({ 200: trialBalanceSchema }),
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'the trial balance');
      const asset = (request.query as Query).asset;
      const tb = await withView(request, (view) => view.trialBalance(asset === undefined ? null : parseAssetSymbol(asset)));
      return wireReply(reply, trialBalanceView(tb));
    },
  );

  app.get(
    '/v1/assets',
    { schema: { operationId: 'listAssets', summary: 'Every registered asset', querystring: noQuery, response: responses({ 200: { type: 'array', items: assetSchema } }) } },
    async (_request, reply) => {
      return wireReply(reply, kernel.assetList.map(assetView));
    },
  );

  app.get(
    '/v1/aliases',
    {
      schema: {
        operationId: 'lookUpAlias', summary: "The account a prior system's identifier names",
        querystring: object({ source: str('alias source', { maxLength: aliasPartLengthMax }), name: str('alias name', { maxLength: aliasPartLengthMax }) }),
        response: responses({ 200: object({ account: accountId }, ['account']) }),
      },
    },
    async (request, reply) => {
      const { source, name } = request.query as Query;
      // An absent part (null) names no alias: nothing the caller could reach.
      if (source === undefined || name === undefined || source === '' || name === '') refuse('ERR-UnknownAccount', 'no account with that alias is reachable by the caller');
      const account = await withView(request, (view) => view.alias(callerOf(request), source, name));
      return wireReply(reply, { account });
    },
  );
}
