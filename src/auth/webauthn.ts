/**
 * Passkey ceremonies (scheme `webauthn-es256`), verified with @simplewebauthn/server
 * for the relying party of the config (CONTRACT 1): origin, rpID, challenge, ES256
 * signature, user presence and verification, and the sign counter.
 *
 * User verification is required, at registration and at sign-in. A passkey is the only
 * factor of a sign-in here and the session it yields moves money; without UV, whoever
 * holds (or has unlocked) the authenticator signs in. With UV the authenticator also
 * checked a PIN or biometric: possession plus knowledge or inherence.
 *
 * Attestation is checked for integrity (`none`, or `packed` self-attestation signed by
 * the new key) but not for provenance: no authenticator metadata or roots are configured,
 * so any authenticator may register; the identity's own authority over its set decides.
 *
 * Verification is asynchronous (WebCrypto), so it runs at the edge before a command is
 * submitted; the challenge is consumed by the caller (challenges.ts) in the same write
 * that records the outcome.
 */
import { generateKeyPairSync } from 'node:crypto';
import { type Refusal, refusal, refuse } from '../errors.js';
import { isChallengeText } from './challenges.js';
import { webauthnFieldLengthMax } from './constants.js';

/** Where passkeys are verified (CONTRACT 1); the daemon overrides from config and env. */
export interface RelyingParty {
  readonly rpId: string;
  readonly origin: string;
}

export const defaultRelyingParty: RelyingParty = Object.freeze({ rpId: 'localhost', origin: 'http://localhost:8470' });

/** Endpoint 3's `passkey`. */
export interface PasskeyRegistration {
  readonly attestation_object: string;
  readonly client_data_json: string;
}

/** Endpoints 2 and 4's `assertion`; `signature` is DER. */
export interface PasskeyAssertion {
  readonly authenticator_data: string;
  readonly client_data_json: string;
  readonly raw_id: string;
  readonly signature: string;
}

/**
 * What is kept of a passkey. `publicKey` is the COSE key, base64url (the credential's
 * `verifier`); `rawId` is the authenticator's credential id, base64url; `counter` is
 * the last sign counter seen, rewritten after every sign-in.
 */
export interface PasskeyKey {
  readonly rawId: string;
  readonly publicKey: string;
  readonly counter: number;
}

/** COSE algorithm ES256, the one algorithm of scheme `webauthn-es256`. */
const coseAlgEs256 = -7;
const base64urlPattern = /^[A-Za-z0-9_-]*$/;

function field(body: Record<string, unknown>, name: string, where: string): string {
  const value = body[name];
  if (typeof value !== 'string' || value.length === 0 || value.length > webauthnFieldLengthMax || !base64urlPattern.test(value)) {
    refuse('ERR-MalformedCommand', `${where}.${name} must be a base64url string of at most ${webauthnFieldLengthMax} characters`);
  }
  return value;
}

function object(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse('ERR-MalformedCommand', `${where} must be an object`);
  return value as Record<string, unknown>;
}

/** Parses endpoint 3's `passkey` at the edge (shape only; the ceremony is checked by verifyPasskeyRegistration). */
export function parsePasskeyRegistration(value: unknown, where = 'passkey'): PasskeyRegistration {
  const body = object(value, where);
  return { attestation_object: field(body, 'attestation_object', where), client_data_json: field(body, 'client_data_json', where) };
}

/** Parses endpoints 2 and 4's `assertion` at the edge (shape only). */
export function parsePasskeyAssertion(value: unknown, where = 'assertion'): PasskeyAssertion {
  const body = object(value, where);
  return {
    authenticator_data: field(body, 'authenticator_data', where),
    client_data_json: field(body, 'client_data_json', where),
    raw_id: field(body, 'raw_id', where),
    signature: field(body, 'signature', where),
  };
}

/**
 * The challenge text a ceremony's client data names, so the caller can read its record
 * (challengeKey) before verifying; text that no issued challenge could be is refused
 * without a read. Nothing here is trusted yet: the verifier checks it again.
 */
export function ceremonyChallenge(clientDataJson: string): string | Refusal {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(clientDataJson, 'base64url').toString('utf8'));
    const challenge = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>).challenge : undefined;
    if (typeof challenge === 'string' && isChallengeText(challenge)) return challenge;
  } catch {
    // Falls through to the refusal: client data that is not JSON names no challenge.
  }
  return refusal('ERR-CredentialInvalid', 'the client data names no challenge');
}

/** Authenticator data: rpIdHash (32 bytes), flags (1), then the sign counter (uint32, big-endian). */
const signCounterOffset = 33;

function signCounter(authenticatorData: string): number | null {
  const bytes = Buffer.from(authenticatorData, 'base64url');
  return bytes.length < signCounterOffset + 4 ? null : bytes.readUInt32BE(signCounterOffset);
}

