/**
 * `buildApp` makes the /v1 HTTP API over a kernel without listening (tests may
 * inject; the daemon listens). One body parser, one error handler, one not-found
 * handler: every refusal is `{error, description}` with the status of CONTRACT 6.
 */
import { proposalRoutes } from './routes/proposals.js';
import { ApprovalGate, DispatchChecked } from './http/approvals.js';
import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import { refusal } from '../src/errors.js';
import { checkpointView } from '../src/checkpoints/views.js';
import { stringifyWire } from '../src/queries/wire.js';
import type { Kernel } from '../src/book/kernel.js';
import type { Config } from './config.js';
import type { LogSink } from './log.js';
import { EventHub } from './events.js';
import { authenticator } from './http/auth.js';
import { CursorSeal } from './http/cursors.js';
import { lingerOnClose } from './http/linger.js';
import { shutdownConnections } from './http/shutdown-connections.js';
import { edgeLimits } from './http/edge-limits.js';
import { checkRouteRoles } from './http/roles.js';
import { logRequests } from './http/request-log.js';
import { rememberRoutes, routeOf } from './http/route-of.js';
import { answerLater, clientErrorHandler, frameworkRefusal, onUnmetExpectation, pathParamLengthMax, refusalOf, sendRefusal } from './http/replies.js';
import { Metrics } from './metrics.js';
import { SnapshotSlots, readSlotBounds } from './snapshot-slots.js';
import type { Settlement } from './settlement.js';
import { OpenApi } from './openapi.js';
import { custodyRoutes } from './routes/custody.js';
import { accountRoutes } from './routes/accounts.js';
import { authRoutes } from './routes/auth.js';
import { backupRoutes } from './routes/backup.js';
import { batchRoutes } from './routes/batches.js';
import { bookRoutes } from './routes/book.js';
import type { RouteContext } from './routes/context.js';
import { checkpointRoutes } from './routes/checkpoints.js';
import { credentialRoutes } from './routes/credentials.js';
import { disclosureRoutes } from './routes/disclosures.js';
import { eventRoutes } from './routes/events.js';
import { grantRoutes } from './routes/grants.js';
import { layerRoutes } from './routes/layer.js';
import { settlementRoutes } from './routes/settlement.js';
import { metricsRoutes } from './routes/metrics.js';
import { operationRoutes } from './routes/operations.js';
import { partyRoutes } from './routes/parties.js';
import { memberRoutes } from './routes/members.js';
import { opsListingRoutes } from './routes/ops-listings.js';
import { auditRoutes } from './routes/audit.js';
import { checkRoutes } from './routes/check.js';
import { reservationRoutes } from './routes/reservations.js';
import { serviceRoutes } from './routes/service.js';
import { statementRoutes } from './routes/statements.js';
import { transferRoutes } from './routes/transfers.js';
import { requestTimeoutCheckMs, unroutedPathEchoLengthMax } from './constants.js';

export interface AppOptions {
  readonly kernel: Kernel;
  readonly config: Config;
  readonly clock: () => number;
  /** The settlement layer and what rests on it. */
  readonly settlement: Settlement;
  /** Fastify's logger options; false in tests that need quiet. */
  readonly logger: FastifyServerOptions['logger'];
  readonly version: string;
  /** The metrics GET /metrics serves; made here when the caller has none (its store writes are then not timed). */
  readonly metrics?: Metrics;
  /** The key listing cursors are sealed with (daemon/http/cursors.ts). */
  readonly cursorKey: Uint8Array;
}

/** Logger options: the daemon's level, secrets redacted, to the log's sink on stderr (daemon/log.ts; stdout carries the readiness line). */
export function loggerOptions(config: Config, sink: LogSink): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'], censor: '[redacted]' },
    stream: sink,
  };
}

