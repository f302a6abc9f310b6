/**
 * Bearer authentication (spec 5, CONTRACT 5): every route but the public ones takes
 * `Authorization: Bearer <token>`; a missing, unknown or expired token is 401
 * ERR-CredentialInvalid. The token is looked up by its hash only (credentials.ts
 * compares in constant time) and never logged.
 */
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../src/authority.js';
import { refuse } from '../../src/errors.js';
import type { Kernel } from '../../src/kernel.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Served without a bearer (health, OpenAPI): reveals no ledger fact. */
    public?: boolean;
    /** Query parameters whose absence makes the query unbounded (spec 7: ERR-QueryUnbounded). */
    unboundedIfMissing?: readonly string[];
  }
  interface FastifyRequest {
    actor: Actor | null;
  }
}

const bearerPattern = /^Bearer +([\x21-\x7e]+) *$/i;

export function authenticator(kernel: Kernel) {
  return async (request: FastifyRequest): Promise<void> => {
    if (request.is404 || request.routeOptions.config.public) return;
    const match = bearerPattern.exec(request.headers.authorization ?? '');
    const caller = match ? await kernel.authenticate(match[1]!) : null;
    if (caller === null) refuse('ERR-CredentialInvalid', 'the bearer token is missing, unknown or expired');
    request.actor = { principal: caller.principal, credential: caller.credential, onBehalfOf: null };
  };
}

/** The authenticated caller of a protected route (the hook above ran). */
export function callerOf(request: FastifyRequest): Actor {
  if (request.actor === null) throw new Error('protected route reached without an authenticated caller');
  return request.actor;
}
