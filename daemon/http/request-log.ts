/**
 * One log line per request, as it ends: method, path, status, refusal code, the
 * principal, the operation a command created or repeated (`operation`, `repeat`), how long its reads waited for a slot (`waitedMs`, when one did), and whether the reply was sent whole (Fastify's own two lines per request
 * are turned off). Nothing secret is in
 * it: no header is logged, and the path carries no token (bearers travel in
 * `authorization` only).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { loggedUrlLengthMax } from '../constants.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The code of the refusal this request was answered with, if any (set by sendRefusal). */
    refusalCode: string | null;
    /** The operation a command request created, or answered again as a repeat of its client key (set by noteCommand). */
    commandTaken: { operationReference: string; repeat: boolean } | null;
  }
}

/** The header a repeat's reply carries, so a client can say it replayed an earlier command (docs/daemon.md). */
export const replayHeader = 'ledger-replay';

/** Records which operation this command request created, or repeated: its log line names it, and a repeat's reply says so. */
export function noteCommand(request: FastifyRequest, operationReference: string, repeat: boolean): void {
  request.commandTaken = { operationReference, repeat };
}

/**
 * Logs each request as it ends, and tells `ended` (the metrics) too, from the one listener.
 * The hooks are callback-style, not async: a request then costs no promise per hook.
 */
export function logRequests(app: FastifyInstance, ended: (request: FastifyRequest, reply: FastifyReply) => void): void {
  app.decorateRequest('refusalCode', null);
  app.decorateRequest('readWaitedMs', null);
  app.decorateRequest('commandTaken', null);
  app.addHook('onSend', (request, reply, _payload, done) => {
    if (request.commandTaken?.repeat === true) void reply.header(replayHeader, 'true');
    done();
  });
  // On the response's 'close', which comes however it ends: finished, cut off by the client, or a hijacked event stream.
  app.addHook('onRequest', (request, reply, done) => {
    reply.raw.once('close', () => {
      ended(request, reply);
      logRequest(request, reply.raw.statusCode, reply.elapsedTime, reply.raw.writableFinished);
    });
    done();
  });
}

/** Levels at which a request's line is not written: it is not built either. */
const quietLevels: ReadonlySet<string> = new Set(['warn', 'error', 'fatal', 'silent']);

function logRequest(request: FastifyRequest, status: number, elapsedMs: number, finished: boolean): void {
  if (quietLevels.has(request.log.level)) return;
  request.log.info(
    {
      method: request.method,
      url: request.url.slice(0, loggedUrlLengthMax),
      status,
      error: request.refusalCode,
      principal: request.actor?.principal ?? null,
      ...(request.commandTaken === null ? {} : { operation: request.commandTaken.operationReference, ...(request.commandTaken.repeat ? { repeat: true } : {}) }),
      ms: Math.round(elapsedMs),
      // Present only when a read of this request waited its turn for a slot (daemon/snapshot-slots.ts).
      ...(request.readWaitedMs === null ? {} : { waitedMs: Math.round(request.readWaitedMs) }),
      // False when the connection closed before the whole reply was sent (a client gone, a stream ended).
      finished,
    },
    'request',
  );
}
