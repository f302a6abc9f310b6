/**
 * Scheme `key` (ed25519 verifiers and signatures), scheme `api-key` (a drawn secret kept
 * as its hash) and session tokens (spec 5, CONTRACT 5). Randomness is handed in: the
 * daemon draws it, so these functions stay deterministic and testable.
 *
 * Token text is a scheme tag and the base64url of the random bytes (`ledger_ak_…` for
 * API keys, `ledger_st_…` for sessions), so a leaked token is recognisable by secret
 * scanners and by the operator reading a log line that should not exist.
 */
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { assert } from '../assert.js';
import { type TokenGrant, hashToken } from './credentials.js';
import { type Scheme } from '../model/model.js';
import { type Refusal, refusal, refuse } from '../errors.js';
import type { BatchOp } from '../store/port.js';
import type { CredentialId, IdentityId } from '../model/values.js';
import { sessionLifetimeDefaultMs, sessionLifetimeMaxMs, tokenBytesMin, tokenTextLengthMax } from './constants.js';
import { expiryKey, tokenKey } from '../model/keys.js';

// The synchronous API needs SHA-512 wired in (TOOLCHAIN); decisions are synchronous.
ed.hashes.sha512 = sha512;

const publicKeyHexPattern = /^[0-9a-fA-F]{64}$/;
const signatureHexPattern = /^[0-9a-fA-F]{128}$/;

/**
 * A `key` verifier: a 32-byte ed25519 public key as hex, returned lowercase. It must be
 * a point of the curve and not of small order: a small-order key would let anyone
 * forge a signature over a fair share of messages.
 */
export function parseKeyVerifier(value: unknown, field = 'verifier'): string {
  if (typeof value !== 'string' || !publicKeyHexPattern.test(value)) refuse('ERR-MalformedCommand', `${field} must be a 32-byte ed25519 public key as hex`);
  const hex = value.toLowerCase();
  let point: ed.Point;
  try {
    point = ed.Point.fromHex(hex, false);
  } catch {
    refuse('ERR-MalformedCommand', `${field} is not an ed25519 public key`);
  }
  if (point.isSmallOrder()) refuse('ERR-MalformedCommand', `${field} is a small-order point, not a usable public key`);
  return hex;
}

/**
 * Checks a proof of a `key` credential: a 64-byte ed25519 signature, hex, over
 * `message`, under the stored verifier. Verification is strict RFC 8032 (not ZIP-215),
 * so one message has one valid encoding of a signature per key.
 */
export function verifyKeySignature(verifierHex: string, signature: unknown, message: Uint8Array): Refusal | null {
  if (typeof signature !== 'string' || !signatureHexPattern.test(signature)) {
    return refusal('ERR-CredentialInvalid', 'the signature must be 64 bytes as hex');
  }
  assert(publicKeyHexPattern.test(verifierHex), 'a stored key verifier is 32 bytes of hex');
  let valid: boolean;
  try {
    valid = ed.verify(Buffer.from(signature, 'hex'), message, Buffer.from(verifierHex, 'hex'), { zip215: false });
  } catch {
    valid = false;
  }
  return valid ? null : refusal('ERR-CredentialInvalid', 'the signature does not verify under the credential');
}

/** A drawn token and the hash that is all the store keeps of it. */
export interface DrawnToken {
  readonly token: string;
  readonly hash: string;
}

function drawToken(tag: string, randomBytes: Uint8Array): DrawnToken {
  assert(randomBytes.length >= tokenBytesMin, 'a token carries at least 32 random bytes');
  const token = `${tag}${Buffer.from(randomBytes).toString('base64url')}`;
  assert(token.length <= tokenTextLengthMax, 'a token fits what the resolver reads');
  return { token, hash: hashToken(token) };
}

/**
 * An API key for scheme `api-key`. Hand `token` to `credentialWrites` (credentials.ts),
 * which stores only its hash, and put it on the deciding reply only (CONTRACT 5).
 */
export function drawApiKey(randomBytes: Uint8Array): DrawnToken {
  return drawToken('ledger_ak_', randomBytes);
}

/** What endpoint 2 answers (spec 2.3). `session` is the secret, given once. */
export interface SessionView {
  readonly session: string;
  readonly expires_at: number;
  readonly principal: IdentityId;
  readonly credential: CredentialId;
}

/**
 * A session after a verified sign-in: the token (for the reply, never stored) and the
 * `TokenGrant` stored under its hash, resolved by `resolveToken` until `expiresAtMs`.
 */
export function drawSession(input: {
  readonly randomBytes: Uint8Array;
  readonly credential: CredentialId;
  readonly principal: IdentityId;
  readonly scheme: Scheme;
  readonly nowMs: number;
  readonly lifetimeMs?: number;
}): { readonly token: string; readonly grant: TokenGrant } {
  const lifetimeMs = input.lifetimeMs ?? sessionLifetimeDefaultMs;
  assert(Number.isSafeInteger(lifetimeMs) && lifetimeMs > 0 && lifetimeMs <= sessionLifetimeMaxMs, 'session lifetime within bounds');
  const { token, hash } = drawToken('ledger_st_', input.randomBytes);
  return { token, grant: { credential: input.credential, principal: input.principal, scheme: input.scheme, expiresAtMs: input.nowMs + lifetimeMs, hash } };
}

export function sessionView(token: string, grant: TokenGrant): SessionView {
  assert(grant.expiresAtMs !== null, 'a session expires');
  return { session: token, expires_at: grant.expiresAtMs, principal: grant.principal, credential: grant.credential };
}

/** The writes of a session: its grant under `tok/<hash>` and an expiry index entry for pruning. */
export function sessionWrites(grant: TokenGrant): BatchOp[] {
  assert(grant.expiresAtMs !== null, 'a session expires');
  return [
    { type: 'put', key: tokenKey(grant.hash), value: JSON.stringify(grant) },
    { type: 'put', key: expiryKey('tokx', grant.expiresAtMs, grant.hash), value: '' },
  ];
}
