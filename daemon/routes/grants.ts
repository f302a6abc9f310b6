/**
 * Grants (spec endpoints 6, 15, 16 and 20; CONTRACT 5): delegated grants by holders,
 * issuance grants by the operator, revocation, and the two listings. Terms are parsed
 * by src/auth/grants.ts; who may give, revoke or read is the kernel's to decide.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { grantListingItem, parseGrantTerms, parseIssuanceGrantRequest } from '../../src/auth/grants.js';
import { grantOps } from '../../src/model/model.js';
import { grantsListedMax } from '../../src/constants.js';
import type { GrantPage, GrantPageQuery } from '../../src/auth/grant-queries.js';
import { parseAccountId, parseGrantId, parseIdentityId } from '../../src/model/values.js';
import type { Wire } from '../../src/queries/wire.js';
import { callerOf, requireOperator } from '../http/auth.js';
import { acknowledge } from '../http/command.js';
import type { CursorSeal } from '../http/cursors.js';
import { type Query, limitQuery } from '../http/query.js';
import { wireReply } from '../http/replies.js';
import {
  type Schema,
  accountId,
  assetSymbol,
  commandHeaders,
  commandReplySchema,
  component,
  digitsText,
  grantId,
  hexCursor,
  identityId,
  limitMinor,
  noQuery,
  nullable,
  object,
  reference,
  responses,
  str,
  uintNumber,
} from '../http/schemas.js';
import { type RouteContext, withView } from './context.js';
import { grantsCursorLengthMax } from '../constants.js';

const replies = responses({ 200: commandReplySchema, 202: commandReplySchema });

/** Terms (spec 2.6) as JSON Schema: shapes only, values parsed by parseGrantTerms (the document shows what it accepts). */
const termProperties: Record<string, Schema> = {
  kind: { enum: ['delegated', 'issuance'] },
  principal: identityId,
  subject: component('GrantSubject', { description: 'what the grant covers', type: ['object', 'string'] }, {
    type: undefined,
    oneOf: [
      { const: 'delegated_accounts', description: "the accounts the grantor's delegation covers" },
      object({ account: accountId }, ['account']),
      object({ asset: assetSymbol }, ['asset']),
      object({ identity: identityId }, ['identity']),
    ],
  }),
  ops: { type: 'array', items: component('GrantOp', str('an operation the grant allows'), { enum: [...grantOps] }) },
  assets: { type: ['array', 'null'], items: assetSymbol },
  counterparties: { type: ['array', 'null'], items: accountId },
  expires: { type: ['integer', 'null'], minimum: 0 },
  parent: nullable(grantId),
  per_operation: nullable(limitMinor),
  per_window: { type: ['object', 'null'], properties: { length: uintNumber('ms'), limit: limitMinor }, required: ['length', 'limit'], additionalProperties: false },
};
const termsSchema = object(termProperties, ['kind', 'principal', 'subject', 'ops']);

export const grantListingItemSchema = object(
  { grant: grantId, granted_at: uintNumber('ms'), grantor: identityId, revoked: { type: ['integer', 'null'] }, terms: termsSchema },
  ['grant', 'granted_at', 'grantor', 'terms'],
);
const listing = (subject: 'identity' | 'account') =>
  object(
    { items: { type: 'array', maxItems: grantsListedMax, items: grantListingItemSchema }, [subject]: subject === 'identity' ? identityId : accountId, next: hexCursor },
    ['items', subject],
  );

/** Listings page like movements: `limit` (1..1000, 1000 when absent) and the previous page's `next` as `cursor`. */
const listingQuery = object({
  limit: digitsText(`page size, 1..${grantsListedMax} (${grantsListedMax} when absent)`),
  cursor: str("the previous page's next", { pattern: '^[0-9a-fA-F]+$', maxLength: grantsCursorLengthMax }),
});

/** A grants listing's cursors are sealed for its subject (`grants of ID`). */
const listingOf = (subject: string) => `grants of ${subject}`;

function pageQuery(request: FastifyRequest, cursors: CursorSeal, subject: string): GrantPageQuery {
  const { limit, cursor } = request.query as Query;
  return { limit: limit === undefined ? grantsListedMax : limitQuery(limit), cursor: cursor === undefined ? null : cursors.open(listingOf(subject), cursor) };
}

function pageOf(page: GrantPage, cursors: CursorSeal, subject: { identity: string } | { account: string }): Wire {
  const next = page.next === null ? {} : { next: cursors.seal(listingOf(Object.values(subject)[0]!), page.next) };
  return { items: page.grants.map((g) => grantListingItem(g) as Wire), ...subject, ...next };
}

export function grantRoutes(app: FastifyInstance, { kernel, cursors }: RouteContext): void {
  app.post(
    '/v1/grants',
    { schema: { operationId: 'issueGrant', summary: 'Delegate bounded authority (terms flat, kind delegated)', headers: commandHeaders, querystring: noQuery, body: termsSchema, response: replies } },
    async (request, reply) => acknowledge(kernel, request, reply, { type: 'issue_grant', terms: parseGrantTerms(request.body, 'delegated'), justification: null }),
  );

  app.post(
    '/v1/ops/issuance-grants',
    {
      schema: {
        operationId: 'issueIssuanceGrant', summary: 'Operator: an issuance grant over treasury accounts, with its justification',
        headers: commandHeaders,
        querystring: noQuery,
        body: object({ grant: termsSchema, justification: str('why, at most 1024 bytes of UTF-8') }, ['grant', 'justification']),
        response: replies,
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'issuance grants');
      const { terms, justification } = parseIssuanceGrantRequest(request.body);
      return acknowledge(kernel, request, reply, { type: 'issue_grant', terms, justification });
    },
  );

  app.post(
    '/v1/grants/:grant/revoke',
    {
      schema: {
        operationId: 'revokeGrant', summary: 'Revoke a grant and every grant narrowed from it (grantor, holder or operator)',
        headers: commandHeaders,
        params: object({ grant: grantId }, ['grant']),
        querystring: noQuery,
        body: object({ reference }),
        response: replies,
      },
    },
    async (request, reply) => acknowledge(kernel, request, reply, { type: 'revoke_grant', grant: parseGrantId((request.params as { grant: string }).grant) }),
  );

  app.get(
    '/v1/identities/:identity/grants',
    {
      schema: {
        operationId: 'listIdentityGrants', summary: 'Grants over an identity, live and revoked: all of them to it, the operator and the identities principal; their own to others',
        params: object({ identity: identityId }, ['identity']),
        querystring: listingQuery,
        response: responses({ 200: listing('identity') }),
      },
    },
    async (request, reply) => {
      const identity = parseIdentityId((request.params as { identity: string }).identity);
      const page = await withView(request, (view) => view.identityGrants(callerOf(request), identity, pageQuery(request, cursors, identity)));
      return wireReply(reply, pageOf(page, cursors, { identity }));
    },
  );

  app.get(
    '/v1/accounts/:account/grants',
    {
      schema: {
        operationId: 'listAccountGrants', summary: "Grants that can touch an account, live and revoked: the operator's or the owner's to read",
        params: object({ account: accountId }, ['account']),
        querystring: listingQuery,
        response: responses({ 200: listing('account') }),
      },
    },
    async (request, reply) => {
      const id = parseAccountId((request.params as { account: string }).account);
      const page = await withView(request, (view) => view.accountGrants(callerOf(request), id, pageQuery(request, cursors, id)));
      return wireReply(reply, pageOf(page, cursors, { account: id }));
    },
  );
}
