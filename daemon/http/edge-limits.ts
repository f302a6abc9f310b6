/**
 * Floods that cost only their sender (docs/daemon.md, "Floods"). Refused at the edge,
 * before a body is read or parsed, each refusal charged to whoever caused it:
 *
 * - connections: at most `connectionsPerSourceMax` open from one address; one more has
 *   its first request refused as soon as its headers are read, and is closed;
 * - before authentication, at most `requestsPerSourcePerSecond` from one address;
 * - after it, at most `requestsPerPrincipalPerSecond` from one principal;
 * - a principal refused ERR-DecisionUnavailable (its backlog share, its read queue, a rate
 *   above) `floodRefusalsPerSecond` times in a second is resending through its refusals,
 *   ignoring Retry-After: until its last Retry-After has passed at most
 *   `overloadedRequestsPerSecond` of its requests go further, the rest are refused here, at
 *   the cost of a header lookup, instead of going through parsing, validation and the
 *   kernel to be refused again. Such a refusal is held for its Retry-After, and up to as
 *   long again at random, before it is sent (at most half of `requestTimeoutMs`): a client
 *   resending at once is answered no more often than it was told it may retry, so its
 *   connections cost the daemon a timer each instead of a reply written as fast as it can
 *   send (the cost that, answered at once, delayed everyone else's requests behind its own);
 *   the random part spreads a thousand connections' answers, and so their next requests,
 *   over time instead of one burst a Retry-After that others' requests would wait behind.
 *   A client that honours Retry-After never meets this.
 *
 * All refusals are 503 ERR-DecisionUnavailable with Retry-After (CONTRACT 6).
 */
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { refusal } from '../../src/errors.js';
import type { Config } from '../config.js';
import { edgeKeysMax, floodRefusalsPerSecond, overloadedRequestsPerSecond } from '../constants.js';
import { answerLater, sendRefusal } from './replies.js';

/** A token bucket per key (one second's worth of burst), at most `edgeKeysMax` keys: the least recently used goes first. */
class Buckets {
  private readonly buckets = new Map<string, { tokens: number; atMs: number }>();

  constructor(private readonly perSecond: number) {}

  /** Takes one token for `key`; false when it has none. */
  take(key: string, nowMs: number): boolean {
    const bucket = this.buckets.get(key) ?? { tokens: this.perSecond, atMs: nowMs };
    this.buckets.delete(key);
    bucket.tokens = Math.min(this.perSecond, bucket.tokens + ((nowMs - bucket.atMs) * this.perSecond) / 1000);
    bucket.atMs = nowMs;
    const granted = bucket.tokens >= 1;
    if (granted) bucket.tokens -= 1;
    this.buckets.set(key, bucket);
    if (this.buckets.size > edgeKeysMax) this.buckets.delete(this.buckets.keys().next().value!);
    return granted;
  }
}

/**
 * Principals flooding through their refusals: one refused for load `floodRefusalsPerSecond`
 * times within a second is held to the trickle until its last Retry-After has passed.
 * Bounded like the buckets.
 */
class Flooders {
  private readonly state = new Map<string, { sinceMs: number; refusals: number; untilMs: number }>();

  refused(key: string, nowMs: number, retryAfterMs: number): void {
    const s = this.state.get(key) ?? { sinceMs: nowMs, refusals: 0, untilMs: 0 };
    this.state.delete(key);
    if (nowMs - s.sinceMs >= 1_000) {
      s.sinceMs = nowMs;
      s.refusals = 0;
    }
    s.refusals += 1;
    if (s.refusals >= floodRefusalsPerSecond) s.untilMs = nowMs + retryAfterMs;
    this.state.set(key, s);
    if (this.state.size > edgeKeysMax) this.state.delete(this.state.keys().next().value!);
  }

  flooding(key: string, nowMs: number): boolean {
    const s = this.state.get(key);
    return s !== undefined && nowMs < s.untilMs;
  }
}

type Limits = Pick<Config, 'connectionsPerSourceMax' | 'requestsPerSourcePerSecond' | 'requestsPerPrincipalPerSecond' | 'retryAfterSeconds' | 'requestTimeoutMs'>;

