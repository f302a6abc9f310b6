/**
 * A software authenticator that makes real WebAuthn bytes with node:crypto (P-256,
 * ES256), so tests exercise the verifier on what a browser would send: attestation
 * objects (`none` or `packed` self-attestation) CBOR-encoded with @simplewebauthn's
 * own encoder, client data JSON, and assertions signed (DER) over
 * authenticatorData || SHA-256(clientDataJSON). Options make the bad ceremonies tests need.
 * Every field is base64url, as the spec's endpoint 2 and 3 bodies carry them.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

export const defaultRpId = 'localhost';
export const defaultOrigin = 'http://localhost:8470';

/** Authenticator data flags (WebAuthn 6.1). */
const flagUserPresent = 0x01;
const flagUserVerified = 0x04;
const flagAttestedData = 0x40;
/** COSE: key type EC2, algorithm ES256, curve P-256. */
const coseKtyEc2 = 2;
const coseAlgEs256 = -7;
const coseCrvP256 = 1;

/** What the spec's endpoint 3 carries in `passkey`. */
export interface RegistrationBody {
  readonly attestation_object: string;
  readonly client_data_json: string;
}

/** What the spec's endpoints 2 and 4 carry in `assertion`. */
export interface AssertionBody {
  readonly authenticator_data: string;
  readonly client_data_json: string;
  readonly raw_id: string;
  readonly signature: string;
}

/** Knobs for a ceremony; the defaults make a good one. */
export interface CeremonyOptions {
  readonly origin?: string;
  readonly rpId?: string;
  readonly userPresent?: boolean;
  readonly userVerified?: boolean;
  /** The client data `type`; the default is the right one for the ceremony. */
  readonly type?: string;
  /** Flip one bit of the signature after signing. */
  readonly tamperSignature?: boolean;
}

export interface AssertionOptions extends CeremonyOptions {
  /** Sign with this counter instead of the next one (replays, cloned authenticators); does not advance. */
  readonly counter?: number;
  /** Report this credential id instead of our own. */
  readonly rawId?: Uint8Array;
}

export interface RegistrationOptions extends CeremonyOptions {
  readonly format?: 'none' | 'packed';
}

export const b64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');
const sha256 = (bytes: Uint8Array): Buffer => createHash('sha256').update(bytes).digest();

export class SoftwareAuthenticator {
  readonly credentialId: Uint8Array;
  private readonly privateKey: KeyObject;
  private readonly cosePublicKey: Uint8Array;
  private counter: number;

  /** `counterStart` 0 models an authenticator that starts counting at its first assertion. */
  constructor(opts: { counterStart?: number; credentialId?: Uint8Array } = {}) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    const coordinate = (v: string | undefined) => new Uint8Array(Buffer.from(v ?? '', 'base64url'));
    this.cosePublicKey = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, coseKtyEc2],
        [3, coseAlgEs256],
        [-1, coseCrvP256],
        [-2, coordinate(jwk.x)],
        [-3, coordinate(jwk.y)],
      ]),
    );
    this.credentialId = opts.credentialId ?? new Uint8Array(randomBytes(16));
    this.counter = opts.counterStart ?? 0;
  }

  get rawId(): string {
    return b64url(this.credentialId);
  }

  get signCount(): number {
    return this.counter;
  }

  /** A `navigator.credentials.create()` answer over `challenge` (base64url text). */
  register(challenge: string, opts: RegistrationOptions = {}): RegistrationBody {
    const clientData = clientDataJson(opts.type ?? 'webauthn.create', challenge, opts.origin);
    const attested = concat(new Uint8Array(16), u16(this.credentialId.length), this.credentialId, this.cosePublicKey);
    const authData = authenticatorData(opts, flagAttestedData, this.counter, attested);
    const attStmt = new Map<string, number | Uint8Array>();
    if ((opts.format ?? 'none') === 'packed') {
      // Self attestation: signed by the credential key itself, no certificate chain.
      attStmt.set('alg', coseAlgEs256);
      attStmt.set('sig', this.sign(concat(authData, sha256(clientData)), opts.tamperSignature));
    }
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Uint8Array | Map<string, number | Uint8Array>>([
        ['fmt', opts.format ?? 'none'],
        ['attStmt', attStmt],
        ['authData', authData],
      ]),
    );
    return { attestation_object: b64url(attestationObject), client_data_json: b64url(clientData) };
  }

  /** A `navigator.credentials.get()` answer over `challenge`; advances the sign counter. */
  assert(challenge: string, opts: AssertionOptions = {}): AssertionBody {
    let counter = opts.counter;
    if (counter === undefined) {
      this.counter += 1;
      counter = this.counter;
    }
    const clientData = clientDataJson(opts.type ?? 'webauthn.get', challenge, opts.origin);
    const authData = authenticatorData(opts, 0, counter, new Uint8Array(0));
    const signature = this.sign(concat(authData, sha256(clientData)), opts.tamperSignature);
    return {
      authenticator_data: b64url(authData),
      client_data_json: b64url(clientData),
      raw_id: b64url(opts.rawId ?? this.credentialId),
      signature: b64url(signature),
    };
  }

  /** ES256: ECDSA P-256 over SHA-256, DER-encoded (node's default for EC keys). */
  private sign(data: Uint8Array, tamper = false): Uint8Array {
    const der = new Uint8Array(sign('sha256', data, this.privateKey));
    // The last byte lies inside the integer `s`, so the DER stays well formed.
    if (tamper) der[der.length - 1]! ^= 0x01;
    return der;
  }
}

function clientDataJson(type: string, challenge: string, origin = defaultOrigin): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

function authenticatorData(opts: CeremonyOptions, extraFlags: number, counter: number, attested: Uint8Array): Uint8Array {
  let flags = extraFlags;
  if (opts.userPresent ?? true) flags |= flagUserPresent;
  if (opts.userVerified ?? true) flags |= flagUserVerified;
  const rpIdHash = sha256(new TextEncoder().encode(opts.rpId ?? defaultRpId));
  return concat(rpIdHash, Uint8Array.of(flags), u32(counter), attested);
}

function u16(n: number): Uint8Array {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function u32(n: number): Uint8Array {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}
