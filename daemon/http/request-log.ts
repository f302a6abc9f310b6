/**
 * One log line per request, as it ends: method, path, status, refusal code and the
 * principal (Fastify's own two lines per request are turned off). Nothing secret is in
 * it: no header is logged, and the path carries no token (bearers travel in
 * `authorization` only).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The code of the refusal this request was answered with, if any (set by sendRefusal). */
    refusalCode: string | null;
  }
}

/** Longest path (with its query) a log line quotes. */
const loggedUrlLengthMax = 256;

export function logRequests(app: FastifyInstance): void {
  app.decorateRequest('refusalCode', null);
  app.addHook('onResponse', async (request, reply) => logRequest(request, reply.statusCode, reply.elapsedTime));
}

/** The line of a request that ended; hijacked replies (event streams), which skip onResponse, call it themselves. */
export function logRequest(request: FastifyRequest, status: number, elapsedMs: number): void {
  request.log.info(
    {
      method: request.method,
      url: request.url.slice(0, loggedUrlLengthMax),
      status,
      error: request.refusalCode,
      principal: request.actor?.principal ?? null,
      ms: Math.round(elapsedMs),
    },
    'request',
  );
}
