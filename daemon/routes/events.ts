/** GET /v1/events (CONTRACT 4): the server-sent-event stream, resumable with `?after=`. */
import type { FastifyInstance } from 'fastify';
import { refuse } from '../../src/errors.js';
import type { Kernel } from '../../src/book/kernel.js';
import { parseUintText } from '../../src/model/values.js';
import type { EventHub } from '../events.js';
import { callerOf } from '../http/auth.js';
import { type Query, uintQuery } from '../http/query.js';
import { digitsText, object, responses, str } from '../http/schemas.js';

const eventStreamDescription =
  'server-sent events, each `id: <event sequence number>`, `event: operation` and `data: <the operation view as JSON>`; comment lines keep the stream alive';

/** `?after=` first, else the `Last-Event-ID` an EventSource sends when it reconnects. */
function afterOf(query: Query, lastEventId: string | string[] | undefined): number | null {
  const fromQuery = uintQuery(query, 'after');
  if (fromQuery !== null || typeof lastEventId !== 'string') return fromQuery;
  const fromHeader = parseUintText(lastEventId);
  if (fromHeader === null) refuse('ERR-MalformedCommand', 'Last-Event-ID must be an event sequence number');
  return fromHeader;
}

export function eventRoutes(app: FastifyInstance, kernel: Kernel, hub: EventHub): void {
  app.get(
    '/v1/events',
    {
      schema: {
        operationId: 'streamEvents', summary: 'Server-sent events: `operation` events (the operation view) the caller may see',
        querystring: object({ after: digitsText('resume after this event sequence number') }),
        // No pattern: the header is ignored when `after` is sent, and refused (ERR-MalformedCommand) only when it is used.
        headers: { type: 'object', properties: { 'last-event-id': str('the event sequence number an EventSource sends when it reconnects; `after` wins over it') } },
        response: responses({ 200: { description: eventStreamDescription, content: { 'text/event-stream': { schema: { type: 'string' } } } } }),
      },
    },
    async (request, reply) => {
      const afterSeq = afterOf(request.query as Query, request.headers['last-event-id']);
      // Every event a client saw is at or before the head: a later one names another book.
      const latestSeq = kernel.currentHead.eventSeq;
      if (afterSeq !== null && afterSeq > latestSeq) refuse('ERR-MalformedCommand', `after ${afterSeq} is beyond the latest event, ${latestSeq}`);
      const caller = callerOf(request);
      const refusal = hub.refusal(caller);
      if (refusal !== null) refuse('ERR-DecisionUnavailable', refusal);
      reply.hijack();
      try {
        await hub.open(reply.raw, caller, afterSeq, request.log);
      } catch (error) {
        // The stream has started: nothing can be answered any more, so end it; the client resumes with ?after=.
        request.log.warn({ err: error }, 'event stream ended by an error');
        reply.raw.destroy();
      }
    },
  );
}
