/**
 * ledgerctl's software passkey: a P-256 (ES256) WebAuthn credential whose private key lives in the
 * profile's 0600 secrets file. It makes the bytes a platform authenticator would: a `none`
 * attestation for registration, and assertions signed over authenticatorData || SHA-256(clientData).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type { SoftwarePasskey } from './profiles.js';

/** Authenticator data flags (WebAuthn §6.1): user present, user verified, attested credential data. */
const flags = { userPresent: 0x01, userVerified: 0x04, attestedData: 0x40 } as const;
/** COSE key parameters of an ES256 public key on P-256 (RFC 9053). */
const cose = { kty: 1, alg: 3, crv: -1, x: -2, y: -3, kty_ec2: 2, alg_es256: -7, crv_p256: 1 } as const;
const credentialIdBytes = 16;
/** AAGUID of a software authenticator that claims no model: all zeros. */
const aaguidZero = new Uint8Array(16);

export interface PasskeyRegistration {
  attestation_object: string;
  client_data_json: string;
}

export interface PasskeyAssertion {
  authenticator_data: string;
  client_data_json: string;
  raw_id: string;
  signature: string;
}

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest();

export function createPasskey(rpId: string, origin: string): SoftwarePasskey {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    scheme: 'webauthn-es256',
    rawId: b64url(randomBytes(credentialIdBytes)),
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    rpId,
    origin,
    credential: null,
    signCount: 0,
  };
}

/** The answer to `navigator.credentials.create()` over a `register` challenge (spec endpoint 3's `passkey`). */
export function registration(passkey: SoftwarePasskey, challenge: string): PasskeyRegistration {
  const rawId = Buffer.from(passkey.rawId, 'base64url');
  const attested = Buffer.concat([aaguidZero, u16(rawId.length), rawId, cosePublicKey(passkey)]);
  const authData = authenticatorData(passkey, flags.attestedData, passkey.signCount, attested);
  const attestationObject = isoCBOR.encode(
    new Map<string, string | Uint8Array | Map<string, Uint8Array>>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', authData],
    ]),
  );
  return { attestation_object: b64url(attestationObject), client_data_json: b64url(clientData('webauthn.create', challenge, passkey.origin)) };
}

/** The answer to `navigator.credentials.get()` over an `authenticate` challenge, with the next sign count. */
export function assertion(passkey: SoftwarePasskey, challenge: string, signCount: number): PasskeyAssertion {
  const data = clientData('webauthn.get', challenge, passkey.origin);
  const authData = authenticatorData(passkey, 0, signCount, new Uint8Array(0));
  // ES256 is ECDSA over SHA-256; node signs EC keys in DER, the form WebAuthn carries.
  const signature = sign('sha256', Buffer.concat([authData, sha256(data)]), createPrivateKey(passkey.privateKeyPem));
  return { authenticator_data: b64url(authData), client_data_json: b64url(data), raw_id: passkey.rawId, signature: b64url(signature) };
}

function cosePublicKey(passkey: SoftwarePasskey): Uint8Array {
  const jwk = createPublicKey(passkey.privateKeyPem).export({ format: 'jwk' });
  return isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [cose.kty, cose.kty_ec2],
      [cose.alg, cose.alg_es256],
      [cose.crv, cose.crv_p256],
      [cose.x, Buffer.from(jwk.x!, 'base64url')],
      [cose.y, Buffer.from(jwk.y!, 'base64url')],
    ]),
  );
}

function clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string): Uint8Array {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

/** rpIdHash (32) | flags (1) | signCount (4, big-endian) | attested credential data. The user is always present and verified: the operator ran the command. */
function authenticatorData(passkey: SoftwarePasskey, extraFlags: number, signCount: number, attested: Uint8Array): Buffer {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(signCount);
  return Buffer.concat([sha256(Buffer.from(passkey.rpId)), Uint8Array.of(flags.userPresent | flags.userVerified | extraFlags), count, attested]);
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}
