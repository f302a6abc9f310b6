/**
 * Replies. Success bodies are the spec's shapes rendered by src/queries/views.ts and written
 * with `stringifyWire` (so `reference` goes out exactly as sent). Every refusal is
 * `{error, description}` with the status of CONTRACT 6: kernel refusals, schema
 * failures, body-parser and router errors and malformed HTTP alike. Nothing a client
 * sends is answered with a 500: ERR-Internal is left for bugs, and those are logged.
 */
import { type IncomingMessage, STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type Refusal, Refused, refusal } from '../../src/errors.js';
import { DamagedRecord } from '../../src/model/decode.js';
import { isStoreUnavailable } from '../../src/store/level.js';
import { isPostgresUnavailable } from '../../src/store/postgres.js';
import { type Wire, stringifyWire } from '../../src/queries/wire.js';
import { isLingering, lingerOnClose, lingerThenClose } from './linger.js';
import { oneLine } from '../../src/one-line.js';
import { httpStatus, retriable } from './status.js';
import { expectHeaderEchoLengthMax } from '../constants.js';

export const jsonType = 'application/json; charset=utf-8';

/** The body text of a success reply; sets the status and the JSON content type. */
export function wireReply(reply: FastifyReply, value: Wire, status = 200): string {
  reply.code(status).type(jsonType);
  return stringifyWire(value);
}

/**
 * Runs `answer` (a reply sent from a callback-style onRequest hook, or its error passed
 * on) once the HTTP parser has taken the whole request in: answered at once, inside the
 * parser's callback, a request without a body would not yet be `complete`, and the reply
 * would close the connection as if the body had not arrived (app.ts's onSend).
 */
export function answerLater(answer: () => void): void {
  queueMicrotask(answer);
}

export function refusalBody(r: Refusal): string {
  return JSON.stringify({ error: r.error, description: r.description });
}

export function sendRefusal(reply: FastifyReply, r: Refusal, retryAfterSeconds: number): FastifyReply {
  if (retriable(r.error)) reply.header('retry-after', String(retryAfterSeconds));
  reply.request.refusalCode = r.error;
  return reply.code(httpStatus(r.error)).type(jsonType).send(refusalBody(r));
}

const contexts: Record<string, string> = { querystring: 'query parameter', body: 'body member', params: 'path parameter', headers: 'header' };

/** One failure of a JSON Schema check, as Fastify and Ajv report it. */
export interface SchemaFailure {
  readonly keyword: string;
  readonly instancePath: string;
  readonly params: Record<string, unknown>;
  readonly message?: string | undefined;
}

/**
 * A schema failure as the spec's code. Spec 7: a missing bound of a bounded query
 * (`unboundedIfMissing`, for a query string) is ERR-QueryUnbounded; every other failure
 * (unknown parameter, wrong type, bad pattern) is ERR-MalformedCommand. `what` names the
 * part (`body member`) and `under` the path of the value checked within it (a batch item's body).
 */
