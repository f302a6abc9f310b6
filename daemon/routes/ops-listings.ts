/**
 * The operator's listings of the whole book (issue 25; docs/api.md, Operator listings):
 * GET /v1/ops/identities, /v1/ops/accounts, /v1/ops/operations, /v1/ops/reservations and
 * /v1/ops/grants. The operator's alone (every member, auditor and up); paged like the other
 * listings (`limit`, the previous page's `next` as `cursor`, sealed for its listing); each
 * page reads one snapshot in one of the caller's read slots and at most opsListingScanMax
 * records (src/queries/ops-listings.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { grantListingItem } from '../../src/auth/grants.js';
import { opsListingPageMax } from '../../src/constants.js';
import type { AccountKind, AccountStatus, Custody, OperationState } from '../../src/model/model.js';
import { refuse } from '../../src/errors.js';
import { parseAssetSymbol, parseIdentityId } from '../../src/model/values.js';
import {
  type GrantState,
  type IdentityStatus,
  type OpsListing,
  type OpsPage,
  type OpsPageQuery,
  identityStatus,
  listAccounts,
  listGrants,
  listIdentities,
  listOperations,
  listReservations,
  listingSpaces,
} from '../../src/queries/ops-listings.js';
import type { BookView } from '../../src/queries/queries.js';
import { accountView, operationView, reservationView } from '../../src/queries/views.js';
import type { Wire } from '../../src/queries/wire.js';
import { opsCursorLengthMax } from '../constants.js';
import { requireOperator } from '../http/auth.js';
import { type Query, limitQuery, uintQuery } from '../http/query.js';
import { wireReply } from '../http/replies.js';
import {
  type Schema,
  accountId,
  accountViewSchema,
  amount,
  assetSymbol,
  credentialId,
  digitsText,
  hexCursor,
  identityId,
  nullable,
  object,
  operationRef,
  operationViewSchema,
  reference,
  responses,
  str,
  uintNumber,
} from '../http/schemas.js';
import { grantListingItemSchema } from './grants.js';
import { type RouteContext, withView } from './context.js';

/** Items a page answers when the query names no limit. */
export const opsListingPageDefault = 100;

const operationStates = ['Received', 'Reserved', 'Instructed', 'Submitted', 'Completed', 'Rejected', 'Expired', 'Captured', 'Released'];

const identityItem = object(
  {
    identity: identityId,
    created_at: uintNumber('ms'),
    status: { enum: ['active', 'restricted'] },
    accounts: uintNumber('accounts the identity owns, closed ones included'),
  },
  ['identity', 'created_at', 'status', 'accounts'],
);
const reservationItem = object(
  {
    operation_reference: operationRef,
    payer: accountId,
    amount,
    asset: assetSymbol,
    deadline: uintNumber('ms: when the hold expires unless captured or released'),
    holder: identityId,
    credential: credentialId,
    on_behalf_of: nullable(identityId),
    reserved_at: uintNumber('ms'),
    reference,
  },
  ['operation_reference', 'payer', 'amount', 'asset', 'deadline', 'holder', 'credential', 'on_behalf_of', 'reserved_at'],
);
const grantItem = object(
  { ...(grantListingItemSchema.properties as Record<string, Schema>), state: { enum: ['live', 'revoked', 'expired'] } },
  [...(grantListingItemSchema.required as string[]), 'state'],
);

const pageSchema = (item: Schema) => object({ items: { type: 'array', maxItems: opsListingPageMax, items: item }, next: hexCursor, view: uintNumber('view') }, ['items', 'view']);

/** Paging parameters every operator listing takes, beside its filters. */
const pagingQuery: Record<string, Schema> = {
  limit: digitsText(`page size, 1..${opsListingPageMax} (${opsListingPageDefault} when absent)`),
  cursor: str("the previous page's next", { pattern: '^[0-9a-f]+$', maxLength: opsCursorLengthMax }),
};

interface ListingRoute<T> {
  readonly listing: OpsListing;
  readonly operationId: string;
  readonly summary: string;
  readonly filters: Record<string, Schema>;
  readonly item: Schema;
  readonly read: (view: BookView, q: OpsPageQuery, query: Query) => Promise<OpsPage<T>>;
  readonly render: (item: T) => Wire;
}

/** The position a cursor names: the hex of a key within the listing's own space. */
function positionOf(listing: OpsListing, position: string): string {
  const key = position.length % 2 === 0 ? new TextDecoder('utf-8', { fatal: false }).decode(hexToBytes(position)) : '';
  const prefix = listingSpaces[listing];
  if (!key.startsWith(prefix) || key.length === prefix.length) refuse('ERR-MalformedCommand', 'cursor is not one this service issued for this listing');
  return key;
}

