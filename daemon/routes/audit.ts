/** The operator audit trail (CONTRACT 13): GET /v1/ops/audit, oldest first, paged, by member when asked (auditor and up). */
import type { FastifyInstance } from 'fastify';
import type { AuditItem } from '../../src/auth/audit.js';
import type { Wire } from '../../src/queries/wire.js';
import { auditPageMax } from '../../src/constants.js';
import { refuse } from '../../src/errors.js';
import { seqHex } from '../../src/model/keys.js';
import { requireOperator } from '../http/auth.js';
import { wireReply } from '../http/replies.js';
import { credentialId, object, responses, str, uintNumber } from '../http/schemas.js';
import { type RouteContext, withView } from './context.js';
import { memberName } from './members.js';

/** Audit items a page answers when the query names no limit. */
export const auditPageDefault = 100;

const itemSchema = object(
  {
    seq: uintNumber('the item\'s place in the trail, from 1'),
    at: uintNumber('ms'),
    member: memberName,
    credential: credentialId,
    act: str("the route's operationId, or sign_in, backup"),
    operation_reference: str('the operation the act submitted'),
    proposal: str('the proposal the act came by'),
    justification: str('as the member gave it'),
    approval: str('how the act was approved'),
  },
  ['seq', 'at', 'member', 'credential', 'act'],
);

function itemView(item: AuditItem): Wire {
  return {
    seq: item.seq,
    at: item.atMs,
    member: item.member,
    credential: item.credential,
    act: item.act,
    ...(item.operation === null ? {} : { operation_reference: item.operation }),
    ...(item.proposal === null ? {} : { proposal: item.proposal }),
    ...(item.justification === null ? {} : { justification: item.justification }),
    ...(item.approval === null ? {} : { approval: item.approval }),
  };
}

export function auditRoutes(app: FastifyInstance, { kernel }: RouteContext): void {
  app.get(
    '/v1/ops/audit',
    {
      schema: {
        operationId: 'listAudit', summary: 'The operator audit trail, oldest first: one item per act of a member (auditor and up)',
        querystring: object({
          limit: { type: 'string', pattern: '^[0-9]{1,4}$', description: `items per page, 1-${auditPageMax} (default ${auditPageDefault})` },
          cursor: str("the previous page's next", { pattern: '^[0-9a-f]{16}$' }),
          member: memberName,
        }),
        response: responses({ 200: object({ items: { type: 'array', maxItems: auditPageMax, items: itemSchema }, next: str('cursor of the next page') }, ['items']) }),
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'the audit trail');
      const q = request.query as { limit?: string; cursor?: string; member?: string };
      const limit = q.limit === undefined ? auditPageDefault : Number(q.limit);
      if (limit < 1 || limit > auditPageMax) refuse('ERR-MalformedCommand', `limit is 1-${auditPageMax}`);
      const afterSeq = q.cursor === undefined ? 0 : parseInt(q.cursor, 16);
      // The page starts at the seq after it, which must be a sequence number too.
      if (!Number.isSafeInteger(afterSeq + 1)) refuse('ERR-MalformedCommand', 'cursor is not a page of this trail');
      const page = await withView(request, (view) => view.audit({ afterSeq, limit, member: q.member ?? null }));
      return wireReply(reply, { items: page.items.map(itemView), ...(page.nextAfterSeq === null ? {} : { next: seqHex(page.nextAfterSeq) }) });
    },
  );
}