export function schemaRefusal(first: SchemaFailure, what: string, under = '', unboundedIfMissing: readonly string[] = []): Refusal {
  // The member's full path, so a nested failure (destination.account) is told from a top-level one.
  // A member's name is the caller's (a record's key, an unknown member): kept on one line.
  const inner = oneLine(first.instancePath.replace(/^\//, '').replaceAll('/', '.'));
  const path = [under, inner].filter((p) => p !== '').join('.');
  const named = (name: string) => (path ? `${path}.${name}` : name);
  if (first.keyword === 'required') {
    const name = named(String(first.params.missingProperty));
    if (unboundedIfMissing.includes(name)) return refusal('ERR-QueryUnbounded', `${what} ${name} is required: without it the query is unbounded`);
    return refusal('ERR-MalformedCommand', `${what} ${name} is required`);
  }
  if (first.keyword === 'additionalProperties') return refusal('ERR-MalformedCommand', `unknown ${what} ${named(oneLine(String(first.params.additionalProperty)))}`);
  return refusal('ERR-MalformedCommand', `${what}${path ? ` ${path}` : ''} ${first.message ?? 'is invalid'}`);
}

function validationRefusal(error: FastifyError, request: FastifyRequest): Refusal {
  const context = error.validationContext ?? 'body';
  const unbounded = context === 'querystring' ? (request.routeOptions.config.unboundedIfMissing ?? []) : [];
  return schemaRefusal(error.validation![0]! as SchemaFailure, contexts[context] ?? context, '', unbounded);
}

const fastifyDescriptions: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'the body must be application/json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'the body is empty; send a JSON object',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body',
};

/** The refusal for any error reaching the handler, and whether it is a bug. */
export function refusalOf(error: FastifyError, request: FastifyRequest, bodyBytesMax: number): { refusal: Refusal; bug: boolean } {
  if (error instanceof Refused) return { refusal: error.refusal, bug: false };
  if (error.validation) return { refusal: validationRefusal(error, request), bug: false };
  // A store failing reads (full disk, I/O, reopening to recover; a database out of reach) is an operating error: retry shortly.
  if (isStoreUnavailable(error) || isPostgresUnavailable(error)) return { refusal: refusal('ERR-DecisionUnavailable', 'the store cannot be read right now'), bug: false };
  // A stored record that does not decode: the book's damage (or a bug's), told to the caller without the record, logged with it.
  if (error instanceof DamagedRecord) return { refusal: refusal('ERR-Internal', 'a record of the book this request reads is damaged; the operator is told (ledgerd check names it)'), bug: true };
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    // A route with its own body bound may name its own refusal (a batch too large is ERR-BatchTooLarge).
    const code = request.routeOptions.config.oversizedBodyRefusal ?? 'ERR-MalformedCommand';
    return { refusal: refusal(code, `the body is over ${request.routeOptions.bodyLimit ?? bodyBytesMax} bytes`), bug: false };
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return { refusal: refusal('ERR-MalformedCommand', fastifyDescriptions[error.code] ?? error.message), bug: false };
  }
  return { refusal: refusal('ERR-Internal'), bug: true };
}

/** Longest path parameter the router matches (Fastify's maxParamLength); longer ones are malformed (no id is that long). */
export const pathParamLengthMax = 128;

/**
 * Refusals Fastify's router makes before any route runs (its `frameworkErrors`): a path
 * parameter over the bound (Fastify's own answer is 414) or not valid percent-encoding.
 * Malformed input, so ERR-MalformedCommand (400) like every other.
 */
export function frameworkRefusal(error: FastifyError): Refusal {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return refusal('ERR-MalformedCommand', `a path parameter is over ${pathParamLengthMax} characters`);
  if (error.code === 'FST_ERR_BAD_URL') return refusal('ERR-MalformedCommand', 'the path is not valid percent-encoded UTF-8');
  return refusal('ERR-MalformedCommand', 'the request cannot be routed');
}

/**
 * Malformed HTTP that never becomes a request (bad request line, headers over the
 * bound, a request not received within requestTimeoutMs): answered on the socket, in
 * the same shape, where Node would answer 400, 431 or 408 with no body.
 */
export function clientErrorHandler(bounds: { headerBytesMax: number; requestTimeoutMs: number }) {
  return (error: NodeJS.ErrnoException, socket: Socket) => {
    // Already answered and draining: the rest of what the client sends may trip the parser again, and is ignored.
    if (isLingering(socket)) return;
    if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) {
      socket.destroy();
      return;
    }
    const description =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? `the request line and headers are over ${bounds.headerBytesMax} bytes`
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? `the request did not arrive whole within ${bounds.requestTimeoutMs} ms`
          : 'the request is not valid HTTP/1.1';
    // The client may still be sending what made the request malformed: linger, so it reads this reply and not a reset.
    socket.write(rawRefusal(refusal('ERR-MalformedCommand', description)));
    lingerThenClose(socket);
  };
}

/** A whole HTTP/1.1 response carrying a refusal, for answers written below Fastify; the connection closes. */
export function rawRefusal(r: Refusal): string {
  const body = refusalBody(r);
  const status = httpStatus(r.error);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: ${jsonType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/**
 * An `Expect` other than 100-continue: Node answers 417 with no body before any route
 * runs. An expectation this API cannot meet is malformed input.
 */
export function onUnmetExpectation(request: IncomingMessage, response: ServerResponse): void {
  const expect = String(request.headers.expect ?? '').slice(0, expectHeaderEchoLengthMax);
  const body = refusalBody(refusal('ERR-MalformedCommand', `unsupported Expect header ${JSON.stringify(expect)}; only 100-continue is understood`));
  response.shouldKeepAlive = false;
  lingerOnClose(request.socket);
  response.writeHead(400, { 'content-type': jsonType, 'content-length': Buffer.byteLength(body), connection: 'close' }).end(body);
}
