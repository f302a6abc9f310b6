/**
 * One log line per request, as it ends: method, path, status, refusal code, the
 * principal, how long its reads waited for a slot (`waitedMs`, when one did), and whether the reply was sent whole (Fastify's own two lines per request
 * are turned off). Nothing secret is in
 * it: no header is logged, and the path carries no token (bearers travel in
 * `authorization` only).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { loggedUrlLengthMax } from '../constants.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The code of the refusal this request was answered with, if any (set by sendRefusal). */
    refusalCode: string | null;
  }
}

export function logRequests(app: FastifyInstance): void {
  app.decorateRequest('refusalCode', null);
  app.decorateRequest('readWaitedMs', null);
  // On the response's 'close', which comes however it ends: finished, cut off by the client, or a hijacked event stream.
  app.addHook('onRequest', async (request, reply) => {
    reply.raw.once('close', () => logRequest(request, reply.raw.statusCode, reply.elapsedTime, reply.raw.writableFinished));
  });
}

function logRequest(request: FastifyRequest, status: number, elapsedMs: number, finished: boolean): void {
  request.log.info(
    {
      method: request.method,
      url: request.url.slice(0, loggedUrlLengthMax),
      status,
      error: request.refusalCode,
      principal: request.actor?.principal ?? null,
      ms: Math.round(elapsedMs),
      // Present only when a read of this request waited its turn for a slot (daemon/snapshot-slots.ts).
      ...(request.readWaitedMs === null ? {} : { waitedMs: Math.round(request.readWaitedMs) }),
      // False when the connection closed before the whole reply was sent (a client gone, a stream ended).
      finished,
    },
    'request',
  );
}
