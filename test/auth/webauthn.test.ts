import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Refusal } from '../../src/errors.js';
import {
  type PasskeyKey,
  ceremonyChallenge,
  decoyPasskeyKey,
  defaultRelyingParty as rp,
  parsePasskeyAssertion,
  parsePasskeyRegistration,
  verifyPasskeyAssertion,
  verifyPasskeyRegistration,
} from '../../src/auth/webauthn.js';
import { SoftwareAuthenticator } from '../support/authenticator.js';
import { refusedWith } from '../support/refusals.js';

const challenge = () => randomBytes(32).toString('base64url');
const isRefusal = (v: object): v is Refusal => 'error' in v;

async function registered(auth: SoftwareAuthenticator, format: 'none' | 'packed' = 'none'): Promise<PasskeyKey> {
  const c = challenge();
  const key = await verifyPasskeyRegistration(auth.register(c, { format }), { challenge: c, rp });
  if (isRefusal(key)) throw new Error(key.description);
  return key;
}

describe('passkey registration', () => {
  it.each(['none', 'packed'] as const)('accepts a %s attestation and returns the COSE key, raw id and counter', async (format) => {
    const auth = new SoftwareAuthenticator();
    const key = await registered(auth, format);
    expect(key.rawId).toBe(auth.rawId);
    expect(key.counter).toBe(0);
    // COSE EC2 map of 5 entries, base64url.
    expect(Buffer.from(key.publicKey, 'base64url')[0]).toBe(0xa5);
  });

  const refusedRegistration: [string, (auth: SoftwareAuthenticator, c: string) => { body: ReturnType<SoftwareAuthenticator['register']>; expected: string }, string][] = [
    ['a wrong origin', (a, c) => ({ body: a.register(c, { origin: 'https://evil.example' }), expected: c }), 'origin'],
    ['a wrong rpId', (a, c) => ({ body: a.register(c, { rpId: 'evil.example' }), expected: c }), 'RP ID'],
    ['a wrong challenge', (a, c) => ({ body: a.register(challenge()), expected: c }), 'challenge'],
    ['no user verification', (a, c) => ({ body: a.register(c, { userVerified: false }), expected: c }), 'verification'],
    ['no user presence', (a, c) => ({ body: a.register(c, { userPresent: false }), expected: c }), 'presence'],
    ['an assertion type', (a, c) => ({ body: a.register(c, { type: 'webauthn.get' }), expected: c }), 'type'],
    ['a tampered packed signature', (a, c) => ({ body: a.register(c, { format: 'packed', tamperSignature: true }), expected: c }), 'does not verify'],
  ];
  it.each(refusedRegistration)('refuses %s with ERR-CredentialInvalid', async (_name, make, why) => {
    const c = challenge();
    const { body, expected } = make(new SoftwareAuthenticator(), c);
    const result = await verifyPasskeyRegistration(body, { challenge: expected, rp });
    expect(result).toMatchObject({ error: 'ERR-CredentialInvalid', description: expect.stringContaining(why) });
  });

  it('refuses garbage bytes as ERR-CredentialInvalid, not a crash', async () => {
    const result = await verifyPasskeyRegistration({ attestation_object: 'AAAA', client_data_json: 'AAAA' }, { challenge: challenge(), rp });
    expect(result).toMatchObject({ error: 'ERR-CredentialInvalid' });
  });
});

