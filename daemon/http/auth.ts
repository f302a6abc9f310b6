/**
 * Bearer authentication (spec 5, CONTRACT 5): every route but the public ones takes
 * `Authorization: Bearer <token>`; a missing, unknown or expired token is 401
 * ERR-CredentialInvalid. The token is looked up by its hash only (credentials.ts
 * compares in constant time) and never logged.
 *
 * A successful lookup is remembered, by the token's hash, for `authCacheMs` (a store
 * read per request is the largest cost of a small command): a revoked token may keep
 * working that long. An expired session is refused at once, cached or not.
 */
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../src/auth/authority.js';
import type { Scheme } from '../../src/model/model.js';
import { LruCache } from '../../src/book/cache.js';
import { type ErrorCode, refuse } from '../../src/errors.js';
import type { Kernel } from '../../src/book/kernel.js';
import { rememberedTokensMax } from '../constants.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Served without a bearer (health, OpenAPI): reveals no ledger fact. */
    public?: boolean;
    /** Query parameters whose absence makes the query unbounded (spec 7: ERR-QueryUnbounded). */
    unboundedIfMissing?: readonly string[];
    /** The refusal of a body over the route's bound, when not ERR-MalformedCommand. */
    oversizedBodyRefusal?: ErrorCode;
  }
  interface FastifyRequest {
    actor: Actor | null;
    /** What the bearer is (GET /v1/whoami): its scheme and, for a session, when it expires. */
    bearer: Bearer | null;
  }
}

export interface Bearer {
  readonly scheme: Scheme;
  readonly expiresAtMs: number | null;
}

const bearerPattern = /^Bearer +([\x21-\x7e]+) *$/i;

interface Remembered {
  readonly actor: Actor;
  readonly bearer: Bearer;
  readonly rememberedUntilMs: number;
}

export function authenticator(kernel: Kernel, options: { cacheMs: number; clock: () => number }) {
  const remembered = new LruCache<Remembered>(rememberedTokensMax);
  const lookup = async (token: string): Promise<Remembered | null> => {
    const nowMs = options.clock();
    const hash = createHash('sha256').update(token).digest('hex');
    const known = remembered.get(hash);
    if (known !== undefined && nowMs < known.rememberedUntilMs) return known.bearer.expiresAtMs !== null && nowMs >= known.bearer.expiresAtMs ? null : known;
    const caller = await kernel.authenticate(token);
    if (caller === null) return null;
    // The scope goes with the caller: a scoped credential reaches only its accounts (spec 5.5).
    const found: Remembered = {
      actor: { principal: caller.principal, credential: caller.credential, onBehalfOf: null, scope: caller.scope ?? null },
      bearer: { scheme: caller.scheme, expiresAtMs: caller.expiresAtMs },
      rememberedUntilMs: nowMs + options.cacheMs,
    };
    if (options.cacheMs > 0) remembered.set(hash, found);
    return found;
  };
  return async (request: FastifyRequest): Promise<void> => {
    if (request.is404 || request.routeOptions.config.public) return;
    const match = bearerPattern.exec(request.headers.authorization ?? '');
    const found = match ? await lookup(match[1]!) : null;
    if (found === null) refuse('ERR-CredentialInvalid', 'the bearer token is missing, unknown or expired');
    request.actor = found.actor;
    request.bearer = found.bearer;
  };
}

/** Refuses a caller that is not the operator (the /v1/ops routes). */
export function requireOperator(request: FastifyRequest, kernel: Kernel, what: string): void {
  if (callerOf(request).principal !== kernel.principals.operator) refuse('ERR-NotAuthorised', `the initiating principal holds no authority that covers ${what} (operator only)`);
}

/** The authenticated caller of a protected route (the hook above ran). */
export function callerOf(request: FastifyRequest): Actor {
  if (request.actor === null) throw new Error('protected route reached without an authenticated caller');
  return request.actor;
}
