/**
 * Credentials and bearer tokens. A token (API key or session) is kept only as its
 * SHA-256 hash (CONTRACT 5): the store maps the hash to what the token authenticates.
 * The kernel draws no randomness: tokens are drawn at the edge and handed in.
 */
import { timingSafeEqual } from 'node:crypto';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import type { Actor, Principals } from './authority.js';
import { tokenTextLengthMax } from './constants.js';
import { check, members, recordJson } from '../model/decode.js';
import type { Scheme } from '../model/model.js';
import type { BatchOp, ReadView } from '../store/port.js';
import type { AccountId, CredentialId, IdentityId } from '../model/values.js';
import { credentialKey, tokenKey } from '../model/keys.js';
import { memberWrite, rootMember } from './members.js';


export interface Credential {
  readonly id: CredentialId;
  readonly identity: IdentityId;
  readonly scheme: Scheme;
  /** `key`: ed25519 public key hex; `webauthn-es256`: COSE public key, base64url; `api-key`: null. */
  readonly verifier: string | null;
  /** Accounts it reaches, or null for all of the identity's accounts. */
  readonly scope: readonly AccountId[] | null;
  readonly createdAtMs: number;
  /** `webauthn-es256`: the authenticator's credential id (base64url) and last sign counter. */
  readonly webauthnId: string | null;
  readonly counter: number;
}

/** What a bearer token authenticates. */
export interface TokenGrant {
  readonly credential: CredentialId;
  readonly principal: IdentityId;
  readonly scheme: Scheme;
  /** Sessions expire; API keys do not (null). */
  readonly expiresAtMs: number | null;
  /** The credential's scope, copied so a request needs one read to know what it reaches. */
  readonly scope?: readonly AccountId[] | null;
  /** A constant-time check of the lookup itself. */
  readonly hash: string;
}

const schemes = members<Scheme>({ key: true, 'webauthn-es256': true, 'api-key': true });

/** A stored credential record, checked before it is trusted (the edge verifies ceremonies against it). */
export function decodeCredential(text: string): Credential {
  const j = recordJson(text, 'credential');
  const what = `credential ${check.string(j, 'id', 'credential')}`;
  check.string(j, 'identity', what);
  check.oneOf(j, 'scheme', schemes, what);
  check.nullableString(j, 'verifier', what);
  check.nullableStrings(j, 'scope', what);
  check.integer(j, 'createdAtMs', what);
  check.nullableString(j, 'webauthnId', what);
  check.integer(j, 'counter', what);
  return j as unknown as Credential;
}

/** A stored token grant (`tok/`), checked before the caller it names is trusted; the message never names the key (it is the token's hash). */
export function decodeTokenGrant(text: string): TokenGrant {
  const what = 'token grant';
  const j = recordJson(text, what);
  check.string(j, 'credential', what);
  check.string(j, 'principal', what);
  check.oneOf(j, 'scheme', schemes, what);
  check.nullableInteger(j, 'expiresAtMs', what);
  // Grants of API keys made before the scope was copied carry none.
  if (j.scope !== undefined) check.nullableStrings(j, 'scope', what);
  check.digestHex(j, 'hash', what);
  return j as unknown as TokenGrant;
}
export function hashToken(token: string): string {
  return bytesToHex(sha256(new TextEncoder().encode(token)));
}

/** The writes that register a credential and, for an API key, its token hash. */
export function credentialWrites(credential: Credential, apiKey: string | null): BatchOp[] {
  const ops: BatchOp[] = [{ type: 'put', key: credentialKey(credential.id), value: JSON.stringify(credential) }];
  if (apiKey !== null) {
    const hash = hashToken(apiKey);
    const grant: TokenGrant = { credential: credential.id, principal: credential.identity, scheme: 'api-key', expiresAtMs: null, scope: credential.scope, hash };
    ops.push({ type: 'put', key: tokenKey(hash), value: JSON.stringify(grant) });
  }
  return ops;
}

/** The operator's and the identities principal's API-key credentials, sealed in at init. */
export function principalCredentialWrites(principals: Principals, keys: { operator: string; identities: string }, nowMs: number): BatchOp[] {
  const make = (identity: IdentityId, name: string): Credential => ({
    id: `did:ledger:cred:${name}` as CredentialId,
    identity,
    scheme: 'api-key',
    verifier: null,
    scope: null,
    createdAtMs: nowMs,
    webauthnId: null,
    counter: 0,
  });
  // The operator's key is its first member's, `root` (CONTRACT 13).
  const root = memberWrite(rootMember(nowMs));
  return [
    ...credentialWrites(make(principals.operator, 'operator'), keys.operator),
    { type: 'put', key: root.key, value: root.value! },
    ...credentialWrites(make(principals.identities, 'identities'), keys.identities),
  ];
}

/** Resolves a bearer token to the caller, or null when missing, unknown or expired. */
export async function resolveToken(view: ReadView, token: string, nowMs: number): Promise<(Actor & { scheme: Scheme; expiresAtMs: number | null }) | null> {
  // Bounded before hashing: no caller makes us hash an arbitrarily long header.
  if (token.length === 0 || token.length > tokenTextLengthMax) return null;
  const hash = hashToken(token);
  const text = await view.get(tokenKey(hash));
  if (text === undefined) return null;
  const grant = decodeTokenGrant(text);
  if (!timingSafeEqual(hexToBytes(grant.hash), hexToBytes(hash))) return null;
  if (grant.expiresAtMs !== null && nowMs >= grant.expiresAtMs) return null;
  return { principal: grant.principal, credential: grant.credential, onBehalfOf: null, scope: grant.scope ?? null, scheme: grant.scheme, expiresAtMs: grant.expiresAtMs };
}

