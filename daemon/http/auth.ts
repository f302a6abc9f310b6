/**
 * Bearer authentication (spec 5, CONTRACT 5): every route but the public ones takes
 * `Authorization: Bearer <token>`; a missing, unknown or expired token is 401
 * ERR-CredentialInvalid. The token is looked up by its hash only (credentials.ts
 * compares in constant time) and never logged.
 *
 * A successful lookup is remembered, by the token's hash, for `authCacheMs` (a store
 * read per request is the largest cost of a small command), and lookups of one token
 * under way at once are one read: a flood of one bearer costs one read per
 * `authCacheMs`. A decision that may change credentials forgets them all at once; an
 * expired session is refused at once, cached or not.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../src/auth/authority.js';
import type { Scheme } from '../../src/model/model.js';
import { LruCache } from '../../src/book/cache.js';
import { type ErrorCode, refuse } from '../../src/errors.js';
import type { Kernel } from '../../src/book/kernel.js';
import { tokenTextLengthMax } from '../../src/auth/constants.js';
import { rememberedTokensMax } from '../constants.js';
import { withSourceSlot } from '../routes/context.js';
import type { Role } from '../../src/model/model.js';
import { requireRole } from './roles.js';
import { sha256Hex } from '../../src/sha256.js';
import { answerLater } from './replies.js';
import { routeOf } from './route-of.js';

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
    /** The operator's member the bearer is (CONTRACT 13), with its role as of authentication; null for any other caller. */
    member: MemberCaller | null;
  }
}

export interface MemberCaller {
  readonly name: string;
  readonly role: Role;
}

export interface Bearer {
  readonly scheme: Scheme;
  readonly expiresAtMs: number | null;
}

const bearerPattern = /^Bearer +([\x21-\x7e]+) *$/i;

interface Remembered {
  readonly actor: Actor;
  readonly bearer: Bearer;
  readonly member: MemberCaller | null;
  readonly rememberedUntilMs: number;
}

/**
 * Commands whose decision cannot change what a bearer token authenticates (money,
 * grants, accounts, assets, settlement). Any other decided command (a new kind among
 * them, and every change of the operator's members) forgets every remembered token at
 * once, so a credential revoked or a member removed or demoted stops working with the
 * decision that did it, not `authCacheMs` later.
 */
const leavesTokensAlone: ReadonlySet<string> = new Set([
  'transfer', 'reserve', 'capture', 'release', 'withdraw', 'settle', 'observe', 'open_account', 'issue_grant', 'revoke_grant',
  'register_party', 'freeze_account', 'unfreeze_account', 'close_account', 'register_asset', 'bind_asset', 'deprecate_asset',
  'open_custody_change', 'cancel_custody_change',
]);

export function authenticator(kernel: Kernel, options: { cacheMs: number; clock: () => number }) {
  const remembered = new LruCache<Remembered>(rememberedTokensMax);
  // One store read per token at a time: a flood of one bearer waits on the lookup already under way.
  const underWay = new Map<string, Promise<Remembered | null>>();
  // Bumped when tokens are forgotten: a lookup begun before is answered but not remembered.
  let generation = 0;
  const off = kernel.onDecision(({ operation }) => {
    if (leavesTokensAlone.has(operation.command.type)) return;
    generation += 1;
    remembered.clear();
    underWay.clear();
  });
  const read = async (token: string, hash: string, request: FastifyRequest): Promise<Remembered | null> => {
    const begun = generation;
    const nowMs = options.clock();
    // A read of the store before the caller is known: charged to the source address's slots.
    const caller = await withSourceSlot(request, () => kernel.authenticate(token));
    if (caller === null) return null;
    // An operator credential works only while it is a live member (CONTRACT 13); its role goes with the request.
    const member = caller.principal === kernel.principals.operator ? await withSourceSlot(request, () => kernel.member(caller.credential)) : null;
    if (member !== null && (member === undefined || member.removedAtMs !== null)) return null;
    // The scope goes with the caller: a scoped credential reaches only its accounts (spec 5.5).
    const found: Remembered = {
      actor: { principal: caller.principal, credential: caller.credential, onBehalfOf: null, scope: caller.scope ?? null },
      bearer: { scheme: caller.scheme, expiresAtMs: caller.expiresAtMs },
      member: member === null ? null : { name: member.name, role: member.role },
      rememberedUntilMs: nowMs + options.cacheMs,
    };
    if (options.cacheMs > 0 && begun === generation) remembered.set(hash, found);
    return found;
  };
  /** The remembered caller (null: refused) at once when the token is known, else a promise of it. */
  const lookup = (token: string, request: FastifyRequest): Remembered | null | Promise<Remembered | null> => {
    // Bounded before hashing, as the store's lookup is: no caller makes us hash a long header.
    if (token.length > tokenTextLengthMax) return null;
    const nowMs = options.clock();
    const hash = sha256Hex(token);
    const known = remembered.get(hash);
    if (known !== undefined && nowMs < known.rememberedUntilMs) return known.bearer.expiresAtMs !== null && nowMs >= known.bearer.expiresAtMs ? null : known;
    const pending = underWay.get(hash);
    if (pending !== undefined) return pending;
    const reading = read(token, hash, request).finally(() => {
      if (underWay.get(hash) === reading) underWay.delete(hash);
    });
    underWay.set(hash, reading);
    return reading;
  };
  const admit = (request: FastifyRequest, found: Remembered | null): void => {
    if (found === null) refuse('ERR-CredentialInvalid', 'the bearer token is missing, unknown or expired');
    request.actor = found.actor;
    request.bearer = found.bearer;
    request.member = found.member;
    requireRole(request);
  };
  /** Authenticates `request` at once (undefined) or by a promise, when its token must be read; throws a refusal. */
  const begin = (request: FastifyRequest): Promise<void> | undefined => {
    if (request.is404 || routeOf(request).config.public) {
      // A proposal's request reaches protected routes only: no ceremony or unknown route runs for it.
      if (request.server.approvals.carriesTicket(request)) refuse('ERR-MalformedCommand', 'a proposal carries a command route of this API');
      return undefined;
    }
    // A proposal's request run through its route acts as its proposer (http/approvals.ts).
    const dispatch = request.server.approvals.take(request);
    if (dispatch !== null) {
      request.dispatch = dispatch;
      request.actor = dispatch.actor;
      request.bearer = { scheme: 'api-key', expiresAtMs: null };
      request.member = dispatch.member;
      requireRole(request);
      return undefined;
    }
    const match = bearerPattern.exec(request.headers.authorization ?? '');
    const found = match ? lookup(match[1]!, request) : null;
    if (found instanceof Promise) return found.then((f) => admit(request, f));
    admit(request, found);
    return undefined;
  };
  // Callback-style: a remembered token is admitted with no promise made.
  const authenticate = (request: FastifyRequest, _reply: FastifyReply, done: (error?: FastifyError) => void): void => {
    let reading: Promise<void> | undefined;
    try {
      reading = begin(request);
    } catch (error) {
      return answerLater(() => done(error as FastifyError));
    }
    if (reading === undefined) done();
    else reading.then(() => done(), done);
  };
  /** `close` stops listening to the kernel's decisions (when the app closes). */
  return { authenticate, close: off };
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