/** Whether a request announces a body (RFC 9112 6.3): one without is whole once its headers are read. */
function carriesBody(raw: IncomingMessage): boolean {
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function buildApp(options: AppOptions): FastifyInstance {
  const { kernel, config } = options;
  const app = Fastify({
    logger: options.logger,
    // One line per request instead, with its refusal code and principal (http/request-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyBytesMax,
    // Given to Node at creation: its headers timeout (60 s) is fixed then and caps any shorter request timeout set later,
    // and it checks for expired requests only every connectionsCheckingInterval (30 s by default).
    http: {
      maxHeaderSize: config.headerBytesMax,
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: requestTimeoutCheckMs,
    },
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // Draining is answered by our own hook, in the refusal shape.
    return503OnClosing: false,
    exposeHeadRoutes: false,
    clientErrorHandler: clientErrorHandler(config),
    // Refusals of the router itself (a path parameter too long, bad percent-encoding) in the refusal shape.
    routerOptions: { maxParamLength: pathParamLengthMax },
    frameworkErrors: (error, _request, reply) => sendRefusal(reply.header('x-request-id', reply.request.id), frameworkRefusal(error), config.retryAfterSeconds),
    // allowUnionTypes: some fields are one of several JSON types (a grant subject is an object or "delegated_accounts").
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false, allowUnionTypes: true } },
  });
  app.server.on('checkExpectation', onUnmetExpectation);
  app.decorateRequest('actor', null);
  app.decorateRequest('bearer', null);
  app.decorateRequest('member', null);
  app.decorateRequest('dispatch', null);
  app.decorateRequest('rawBody', null);
  rememberRoutes(app);
  const metrics = options.metrics ?? new Metrics(options.version);
  const approvals = new ApprovalGate(kernel);
  app.decorate('approvals', approvals);
  app.addHook('onClose', async () => approvals.close());
  app.decorate('snapshots', new SnapshotSlots(kernel, readSlotBounds(config), metrics.readSlots));
  // Every request counted by its route's pattern as it ends, however it ends, when it is logged.
  logRequests(app, (request, reply) => metrics.observeRequest(request.method, request.is404 ? null : (routeOf(request).url ?? null), reply.raw.statusCode, reply.elapsedTime / 1000));

  const openApi = new OpenApi();
  app.addHook('onRoute', (route) => openApi.collect(route));
  checkRouteRoles(app);

  // One parser: JSON objects only, kept as text too for the raw `reference`.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    try {
      const text = body as string;
      const value: unknown = JSON.parse(text);
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('the body must be a JSON object');
      request.rawBody = text;
      done(null, value);
    } catch (error) {
      done(Object.assign(new Error(`the body is not a JSON object: ${(error as Error).message}`), { statusCode: 400 }), undefined);
    }
  });

  let draining = false;
  const connections = shutdownConnections(app.server);
  // The per-request hooks are callback-style: no promise per hook per request.
  app.addHook('onRequest', (_request, reply, done) => {
    if (draining) answerLater(() => sendRefusal(reply, refusal('ERR-DecisionUnavailable', 'the service is shutting down; retry with the same client key'), config.retryAfterSeconds));
    else done();
  });
  const edge = edgeLimits(app, config, options.clock);
  app.addHook('onRequest', edge.beforeAuthentication);
  const auth = authenticator(kernel, { cacheMs: config.authCacheMs, clock: options.clock });
  app.addHook('onRequest', auth.authenticate);
  app.addHook('onClose', async () => auth.close());
  app.addHook('onRequest', edge.afterAuthentication);
  app.addHook('onSend', (request, reply, _payload, done) => {
    reply.header('x-request-id', request.id);
    // Requests in flight when draining began close their connection as they finish,
    // so shutdown does not wait for keep-alive timeouts.
    if (draining) reply.header('connection', 'close');
    // Answered before its body arrived (a refusal from a hook): the rest of the body is not read, the connection closes, lingering.
    // A request without a body is whole once its headers are (answered within the parser's callback, it is not yet `complete`).
    if (!request.raw.complete && carriesBody(request.raw)) {
      reply.header('connection', 'close');
      lingerOnClose(request.raw.socket);
    }
    done();
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A proposal's request passed its route's checks (http/approvals.ts): nothing is taken.
    if (error instanceof DispatchChecked) return reply.code(204).send();
    const { refusal: r, bug } = refusalOf(error, request, config.bodyBytesMax);
    if (bug) request.log.error({ err: error }, 'unexpected error');
    return sendRefusal(reply, r, config.retryAfterSeconds);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!.slice(0, unroutedPathEchoLengthMax);
    return sendRefusal(reply, refusal('ERR-MalformedCommand', `no route ${request.method} ${path}`), config.retryAfterSeconds);
  });

  const events = new EventHub(kernel, {
    connectionsMax: config.sseConnectionsMax,
    connectionsPerPrincipalMax: config.sseConnectionsPerPrincipalMax,
    operatorConnectionsReserved: config.sseOperatorConnectionsReserved,
    bufferedBytesMax: config.sseBufferedBytesMax,
    bufferedBytesTotalMax: config.sseBufferedBytesTotalMax,
    replayPageEvents: config.sseReplayPageEvents,
    heartbeatMs: config.sseHeartbeatMs,
  });
  app.addHook('preClose', async () => {
    draining = true;
    events.closeAll();
    connections.close();
  });

  const context: RouteContext = { kernel, config, clock: options.clock, settlement: options.settlement, cursors: new CursorSeal(options.cursorKey) };
  serviceRoutes(app, openApi, options.version);
  transferRoutes(app, context);
  reservationRoutes(app, context);
  batchRoutes(app, context);
  accountRoutes(app, context);
  custodyRoutes(app, context);
  statementRoutes(app, context);
  bookRoutes(app, context);
  operationRoutes(app, context);
  authRoutes(app, context);
  credentialRoutes(app, context);
  grantRoutes(app, context);
  partyRoutes(app, context);
  memberRoutes(app, context);
  auditRoutes(app, context);
  opsListingRoutes(app, context);
  checkRoutes(app, context);
  proposalRoutes(app, context);
  backupRoutes(app, context);
  layerRoutes(app, context);
  checkpointRoutes(app, context);
  disclosureRoutes(app, context);
  settlementRoutes(app, context);
  eventRoutes(app, kernel, events);

  // Checkpoints are for any authenticated caller: each change goes to every stream.
  const offCheckpoints = options.settlement.checkpoints.onChange((changed) => {
    for (const checkpoint of changed) events.broadcast('checkpoint', stringifyWire(checkpointView(checkpoint)));
  });
  metrics.attach({ backlog: () => kernel.backlog, operatorBacklog: () => kernel.backlogOf(kernel.principals.operator), streams: () => events.streamCount });
  const offDecisions = kernel.onDecision(metrics.observeDecision);
  // Decisions at debug: which operation, its command type and where it went.
  const offDebug = kernel.onDecision(({ seq, operation }) => {
    if (app.log.level === 'debug' || app.log.level === 'trace') app.log.debug({ seq, operation: operation.ref, command: operation.command.type, state: operation.state, error: operation.error?.error ?? null }, 'decision');
  });
  app.addHook('onClose', async () => {
    offDecisions();
    offDebug();
    offCheckpoints();
  });
  metricsRoutes(app, context, metrics);
  return app;
}
