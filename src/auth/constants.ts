/**
 * Every bound of authentication and grants, in one place (as src/constants.ts is for
 * the kernel). Units are last in each name; the relations between bounds are checked
 * at load.
 */
import { assert } from '../assert.js';

/** Random bytes in a challenge (CONTRACT 5: tokens and challenges carry at least 32). */
export const challengeBytesMin = 32;
/** How long a challenge serves one ceremony (spec 8 "until expires_at"): five minutes. */
export const challengeValidityMs = 5 * 60 * 1000;
/**
 * Challenges recorded as used and not yet pruned (expired) at once: the used-set, the
 * only state challenges keep. Issuing writes nothing, so the anonymous endpoint cannot
 * fill it; only ceremonies that verified can, and past it a ceremony is told to retry.
 */
export const challengesOutstandingMax = 100_000;
/** Bytes of the key challenges are MAC'd under (HMAC-SHA256). */
export const challengeMacKeyBytes = 32;
/** Longest base64url challenge text accepted back from a ceremony (bounds hashing of junk). */
export const challengeTextLengthMax = 128;

/** Random bytes in a bearer token, API key or session (CONTRACT 5). */
export const tokenBytesMin = 32;
/** Session lifetime (CONTRACT 5: 12 h by default). */
export const sessionLifetimeDefaultMs = 12 * 3600 * 1000;
/** Longest session lifetime the daemon's config may set. */
export const sessionLifetimeMaxMs = 7 * 24 * 3600 * 1000;
/** Bearer token text length the resolver reads (src/auth/credentials.ts refuses longer ones). */
export const tokenTextLengthMax = 512;

/** Base64url text of one WebAuthn field (attestation object, client data, signature...). */
export const webauthnFieldLengthMax = 16 * 1024;

/** Grants: one root plus this many levels of narrowing, at most. */
export const grantChainDepthMax = 4;
/** Live grants narrowed directly from one grant. */
export const grantChildrenMax = 16;
/** Grants one revocation may touch: a grant and every grant narrowed from it. */
export const grantRevocationSetMax = (() => {
  let total = 0;
  let level = 1;
  for (let depth = 0; depth < grantChainDepthMax; depth += 1) {
    total += level;
    level *= grantChildrenMax;
  }
  return total;
})();
/**
 * Live grants (neither revoked nor expired) one principal may hold: a search for
 * authority reads them all, so a decision never works from a truncated list.
 */
export const grantsHeldMax = 64;
/** Live grants one principal may have given, to everyone together. */
export const grantsGivenMax = 256;
/**
 * Live grants one grantor may give one holder: a stranger fills at most this much of
 * another principal's space (the holder may revoke what it did not ask for).
 */
export const grantsPerGrantorHolderMax = 16;
/** Decoded grants kept in memory by their stored text (a memo of decoding; it decides nothing). */
export const grantsDecodedMax = 4096;
/** Entries of a grant's `assets` and `counterparties` lists. */
export const grantListEntriesMax = 64;
/** Shortest and longest `per_window.length`. */
export const grantWindowLengthMinMs = 1000;
export const grantWindowLengthMaxMs = 366 * 24 * 3600 * 1000;
/**
 * Uses remembered per windowed grant. A use that would need more is refused
 * (ERR-BoundExceeded) rather than forgetting one, which could let a window overflow.
 */
export const grantWindowUsesMax = 1024;
/** A justification of an issuance grant, bytes of UTF-8. */
export const justificationBytesMax = 1024;

assert(challengeBytesMin >= 32 && tokenBytesMin >= 32, 'CONTRACT 5: at least 32 random bytes');
assert(challengeTextLengthMax >= Math.ceil((challengeBytesMin * 4) / 3), 'a minimal challenge fits the accepted text');
assert(sessionLifetimeDefaultMs <= sessionLifetimeMaxMs, 'default session lifetime within bounds');
assert(grantWindowLengthMinMs <= grantWindowLengthMaxMs, 'window length bounds are ordered');
assert(grantRevocationSetMax <= 10_000, 'a revocation fits one write');
assert(grantsPerGrantorHolderMax < grantsHeldMax && grantsHeldMax <= grantsGivenMax, 'no one grantor fills a holder');