/** Routes that hold a slot of their own for as long as they stream (events, backups). */
const streamRoutes: ReadonlySet<string> = new Set(['/v1/events', '/v1/ops/backup']);

/** Callback-style (no promise per request): calls `done` to go on, or answers the request and does not. */
type Hook = (request: FastifyRequest, reply: FastifyReply, done: () => void) => void;

/** The edge's hooks: one to run before authentication (per address), one after it (per principal). */
export function edgeLimits(app: FastifyInstance, limits: Limits, clock: () => number): { beforeAuthentication: Hook; afterAuthentication: Hook } {
  const overConnections = limitConnections(app, limits);
  const sources = new Buckets(limits.requestsPerSourcePerSecond);
  const principals = new Buckets(limits.requestsPerPrincipalPerSecond);
  const overloaded = new Buckets(overloadedRequestsPerSecond);
  const flooders = new Flooders();
  // Refused because they came too soon: these do not start a new wait (a client's requests already under way
  // when it was first refused must not push its wait on and on).
  const tooSoon = new WeakSet<FastifyRequest>();
  const tooSoonHoldMs = () => Math.min(limits.retryAfterSeconds * 1000 * (1 + Math.random()), Math.floor(limits.requestTimeoutMs / 2));
  // A stop answers the held refusals at once rather than waiting out their holds.
  const stopping = new AbortController();
  app.addHook('preClose', async () => stopping.abort());
  const refuseHere = (reply: FastifyReply, why: string) =>
    answerLater(() => sendRefusal(reply, refusal('ERR-DecisionUnavailable', `${why}; retry after ${limits.retryAfterSeconds} s`), limits.retryAfterSeconds));

  // Every other overload refusal of a principal, wherever it was decided, starts its wait; a stream or a backup
  // refused for want of a slot of its own is not load, and does not.
  app.addHook('onSend', (request, _reply, _payload, done) => {
    if (request.refusalCode === 'ERR-DecisionUnavailable' && request.actor !== null && !tooSoon.has(request) && !streamRoutes.has(request.routeOptions.url ?? '')) {
      flooders.refused(request.actor.principal, clock(), limits.retryAfterSeconds * 1000);
    }
    done();
  });

  return {
    beforeAuthentication: (request, reply, done) => {
      if (overConnections(request.socket)) {
        reply.header('connection', 'close');
        refuseHere(reply, `more than ${limits.connectionsPerSourceMax} connections from this address`);
      } else if (!sources.take(request.ip, clock())) refuseHere(reply, `more than ${limits.requestsPerSourcePerSecond} requests a second from this address`);
      else done();
    },
    afterAuthentication: (request, reply, done) => {
      if (request.actor === null) return done();
      const { principal } = request.actor;
      const nowMs = clock();
      if (flooders.flooding(principal, nowMs) && !overloaded.take(principal, nowMs)) {
        tooSoon.add(request);
        void sleep(tooSoonHoldMs(), undefined, { signal: stopping.signal })
          .catch(() => {})
          .then(() => {
            refuseHere(reply, 'the caller was refused for load and told to retry later; it is too soon');
          });
      } else if (!principals.take(principal, nowMs)) refuseHere(reply, `more than ${limits.requestsPerPrincipalPerSecond} requests a second from this principal`);
      else done();
    },
  };
}

/**
 * Counts connections per address; those past `connectionsPerSourceMax` are marked, and
 * their first request is refused as soon as its headers are read, the connection closed.
 */
function limitConnections(app: FastifyInstance, limits: Limits): (socket: Socket) => boolean {
  const open = new Map<string, number>();
  const overLimit = new WeakSet<Socket>();
  app.server.on('connection', (socket: Socket) => {
    const source = socket.remoteAddress ?? '';
    const count = open.get(source) ?? 0;
    if (count >= limits.connectionsPerSourceMax) overLimit.add(socket);
    open.set(source, count + 1);
    socket.once('close', () => {
      const left = open.get(source)! - 1;
      if (left === 0) open.delete(source);
      else open.set(source, left);
    });
  });
  return (socket) => overLimit.has(socket);
}
