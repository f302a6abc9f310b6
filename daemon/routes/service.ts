/** GET /v1/health and GET /v1/openapi.json: served without a bearer, reveal no ledger fact. */
import type { FastifyInstance } from 'fastify';
import type { OpenApi } from '../openapi.js';
import { wireReply } from '../http/replies.js';
import { RawJson } from '../../src/queries/wire.js';
import { noQuery, object } from '../http/schemas.js';

export function serviceRoutes(app: FastifyInstance, openApi: OpenApi, version: string): void {
  app.get(
    '/v1/health',
    {
      config: { public: true },
      schema: { operationId: 'getHealth', summary: 'Liveness: {status: "ok"}', querystring: noQuery, response: { 200: object({ status: { enum: ['ok'] } }, ['status']) } },
    },
    async (_request, reply) => {
      return wireReply(reply, { status: 'ok' });
    },
  );

  let document: string | null = null;
  app.get(
    '/v1/openapi.json',
    { config: { public: true }, schema: { operationId: 'getOpenApi', summary: 'This API, as OpenAPI 3.1', querystring: noQuery, response: { 200: { type: 'object', description: 'an OpenAPI 3.1 document', additionalProperties: true } } } },
    async (_request, reply) => {
      document ??= JSON.stringify(openApi.document(version));
      return wireReply(reply, new RawJson(document));
    },
  );
}