/** Loaded at the first ceremony, not at every start of ledgerd (the library and its ASN.1 parsers are about a third of its start). */
const library = () => import('@simplewebauthn/server');

const invalid = (what: string, error: unknown): Refusal =>
  refusal('ERR-CredentialInvalid', `the passkey ${what} is invalid: ${error instanceof Error ? error.message : 'unreadable'}`);

/** Verifies a registration made over `expectedChallenge` (a `register` challenge). */
export async function verifyPasskeyRegistration(body: PasskeyRegistration, expected: { readonly challenge: string; readonly rp: RelyingParty }): Promise<PasskeyKey | Refusal> {
  try {
    const { verifyRegistrationResponse } = await library();
    const result = await verifyRegistrationResponse({
      // The spec's body carries no credential id: the attested data in authData holds
      // it, and the library compares id with rawId only, so any non-empty text serves.
      response: { id: 'passkey', rawId: 'passkey', type: 'public-key', clientExtensionResults: {}, response: { attestationObject: body.attestation_object, clientDataJSON: body.client_data_json } },
      expectedChallenge: expected.challenge,
      expectedOrigin: expected.rp.origin,
      expectedRPID: expected.rp.rpId,
      expectedType: 'webauthn.create',
      requireUserPresence: true,
      requireUserVerification: true,
      supportedAlgorithmIDs: [coseAlgEs256],
    });
    if (!result.verified) return refusal('ERR-CredentialInvalid', 'the passkey attestation does not verify');
    const { credential } = result.registrationInfo;
    return { rawId: credential.id, publicKey: Buffer.from(credential.publicKey).toString('base64url'), counter: credential.counter };
  } catch (error) {
    return invalid('registration', error);
  }
}

/**
 * Verifies an assertion made over `expectedChallenge` by the stored passkey. Returns the
 * counter to store, or a refusal: a counter that does not increase while the stored one
 * is non-zero means a replay or a cloned authenticator. Authenticators that keep no
 * counter report 0 every time, which stays acceptable while the stored one is 0.
 */
export async function verifyPasskeyAssertion(
  body: PasskeyAssertion,
  expected: { readonly challenge: string; readonly rp: RelyingParty; readonly stored: PasskeyKey },
): Promise<{ readonly counter: number } | Refusal> {
  if (body.raw_id !== expected.stored.rawId) return refusal('ERR-CredentialInvalid', 'the assertion is from another authenticator than the credential named');
  const counter = signCounter(body.authenticator_data);
  if (counter === null) return refusal('ERR-CredentialInvalid', 'the authenticator data is too short');
  // Checked here, first, so the rule does not rest on a dependency's default.
  if (expected.stored.counter > 0 && counter <= expected.stored.counter) {
    return refusal('ERR-CredentialInvalid', 'the sign counter did not increase (replay or cloned authenticator)');
  }
  try {
    const { verifyAuthenticationResponse } = await library();
    const result = await verifyAuthenticationResponse({
      response: {
        id: body.raw_id,
        rawId: body.raw_id,
        type: 'public-key',
        clientExtensionResults: {},
        response: { authenticatorData: body.authenticator_data, clientDataJSON: body.client_data_json, signature: body.signature },
      },
      expectedChallenge: expected.challenge,
      expectedOrigin: expected.rp.origin,
      expectedRPID: expected.rp.rpId,
      expectedType: 'webauthn.get',
      credential: { id: expected.stored.rawId, publicKey: new Uint8Array(Buffer.from(expected.stored.publicKey, 'base64url')), counter: expected.stored.counter },
      requireUserVerification: true,
    });
    if (!result.verified) return refusal('ERR-CredentialInvalid', 'the passkey signature does not verify');
    return { counter: result.authenticationInfo.newCounter };
  } catch (error) {
    return invalid('assertion', error);
  }
}

/**
 * A passkey no authenticator holds: sign-in for an unknown credential verifies the
 * assertion against it, so it does the same work as for a known one before it is
 * refused, and the answer's timing does not tell which credentials exist.
 */
export function decoyPasskeyKey(): PasskeyKey {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  // COSE_Key (RFC 9053) in CBOR, written out (a map of 5: kty 1 EC2 2, alg 3 ES256 -7, crv -1 P-256 1,
  // x -2 and y -3 as 32-byte strings): the library's encoder would load it at every start.
  const coordinate = (label: number, base64url: string) => [label, 0x58, 0x20, ...Buffer.from(base64url, 'base64url')];
  const cose = Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, ...coordinate(0x21, jwk.x!), ...coordinate(0x22, jwk.y!)]);
  return { rawId: 'decoy', publicKey: cose.toString('base64url'), counter: 0 };
}
