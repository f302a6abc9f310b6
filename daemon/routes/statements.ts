/** GET /v1/statements (spec endpoint 9) and GET /v1/movements (endpoint 10). */
import type { FastifyInstance } from 'fastify';
import { refuse } from '../../src/errors.js';
import { parseAccountId, parseAssetSymbol, parseIdentityId } from '../../src/model/values.js';
import { movementsPageView, statementView } from '../../src/queries/views.js';
import { callerOf } from '../http/auth.js';
import { type Query, limitQuery, periodQuery, uintQuery } from '../http/query.js';
import { wireReply } from '../http/replies.js';
import { accountId, assetSymbol, digitsText, identityId, movementsPageSchema, object, responses, statementSchema, str } from '../http/schemas.js';
import { type RouteContext, withView } from './context.js';
import { movementsCursorLengthMax } from '../constants.js';

const statementBounds = ['account', 'asset', 'from', 'to'];

export function statementRoutes(app: FastifyInstance, { cursors }: RouteContext): void {
  app.get(
    '/v1/statements',
    {
      config: { unboundedIfMissing: statementBounds },
      schema: {
        operationId: 'getStatement', summary: 'Opening and closing balances of one account in one asset over a period, with its movements',
        querystring: object(
          { account: accountId, asset: assetSymbol, from: digitsText('ms, inclusive'), to: digitsText('ms, exclusive'), as_of: digitsText('an earlier view') },
          statementBounds,
        ),
        response: responses({ 200: statementSchema }),
      },
    },
    async (request, reply) => {
      const query = request.query as Query;
      const statement = await withView(request, (view) =>
        view.statement(callerOf(request), {
          account: parseAccountId(query.account),
          asset: parseAssetSymbol(query.asset),
          fromMs: uintQuery(query, 'from')!,
          toMs: uintQuery(query, 'to')!,
          asOf: uintQuery(query, 'as_of'),
        }),
      );
      return wireReply(reply, statementView(statement));
    },
  );

  app.get(
    '/v1/movements',
    {
      config: { unboundedIfMissing: ['limit'] },
      schema: {
        operationId: 'listMovements', summary: 'Movements of an account, or of every account of an identity the caller reaches, oldest first',
        queryOneOf: { name: 'of', members: ['account', 'identity'], description: 'exactly one of account or identity (neither or both: ERR-QueryUnbounded)' },
        querystring: object(
          {
            account: accountId,
            identity: identityId,
            limit: digitsText('page size, 1..1000'),
            from: digitsText('ms, inclusive; sent with to'),
            to: digitsText('ms, exclusive; sent with from'),
            asset: assetSymbol,
            direction: { enum: ['debit', 'credit'] },
            cursor: str("the previous page's next", { pattern: '^[0-9a-fA-F]+$', maxLength: movementsCursorLengthMax }),
          },
          ['limit'],
        ),
        response: responses({ 200: movementsPageSchema }),
      },
    },
    async (request, reply) => {
      const query = request.query as Query;
      if ((query.account === undefined) === (query.identity === undefined)) refuse('ERR-QueryUnbounded', 'name exactly one of account or identity');
      const limit = limitQuery(query.limit!);
      const { fromMs, toMs } = periodQuery(query);
      const page = await withView(request, (view) =>
        view.movements(callerOf(request), {
          account: query.account === undefined ? null : parseAccountId(query.account),
          identity: query.identity === undefined ? null : parseIdentityId(query.identity),
          limit,
          fromMs,
          toMs,
          asset: query.asset === undefined ? null : parseAssetSymbol(query.asset),
          direction: (query.direction as 'debit' | 'credit' | undefined) ?? null,
          cursor: query.cursor === undefined ? null : cursors.open('movements', query.cursor),
        }),
      );
      return wireReply(reply, movementsPageView({ ...page, next: page.next === null ? null : cursors.seal('movements', page.next) }));
    },
  );
}
