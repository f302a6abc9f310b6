/** Integrating parties (spec endpoint 8, CONTRACT 5): registered and listed by the operator. */
import type { FastifyInstance } from 'fastify';
import { integratingPartiesMax, partyPrincipalsMax } from '../../src/constants.js';
import type { Party } from '../../src/decide/decide-parties.js';
import { refuse } from '../../src/errors.js';
import { parseIdentityId } from '../../src/model/values.js';
import { requireOperator } from '../http/auth.js';
import { acknowledge } from '../http/command.js';
import { wireReply } from '../http/replies.js';
import { commandHeaders, commandReplySchema, identityId, noQuery, object, partyId, reference, responses, uintNumber } from '../http/schemas.js';
import { type RouteContext, withView } from './context.js';

const partySchema = object(
  {
    party: partyId,
    principals: { type: 'array', items: object({ principal: identityId, tied_at: uintNumber('ms') }, ['principal', 'tied_at']) },
    registered_at: uintNumber('ms'),
  },
  ['party', 'principals', 'registered_at'],
);

const partyView = (p: Party) => ({ party: p.id, principals: p.principals.map((x) => ({ principal: x.principal, tied_at: x.tiedAtMs })), registered_at: p.registeredAtMs });

export function partyRoutes(app: FastifyInstance, { kernel }: RouteContext): void {
  app.get(
    '/v1/ops/integrating-parties',
    {
      schema: {
        operationId: 'listIntegratingParties', summary: 'Operator: integrating parties and their principals, in identifier order',
        querystring: noQuery,
        response: responses({ 200: object({ items: { type: 'array', maxItems: integratingPartiesMax, items: partySchema } }, ['items']) }),
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'the integrating parties');
      const parties = await withView(request, (view) => view.parties());
      return wireReply(reply, { items: parties.map(partyView) });
    },
  );

  app.post(
    '/v1/ops/integrating-parties',
    {
      schema: {
        operationId: 'registerIntegratingParty', summary: 'Operator: register an integrating party tying one or more principals',
        headers: commandHeaders,
        querystring: noQuery,
        body: object({ principals: { type: 'array', minItems: 1, maxItems: partyPrincipalsMax, items: identityId }, reference }, ['principals']),
        response: responses({ 200: commandReplySchema, 202: commandReplySchema }),
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'registering integrating parties');
      const principals = (request.body as { principals: unknown[] }).principals.map((p, i) => parseIdentityId(p, `principals[${i}]`));
      if (new Set(principals).size !== principals.length) refuse('ERR-MalformedCommand', 'principals names an identity twice');
      return acknowledge(kernel, request, reply, { type: 'register_party', principals });
    },
  );
}
