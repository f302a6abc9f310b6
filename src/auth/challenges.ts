/**
 * Challenges (spec 2.3, endpoint 1): good for one ceremony of one purpose until
 * `expiresAtMs`. Stateless until used: a challenge carries its own terms (purpose,
 * whether it is bound to an identity, expiry) and random bytes, MAC'd under the
 * daemon's challenge key, so issuing one writes nothing and an anonymous flood of
 * issuance fills no store and locks nobody out. The identity a register challenge is
 * bound to enters the MAC, not the text: the challenge serves only that identity's set.
 *
 * Taking one for a ceremony records it in the used-set: `chal/<sha256 hex of the text>`
 * holds the record (with `used`), `chalx/<expiresAtMs, 16 hex>/<hash>` indexes it by
 * expiry so it is pruned once it could no longer serve anyway (expiry.ts). Only a
 * ceremony that verified at the edge reaches the used-set.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { assert } from '../assert.js';
import { type Refusal, refusal } from '../errors.js';
import type { AccountId, IdentityId } from '../model/values.js';
import { challengeBytesMin, challengeMacKeyBytes, challengeTextLengthMax, challengeValidityMs } from './constants.js';
import { expiryKey, usedChallengeKey } from '../model/keys.js';

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

export const challengeKey = (challenge: string): string => usedChallengeKey(challengeHash(challenge));

/** The expiry index entry of a challenge (expiry.ts); `chal/<expiryHash(entry)>` is the record to prune. */
export const challengeExpiryKey = (challenge: string, expiresAtMs: number): string => expiryKey('chalx', expiresAtMs, challengeHash(challenge));

const challengeVersion = 1;
const purposeCodes: Record<ChallengePurpose, number> = { authenticate: 1, register: 2 };
/** version, purpose, bound, expiresAtMs (u64), then the random bytes; the MAC follows. */
const termsBytes = 1 + 1 + 1 + 8;
const macBytes = 32;
const challengeBytes = termsBytes + challengeBytesMin + macBytes;

/** HMAC-SHA256 over the challenge's bytes and the identity it is bound to (empty when none). */
function challengeMac(macKey: Uint8Array, body: Uint8Array, identity: IdentityId | null): Buffer {
  assert(macKey.length === challengeMacKeyBytes, 'a challenge key is 32 bytes');
  return createHmac('sha256', macKey).update(body).update(`\n${identity ?? ''}`).digest();
}

/**
 * A new challenge over `randomBytes` (drawn by the caller, exactly challengeBytesMin),
 * MAC'd under `macKey`. Nothing is stored: it is recorded only when a ceremony takes it.
 */
export function issueChallenge(input: {
  readonly macKey: Uint8Array;
  readonly purpose: ChallengePurpose;
  readonly identity: IdentityId | null;
  readonly randomBytes: Uint8Array;
  readonly nowMs: number;
}): { readonly challenge: string; readonly record: ChallengeRecord } | Refusal {
  assert(input.randomBytes.length === challengeBytesMin, 'a challenge carries 32 random bytes');
  if (input.purpose === 'authenticate' && input.identity !== null) {
    return refusal('ERR-MalformedCommand', 'identity is for register challenges only');
  }
  const expiresAtMs = input.nowMs + challengeValidityMs;
  const body = Buffer.alloc(termsBytes + challengeBytesMin);
  body.writeUInt8(challengeVersion, 0);
  body.writeUInt8(purposeCodes[input.purpose], 1);
  body.writeUInt8(input.identity === null ? 0 : 1, 2);
  body.writeBigUInt64BE(BigInt(expiresAtMs), 3);
  body.set(input.randomBytes, termsBytes);
  const challenge = Buffer.concat([body, challengeMac(input.macKey, body, input.identity)]).toString('base64url');
  assert(challenge.length <= challengeTextLengthMax, 'an issued challenge fits the accepted text');
  return { challenge, record: { purpose: input.purpose, identity: input.identity, expiresAtMs, used: false } };
}

/**
 * The terms a challenge carries, if `macKey` issued it for `identity`'s set (null: a
 * ceremony that joins no existing set, or a sign-in); `used` is false here (the
 * used-set says otherwise). A challenge bound to another identity does not verify.
 */
export function openChallenge(macKey: Uint8Array, challenge: string, identity: IdentityId | null): ChallengeRecord | Refusal {
  const bytes = isChallengeText(challenge) ? Buffer.from(challenge, 'base64url') : Buffer.alloc(0);
  if (bytes.length !== challengeBytes || bytes.readUInt8(0) !== challengeVersion) return refusal('ERR-CredentialInvalid', 'the challenge is unknown');
  const body = bytes.subarray(0, termsBytes + challengeBytesMin);
  const bound = bytes.readUInt8(2) === 1;
  const expected = challengeMac(macKey, body, bound ? identity : null);
  if ((bound && identity === null) || !timingSafeEqual(expected, bytes.subarray(body.length))) {
    return refusal('ERR-CredentialInvalid', bound ? "the challenge is unknown, or bound to another identity's set" : 'the challenge is unknown');
  }
  const purpose = (Object.keys(purposeCodes) as ChallengePurpose[]).find((p) => purposeCodes[p] === bytes.readUInt8(1));
  if (purpose === undefined) return refusal('ERR-CredentialInvalid', 'the challenge is unknown');
  return { purpose, identity: bound ? identity : null, expiresAtMs: Number(bytes.readBigUInt64BE(3)), used: false };
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
 * `record` is the challenge's terms (openChallenge) with `used` from the used-set (undefined: unknown).
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
 * of `ledger-reclaim:v1:<account>:<epoch>`, the epoch as the custody view shows it.
 * Every completed custody change raises the epoch, so a proof never works twice.
 */
export function reclaimMessage(account: AccountId, epoch: number): Uint8Array {
  assert(Number.isSafeInteger(epoch) && epoch >= 0, 'a custody epoch is a non-negative integer');
  return new TextEncoder().encode(`ledger-reclaim:v1:${account}:${epoch}`);
}