describe('passkey assertion', () => {
  it('accepts an assertion and returns the new counter; successive ones keep increasing', async () => {
    const auth = new SoftwareAuthenticator();
    let stored = await registered(auth, 'packed');
    for (const expectedCounter of [1, 2, 3]) {
      const c = challenge();
      const result = await verifyPasskeyAssertion(auth.assert(c), { challenge: c, rp, stored });
      expect(result).toEqual({ counter: expectedCounter });
      stored = { ...stored, counter: expectedCounter };
    }
  });

  it('accepts an authenticator that keeps no counter (always 0) while the stored counter is 0', async () => {
    const auth = new SoftwareAuthenticator();
    const stored = await registered(auth);
    const c = challenge();
    expect(await verifyPasskeyAssertion(auth.assert(c, { counter: 0 }), { challenge: c, rp, stored })).toEqual({ counter: 0 });
  });

  it('refuses a replayed assertion (counter not above the stored one)', async () => {
    const auth = new SoftwareAuthenticator();
    const key = await registered(auth);
    const c = challenge();
    const body = auth.assert(c);
    const first = await verifyPasskeyAssertion(body, { challenge: c, rp, stored: key });
    expect(first).toEqual({ counter: 1 });
    const replay = await verifyPasskeyAssertion(body, { challenge: c, rp, stored: { ...key, counter: 1 } });
    expect(replay).toMatchObject({ error: 'ERR-CredentialInvalid', description: expect.stringContaining('counter') });
    const old = auth.assert(c, { counter: 0 });
    expect(await verifyPasskeyAssertion(old, { challenge: c, rp, stored: { ...key, counter: 1 } })).toMatchObject({ error: 'ERR-CredentialInvalid' });
  });

  const refusedAssertion: [string, (auth: SoftwareAuthenticator, c: string) => { body: ReturnType<SoftwareAuthenticator['assert']>; expected: string }, string][] = [
    ['a wrong origin', (a, c) => ({ body: a.assert(c, { origin: 'http://localhost:8471' }), expected: c }), 'origin'],
    ['a wrong rpId', (a, c) => ({ body: a.assert(c, { rpId: 'example.com' }), expected: c }), 'RP ID'],
    ['a wrong challenge', (a, c) => ({ body: a.assert(challenge()), expected: c }), 'challenge'],
    ['a tampered signature', (a, c) => ({ body: a.assert(c, { tamperSignature: true }), expected: c }), 'does not verify'],
    ['no user verification', (a, c) => ({ body: a.assert(c, { userVerified: false }), expected: c }), 'verification'],
    ['no user presence', (a, c) => ({ body: a.assert(c, { userPresent: false }), expected: c }), 'not present'],
    ['a registration type', (a, c) => ({ body: a.assert(c, { type: 'webauthn.create' }), expected: c }), 'type'],
    ['another credential id', (a, c) => ({ body: a.assert(c, { rawId: new Uint8Array(16) }), expected: c }), 'another authenticator'],
  ];
  it.each(refusedAssertion)('refuses %s with ERR-CredentialInvalid', async (_name, make, why) => {
    const auth = new SoftwareAuthenticator();
    const stored = await registered(auth);
    const c = challenge();
    const { body, expected } = make(auth, c);
    expect(await verifyPasskeyAssertion(body, { challenge: expected, rp, stored })).toMatchObject({ error: 'ERR-CredentialInvalid', description: expect.stringContaining(why) });
  });

  it('checks an assertion against the decoy key as far as its signature (equal work for unknown credentials)', async () => {
    const auth = new SoftwareAuthenticator();
    await registered(auth);
    const c = challenge();
    const body = auth.assert(c);
    // Refused by the signature check itself: the decoy parsed as a COSE key and was used.
    expect(await verifyPasskeyAssertion(body, { challenge: c, rp, stored: { ...decoyPasskeyKey(), rawId: body.raw_id } })).toMatchObject({
      error: 'ERR-CredentialInvalid',
      description: expect.stringContaining('does not verify'),
    });
  });

  it('refuses an assertion signed by another authenticator reusing the credential id', async () => {
    const auth = new SoftwareAuthenticator();
    const stored = await registered(auth);
    const impostor = new SoftwareAuthenticator({ credentialId: auth.credentialId });
    const c = challenge();
    expect(await verifyPasskeyAssertion(impostor.assert(c), { challenge: c, rp, stored })).toMatchObject({ error: 'ERR-CredentialInvalid' });
  });

  it('verifies against a configured relying party', async () => {
    const other = { rpId: 'ledger.example', origin: 'https://ledger.example' };
    const auth = new SoftwareAuthenticator();
    const c = challenge();
    const stored = await verifyPasskeyRegistration(auth.register(c, { rpId: other.rpId, origin: other.origin }), { challenge: c, rp: other });
    if (isRefusal(stored)) throw new Error(stored.description);
    const c2 = challenge();
    const body = auth.assert(c2, { rpId: other.rpId, origin: other.origin });
    expect(await verifyPasskeyAssertion(body, { challenge: c2, rp: other, stored })).toEqual({ counter: 1 });
    expect(await verifyPasskeyAssertion(body, { challenge: c2, rp, stored })).toMatchObject({ error: 'ERR-CredentialInvalid' });
  });
});

describe('ceremony bodies', () => {
  it('reads the challenge named in client data', () => {
    const c = challenge();
    const body = new SoftwareAuthenticator().assert(c);
    expect(ceremonyChallenge(body.client_data_json)).toBe(c);
    expect(ceremonyChallenge(Buffer.from('not json').toString('base64url'))).toMatchObject({ error: 'ERR-CredentialInvalid' });
    expect(ceremonyChallenge(Buffer.from('{"challenge":7}').toString('base64url'))).toMatchObject({ error: 'ERR-CredentialInvalid' });
    expect(ceremonyChallenge(new SoftwareAuthenticator().assert('x'.repeat(5_000)).client_data_json)).toMatchObject({ error: 'ERR-CredentialInvalid' });
  });

  it('parses the spec bodies and refuses malformed ones with ERR-MalformedCommand', () => {
    const auth = new SoftwareAuthenticator();
    const reg = auth.register(challenge());
    const assertion = auth.assert(challenge());
    expect(parsePasskeyRegistration(reg)).toEqual(reg);
    expect(parsePasskeyAssertion(assertion)).toEqual(assertion);
    expect(refusedWith(() => parsePasskeyRegistration(null))).toBe('ERR-MalformedCommand');
    expect(refusedWith(() => parsePasskeyRegistration({ ...reg, attestation_object: 'a+b/' }))).toBe('ERR-MalformedCommand');
    expect(refusedWith(() => parsePasskeyAssertion({ ...assertion, raw_id: undefined }))).toBe('ERR-MalformedCommand');
    expect(refusedWith(() => parsePasskeyAssertion({ ...assertion, signature: 'x'.repeat(20_000) }))).toBe('ERR-MalformedCommand');
  });
});
