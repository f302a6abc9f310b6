/**
 * Challenges (spec 2.3, endpoint 1): random bytes handed in, given out as base64url,
 * good for one ceremony of one purpose until `expiresAtMs`. Pure functions over
 * records; the daemon draws the bytes, reads the record and writes what these return.
 *
 * Store layout: `chal/<sha256 hex of the challenge text>` holds the record, so keys
 * have a fixed shape whatever a caller sends back; `chalx/<expiresAtMs, 16 hex>/<hash>`
 * indexes them by expiry so expired ones can be pruned in order (expiry.ts). A used challenge is
 * kept (with `used`) until it expires, so a replay is told apart from an unknown one
 * in the description, though both are ERR-CredentialInvalid.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { assert } from '../assert.js';
import { type Refusal, refusal } from '../errors.js';
import type { AccountId, IdentityId } from '../values.js';
import { expiryKey } from './expiry.js';
import { challengeBytesMin, challengeTextLengthMax, challengeValidityMs, challengesOutstandingMax } from './constants.js';

export type ChallengePurpose = 'authenticate' | 'register';

export interface ChallengeRecord {
  readonly purpose: ChallengePurpose;
  /** A register challenge naming an identity serves only that identity's set (endpoint 1). */
  readonly identity: IdentityId | null;
  readonly expiresAtMs: number;
  readonly used: boolean;
}

/** What endpoint 1 answers (spec 2.3); `expires_at` is ms since the epoch (CONTRACT 3). */
export interface ChallengeView {
  readonly challenge: string;
  readonly expires_at: number;
}

const base64urlPattern = /^[A-Za-z0-9_-]+$/;

export function challengeHash(challenge: string): string {
  return bytesToHex(sha256(new TextEncoder().encode(challenge)));
}

export const challengeKey = (challenge: string): string => `chal/${challengeHash(challenge)}`;

/** The expiry index entry of a challenge (expiry.ts); `chal/<expiryHash(entry)>` is the record to prune. */
export const challengeExpiryKey = (challenge: string, expiresAtMs: number): string => expiryKey('chalx', expiresAtMs, challengeHash(challenge));

/**
 * A new challenge over `randomBytes` (drawn by the caller, at least challengeBytesMin).
 * `outstanding` is how many challenges the store holds after pruning expired ones; at
 * the bound the caller is told to come back (ERR-DecisionUnavailable) rather than the
 * store growing without limit from an endpoint that takes no bearer.
 */
export function issueChallenge(input: {
  readonly purpose: ChallengePurpose;
  readonly identity: IdentityId | null;
  readonly randomBytes: Uint8Array;
  readonly nowMs: number;
  readonly outstanding: number;
}): { readonly challenge: string; readonly record: ChallengeRecord } | Refusal {
  assert(input.randomBytes.length >= challengeBytesMin, 'a challenge carries at least 32 random bytes');
  if (input.purpose === 'authenticate' && input.identity !== null) {
    return refusal('ERR-MalformedCommand', 'identity is for register challenges only');
  }
  if (input.outstanding >= challengesOutstandingMax) {
    return refusal('ERR-DecisionUnavailable', 'too many challenges are outstanding; retry shortly');
  }
  const challenge = Buffer.from(input.randomBytes).toString('base64url');
  assert(challenge.length <= challengeTextLengthMax, 'an issued challenge fits the accepted text');
  return { challenge, record: { purpose: input.purpose, identity: input.identity, expiresAtMs: input.nowMs + challengeValidityMs, used: false } };
}

export function challengeView(challenge: string, record: ChallengeRecord): ChallengeView {
  return { challenge, expires_at: record.expiresAtMs };
}

/** Whether a ceremony's challenge text is worth a store read at all. */
export function isChallengeText(value: string): boolean {
  return value.length >= Math.ceil((challengeBytesMin * 4) / 3) && value.length <= challengeTextLengthMax && base64urlPattern.test(value);
}

/**
 * Takes a challenge for one ceremony: the record to write back (now used), or why not.
 * `record` is what the store holds under `challengeKey(challenge)` (undefined: unknown).
 * `identity` is the set a registration goes into (null for sign-in and reclaim).
 */
export function consumeChallenge(
  record: ChallengeRecord | undefined,
  use: { readonly purpose: ChallengePurpose; readonly identity: IdentityId | null; readonly nowMs: number },
): ChallengeRecord | Refusal {
  const invalid = (why: string) => refusal('ERR-CredentialInvalid', `the challenge ${why}`);
  if (record === undefined) return invalid('is unknown');
  if (record.used) return invalid('was already used');
  if (use.nowMs >= record.expiresAtMs) return invalid('has expired');
  if (record.purpose !== use.purpose) return invalid(`was issued for ${record.purpose}, not ${use.purpose}`);
  if (record.identity !== null && record.identity !== use.identity) return invalid("is bound to another identity's set");
  return { ...record, used: true };
}

/**
 * The message a key credential signs to reclaim custody (CONTRACT 5): the UTF-8 bytes
 * of `ledger-reclaim:v1:<account>:<epoch>:<challenge>`, where the challenge is a fresh
 * one of purpose `authenticate` and the epoch is the account's custody epoch.
 */
export function reclaimMessage(account: AccountId, epoch: number, challenge: string): Uint8Array {
  assert(Number.isSafeInteger(epoch) && epoch >= 0, 'a custody epoch is a non-negative integer');
  return new TextEncoder().encode(`ledger-reclaim:v1:${account}:${epoch}:${challenge}`);
}
