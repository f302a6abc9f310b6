/**
 * Members of the operator (CONTRACT 13): the listing (auditor and up), a role change
 * and a removal (admin; commands). Adding one is POST /v1/ops/members, beside the other
 * credential registrations (credentials.ts). Which role each route needs: http/roles.ts.
 */
import type { FastifyInstance } from 'fastify';
import { type Member, roles } from '../../src/auth/members.js';
import { membersMax } from '../../src/constants.js';
import type { Role } from '../../src/model/model.js';
import { parseCredentialId } from '../../src/model/values.js';
import { requireOperator } from '../http/auth.js';
import { acknowledge } from '../http/command.js';
import { wireReply } from '../http/replies.js';
import { commandHeaders, commandReplySchema, credentialId, noQuery, nullable, object, reference, responses, str, uintNumber } from '../http/schemas.js';
import { type RouteContext, withView } from './context.js';

export const memberName = str('member name, 1-64 of [a-z0-9._-], unique among live members', { pattern: '^[a-z0-9._-]{1,64}$' });
export const memberRole = { enum: [...roles], description: 'auditor (operator reads), operator (also operator commands) or admin (also members and the approval policy)' };

const memberSchema = object(
  {
    credential: credentialId,
    name: memberName,
    role: memberRole,
    scheme: { enum: ['key', 'webauthn-es256', 'api-key'] },
    added_at: uintNumber('ms'),
    added_by: nullable(memberName),
    removed_at: nullable(uintNumber('ms')),
  },
  ['credential', 'name', 'role', 'scheme', 'added_at', 'added_by', 'removed_at'],
);

const memberView = (m: Member) => ({ credential: m.credential, name: m.name, role: m.role, scheme: m.scheme, added_at: m.addedAtMs, added_by: m.addedBy, removed_at: m.removedAtMs });

const replies = responses({ 200: commandReplySchema, 202: commandReplySchema });
const params = object({ credential: credentialId }, ['credential']);
const memberOfPath = (params: unknown) => parseCredentialId((params as { credential: string }).credential);

export function memberRoutes(app: FastifyInstance, { kernel }: RouteContext): void {
  app.get(
    '/v1/ops/members',
    {
      schema: {
        operationId: 'listMembers', summary: 'Members of the operator, removed ones too, in name order (auditor and up)',
        querystring: noQuery,
        response: responses({ 200: object({ items: { type: 'array', maxItems: membersMax, items: memberSchema } }, ['items']) }),
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'the members of the operator');
      const members = await withView(request, (view) => view.members());
      return wireReply(reply, { items: members.map(memberView) });
    },
  );

  app.post(
    '/v1/ops/members/:credential/role',
    {
      schema: {
        operationId: 'setMemberRole', summary: "Admin: change a member's role (the last live admin keeps it)",
        headers: commandHeaders, params, querystring: noQuery,
        body: object({ role: memberRole, reference }, ['role']),
        response: replies,
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'members of the operator');
      const role = (request.body as { role: Role }).role;
      return acknowledge(kernel, request, reply, { type: 'set_member_role', member: memberOfPath(request.params), role });
    },
  );

  app.post(
    '/v1/ops/members/:credential/remove',
    {
      schema: {
        operationId: 'removeMember', summary: 'Admin: remove a member; its key and sessions stop working at once (the last live admin stays)',
        headers: commandHeaders, params, querystring: noQuery,
        body: object({ reference }),
        response: replies,
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'members of the operator');
      return acknowledge(kernel, request, reply, { type: 'remove_member', member: memberOfPath(request.params) });
    },
  );
}
