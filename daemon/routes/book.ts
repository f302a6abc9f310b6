/** Book-wide reads: trial balance (spec endpoint 11), assets (13), aliases (14). */
import type { FastifyInstance } from 'fastify';
import { refuse } from '../../src/errors.js';
import { parseAssetSymbol } from '../../src/model/values.js';
import { assetView, grossView, trialBalanceLinesView, trialBalanceView } from '../../src/queries/views.js';
import { trialBalanceGrossBalancesMax } from '../../src/constants.js';
import { callerOf, requireOperator } from '../http/auth.js';
import { type Query, limitQuery } from '../http/query.js';
import { wireReply } from '../http/replies.js';
import { accountId, assetSchema, assetSymbol, digitsText, noQuery, object, responses, str, trialBalanceSchema } from '../http/schemas.js';
import { type RouteContext, withView } from './context.js';
import { aliasPartLengthMax, trialBalanceCursorLengthMax } from '../constants.js';

/** The listing a trial-balance cursor is sealed for (daemon/http/cursors.ts). */
const trialBalanceListing = 'trial balance lines';
/** Lines a page when `limit` is not sent. */
const trialBalanceLinesDefault = 100;
/** A cursor's position is the last balance key read (account/asset) as hex, so no character of it needs escaping. */
const hexOf = (text: string) => Buffer.from(text, 'utf8').toString('hex');
const hexText = (hex: string) => Buffer.from(hex, 'hex').toString('utf8');

export function bookRoutes(app: FastifyInstance, { kernel, cursors }: RouteContext): void {
  app.get(
    '/v1/trial-balance',
    {
      schema: {
        operationId: 'getTrialBalance', summary: 'Operator only: the signed sum of every balance per asset; with gross=true its debits and credits, with accounts=true a page of its lines',
        // `amount` is accepted and ignored (spec 4, endpoint 11).
        querystring: object({
          asset: assetSymbol,
          amount: { description: 'accepted and ignored' },
          gross: { enum: ['true', 'false'], description: `true: each row adds debits and credits (every balance read; refused past ${trialBalanceGrossBalancesMax})` },
          accounts: { enum: ['true', 'false'], description: 'true: adds accounts_page, a page of per-account lines' },
          limit: digitsText('lines a page, 1..1000 (with accounts=true; default 100)'),
          cursor: str("the previous page's accounts_page.next (with accounts=true)", { pattern: '^[0-9a-fA-F]+$', maxLength: trialBalanceCursorLengthMax }),
        }),
        response: responses({ 200: trialBalanceSchema }),
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'the trial balance');
      const query = request.query as Query;
      const asset = query.asset === undefined ? null : parseAssetSymbol(query.asset);
      const lines = query.accounts === 'true';
      if (!lines && (query.limit !== undefined || query.cursor !== undefined)) refuse('ERR-MalformedCommand', 'limit and cursor page the lines: send them with accounts=true');
      const limit = query.limit === undefined ? trialBalanceLinesDefault : limitQuery(query.limit);
      const after = query.cursor === undefined ? null : hexText(cursors.open(trialBalanceListing, query.cursor));
      // One view for the sums, the debits and credits and the page, so they agree.
      const wire = await withView(request, async (view) => {
        const tb = trialBalanceView(await view.trialBalance(asset));
        const gross = query.gross === 'true' ? await view.trialBalanceGross(asset) : null;
        const page = lines ? await view.trialBalanceLines(asset, limit, after) : null;
        return {
          ...tb,
          rows: gross === null ? tb.rows : tb.rows.map((r) => grossView(r, gross.get(r.asset))),
          ...(page === null ? {} : { accounts_page: trialBalanceLinesView(page, (next) => cursors.seal(trialBalanceListing, hexOf(next))) }),
        };
      });
      return wireReply(reply, wire);
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
