/**
 * POST /v1/accounts (spec endpoint 5), GET /v1/accounts/{account} (endpoint 12), its custody view
 * (endpoint 22) and balances, and an identity's accounts (GET /v1/accounts?owner=, CONTRACT 11).
 */
import type { FastifyInstance } from 'fastify';
import { treasuryLimitsMax } from '../../src/constants.js';
import { refuse } from '../../src/errors.js';
import type { Account } from '../../src/model/model.js';
import type { BookView } from '../../src/queries/queries.js';
import type { Wire } from '../../src/queries/wire.js';
import { type AccountId, parseAccountId, parseAssetSymbol, parseIdentityId, parseLimitMinor } from '../../src/model/values.js';
import type { Actor } from '../../src/auth/authority.js';
import { accountBalancesView, accountView, accountsPageView, custodyView } from '../../src/queries/views.js';
import { callerOf } from '../http/auth.js';
import { acknowledge } from '../http/command.js';
import { wireReply } from '../http/replies.js';
import { type Query, limitQuery } from '../http/query.js';
import {
  type Schema,
  accountBalancesSchema,
  assetSymbol,
  limitMinor,
  accountId,
  accountListingSchema,
  accountViewSchema,
  commandHeaders,
  custodyViewSchema,
  commandReplySchema,
  digitsText,
  identityId,
  noQuery,
  nullable,
  object,
  reference,
  responses,
  str,
} from '../http/schemas.js';
import { type RouteContext, withView } from './context.js';
import { accountsCursorLengthMax } from '../constants.js';

function treasuryLimits(value: unknown): Record<string, bigint> {
  const limits: Record<string, bigint> = {};
  if (value === undefined || value === null) return limits;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > treasuryLimitsMax) refuse('ERR-MalformedCommand', `treasury_limits names more than ${treasuryLimitsMax} assets`);
  for (const [symbol, limit] of entries) limits[parseAssetSymbol(symbol, 'treasury_limits asset')] = parseLimitMinor(limit, `treasury_limits.${symbol}`);
  return limits;
}

export function accountRoutes(app: FastifyInstance, { kernel, cursors }: RouteContext): void {
  app.post(
    '/v1/accounts',
    {
      schema: {
        operationId: 'openAccount', summary: 'Open a ledger account for an identity',
        headers: commandHeaders,
        querystring: noQuery,
        body: object(
          {
            custody: { enum: ['delegated', 'owned'] },
            kind: { enum: ['customer', 'treasury'] },
            owner: identityId,
            acknowledged: nullable(str('digest of the recovery terms shown (owned custody), 32 bytes as lowercase hex', { pattern: '^[0-9a-f]{64}$' })),
            reference,
            treasury_limits: { type: ['object', 'null'], description: 'minor units below zero the treasury may go, by asset symbol', propertyNames: assetSymbol, additionalProperties: limitMinor },
          },
          ['custody', 'kind', 'owner'],
        ),
        response: responses({ 200: commandReplySchema, 202: commandReplySchema }),
      },
    },
    async (request, reply) => {
      const body = request.body as Record<string, unknown>;
      const owner = parseIdentityId(body.owner, 'owner');
      const custody = body.custody as 'delegated' | 'owned';
      return acknowledge(kernel, request, reply, {
        type: 'open_account',
        owner,
        kind: body.kind as 'customer' | 'treasury',
        custody,
        treasuryLimits: treasuryLimits(body.treasury_limits),
        // Ignored for delegated custody (spec endpoint 5).
        acknowledged: custody === 'owned' ? ((body.acknowledged as string | null | undefined) ?? null) : null,
      });
    },
  );

  app.get(
    '/v1/accounts',
    {
      config: { unboundedIfMissing: ['owner', 'limit'] },
      schema: {
        operationId: 'listAccounts', summary: "An identity's accounts in identifier order: the owner's, the operator's and the identities principal's to read",
        querystring: object(
          { owner: identityId, limit: digitsText('page size, 1..1000'), cursor: str("the previous page's next", { pattern: '^[0-9a-fA-F]+$', maxLength: accountsCursorLengthMax }) },
          ['owner', 'limit'],
        ),
        response: responses({ 200: accountListingSchema }),
      },
    },
    async (request, reply) => {
      const query = request.query as Query;
      const owner = parseIdentityId(query.owner, 'owner');
      const limit = limitQuery(query.limit!);
      const listing = `accounts of ${owner}`;
      const after = query.cursor === undefined ? null : cursors.open(listing, query.cursor);
      const page = await withView(request, (view) => view.accountsOf(callerOf(request), owner, limit, after));
      return wireReply(reply, accountsPageView({ ...page, next: page.next === null ? null : cursors.seal(listing, page.next) }));
    },
  );

  const viewable = (view: BookView, actor: Actor, id: AccountId) => view.viewableAccount(actor, id);
  readAccount(app, 'getAccount', '/v1/accounts/:account', 'An account the caller reaches, or whose owner it holds a live grant over', accountViewSchema, viewable, accountView);
  readAccount(app, 'getAccountCustody', '/v1/accounts/:account/custody', "An account's custody: mode, epoch (a reclaim proof signs it) and pending changes", custodyViewSchema, viewable, custodyView);
  readAccount(
    app,
    'getAccountBalances',
    '/v1/accounts/:account/balances',
    "An account's balances (available, reserved, encumbered) in every asset it has held: the owner's, the operator's, the identities principal's, and a live grant's that names this account (CONTRACT 11)",
    accountBalancesSchema,
    (view, actor, id) => view.balancesAccount(actor, id),
    async (account, view) => accountBalancesView(account, view.view, await view.balances(account.id)),
  );
}

/** A read of one account, reachable as `reach` says, rendered by `render` from the same view. */
function readAccount(
  app: FastifyInstance,
  operationId: string,
  path: string,
  summary: string,
  schema: Schema,
  reach: (view: BookView, actor: Actor, id: AccountId) => Promise<Account>,
  render: (account: Account, view: BookView) => Wire | Promise<Wire>,
): void {
  app.get(
    path,
    { schema: { operationId, summary, params: object({ account: accountId }, ['account']), querystring: noQuery, response: responses({ 200: schema }) } },
    async (request, reply) => {
      const id = parseAccountId((request.params as { account: string }).account);
      const wire = await withView(request, async (view) => render(await reach(view, callerOf(request), id), view));
      return wireReply(reply, wire);
    },
  );
}