function route<T>(app: FastifyInstance, { kernel, cursors }: RouteContext, r: ListingRoute<T>): void {
  const sealedFor = `ops ${r.listing}`;
  app.get(
    `/v1/ops/${r.listing}`,
    { schema: { operationId: r.operationId, summary: r.summary, querystring: object({ ...pagingQuery, ...r.filters }), response: responses({ 200: pageSchema(r.item) }) } },
    async (request: FastifyRequest, reply) => {
      requireOperator(request, kernel, `the operator's listing of ${r.listing}`);
      const query = request.query as Query;
      const limit = query.limit === undefined ? opsListingPageDefault : limitQuery(query.limit);
      const after = query.cursor === undefined ? null : positionOf(r.listing, cursors.open(sealedFor, query.cursor));
      const { page, view } = await withView(request, async (v) => ({ page: await r.read(v, { limit, after }, query), view: v.view }));
      const next = page.next === null ? {} : { next: cursors.seal(sealedFor, bytesToHex(new TextEncoder().encode(page.next))) };
      return wireReply(reply, { items: page.items.map(r.render), ...next, view });
    },
  );
}

/** A filter's value, or null when the query leaves it out. */
const given = <T>(query: Query, name: string, parse: (text: string) => T): T | null => (query[name] === undefined ? null : parse(query[name]!));
const asIs = <T extends string>(text: string) => text as T;

export function opsListingRoutes(app: FastifyInstance, context: RouteContext): void {
  route(app, context, {
    listing: 'identities',
    operationId: 'listOpsIdentities',
    summary: 'Operator: every identity in identifier order, by status when asked (auditor and up)',
    filters: { status: { enum: ['active', 'restricted'] } },
    item: identityItem,
    read: (v, q, query) => listIdentities(v.records, q, given(query, 'status', asIs<IdentityStatus>)),
    render: (i) => ({ identity: i.id, created_at: i.createdAtMs, status: identityStatus(i), accounts: i.accounts.length }),
  });
  route(app, context, {
    listing: 'accounts',
    operationId: 'listOpsAccounts',
    summary: 'Operator: every account in identifier order, filtered by kind, status, custody, an asset it has held, its owner (auditor and up)',
    filters: { kind: { enum: ['customer', 'treasury'] }, status: { enum: ['active', 'frozen', 'closed'] }, custody: { enum: ['delegated', 'owned'] }, asset: assetSymbol, owner: identityId },
    item: accountViewSchema,
    read: async (v, q, query) => {
      const asset = given(query, 'asset', (t) => parseAssetSymbol(t, 'asset'));
      if (asset !== null && !context.kernel.assetList.some((a) => a.id === asset)) refuse('ERR-UnknownAsset', `asset ${asset} is not registered`);
      return listAccounts(v.records, q, {
        kind: given(query, 'kind', asIs<AccountKind>),
        status: given(query, 'status', asIs<AccountStatus>),
        custody: given(query, 'custody', asIs<Custody>),
        asset,
        owner: given(query, 'owner', (t) => parseIdentityId(t, 'owner')),
      });
    },
    render: accountView,
  });
  route(app, context, {
    listing: 'operations',
    operationId: 'listOpsOperations',
    summary: 'Operator: every operation, newest first by submission, filtered by state, command, principal, submission time [from, to) (auditor and up)',
    filters: {
      state: { enum: operationStates },
      command: str('command type, as an operation view names it (transfer, reserve, open_account, ...)', { pattern: '^[a-z_]{1,64}$' }),
      principal: identityId,
      from: digitsText('submitted at or after, ms'),
      to: digitsText('submitted before, ms'),
    },
    item: operationViewSchema,
    read: (v, q, query) => {
      const fromMs = uintQuery(query, 'from');
      const toMs = uintQuery(query, 'to');
      if (fromMs !== null && toMs !== null && fromMs > toMs) refuse('ERR-QueryUnbounded', 'from is after to');
      return listOperations(v.records, q, {
        state: given(query, 'state', asIs<OperationState>),
        command: given(query, 'command', asIs),
        principal: given(query, 'principal', (t) => parseIdentityId(t, 'principal')),
        fromMs,
        toMs,
      });
    },
    render: operationView,
  });
  route(app, context, {
    listing: 'reservations',
    operationId: 'listOpsReservations',
    summary: 'Operator: every live hold (a Reserved reservation), soonest deadline first (auditor and up)',
    filters: {},
    item: reservationItem,
    read: (v, q) => listReservations(v.records, q),
    render: reservationView,
  });
  route(app, context, {
    listing: 'grants',
    operationId: 'listOpsGrants',
    summary: 'Operator: every grant in identifier order, filtered by grantor, holder, state (live, revoked, expired) (auditor and up)',
    filters: { grantor: identityId, holder: identityId, state: { enum: ['live', 'revoked', 'expired'] } },
    item: grantItem,
    read: (v, q, query) =>
      listGrants(v.records, q, { grantor: given(query, 'grantor', (t) => parseIdentityId(t, 'grantor')), holder: given(query, 'holder', (t) => parseIdentityId(t, 'holder')), state: given(query, 'state', asIs<GrantState>) }, context.clock()),
    render: ({ grant, state }) => ({ ...grantListingItem(grant), state }) as Wire,
  });
}
