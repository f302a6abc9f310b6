/**
 * Signing in and enrolling over the real daemon (spec endpoints 1-3, CONTRACT 5), with
 * the software authenticator's real WebAuthn bytes (attestation `none` and `packed`,
 * DER ES256 assertions): challenges, passkey sign-in and its refusals, whoami,
 * identities and credentials of every scheme, and the API key on its deciding reply only.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SoftwareAuthenticator } from '../support/authenticator.js';
import { type Client, type Reply, decided, refusalOf, repoRoot, useDaemon } from './support.js';

const clockStepMs = 13 * 3600 * 1000;
const sessionLifetimeMs = 2 * 3600 * 1000;
const shared = useDaemon({ alice: 1_000n, bob: 0n }, { sessionLifetimeMs }, {
  NODE_OPTIONS: `--import ${repoRoot}test/support/clock-shift.mjs`,
  LEDGERD_TEST_CLOCK_STEP_MS: String(clockStepMs),
});
const anonymous = shared.as('operator');
const identities = shared.as('identities');
const asAlice = shared.as('alice');
const alice = 'did:ledger:id:alice';
const bob = 'did:ledger:id:bob';
let keyCounter = 0;
const freshKey = () => ({ 'client-key': `auth-${Date.now()}-${++keyCounter}` });

async function challenge(purpose: 'authenticate' | 'register', identity: string | null = null): Promise<string> {
  const r = await anonymous.post('/v1/auth/challenge', { purpose, identity }, null);
  expect(r.status).toBe(200);
  return r.body.challenge;
}

/** A decided operation's view, as its submitter reads it. */
async function outcome(api: Client, r: Reply, token?: string) {
  expect([200, 202], r.text).toContain(r.status);
  return (await decided(api, r.body.operation_reference, token)).body;
}

/** A new identity whose first credential is a passkey of `auth`. */
async function passkeyIdentity(auth: SoftwareAuthenticator, format: 'none' | 'packed' = 'none') {
  const r = await identities.post('/v1/identities', { scheme: 'webauthn-es256', passkey: auth.register(await challenge('register'), { format }) }, undefined, freshKey());
  const view = await outcome(identities, r);
  expect(view.state).toBe('Completed');
  return { identity: view.result.identity as string, credential: view.result.credential as string };
}

/** Descriptions of refused sign-ins: one for all, so a failure tells an anonymous caller nothing. */
const signInDescriptions = new Set<string>();
async function signIn(auth: SoftwareAuthenticator, credential: string, opts: Parameters<SoftwareAuthenticator['assert']>[1] = {}, over?: string) {
  const r = await anonymous.post('/v1/auth/passkey', { assertion: auth.assert(over ?? (await challenge('authenticate')), opts), credential }, null);
  if (r.status === 401) signInDescriptions.add(r.body.description);
  return r;
}

const invalid = (r: Reply) => expect(refusalOf(r)).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });

describe('POST /v1/auth/challenge', () => {
  it('answers a fresh challenge of at least 32 bytes, valid five minutes, without a bearer', async () => {
    const before = Date.now();
    const r = await anonymous.post('/v1/auth/challenge', { purpose: 'authenticate' }, null);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['challenge', 'expires_at']);
    expect(Buffer.from(r.body.challenge, 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(r.body.expires_at).toBeGreaterThanOrEqual(before + 5 * 60 * 1000);
    expect(r.body.expires_at).toBeLessThanOrEqual(Date.now() + 5 * 60 * 1000);
    expect((await anonymous.post('/v1/auth/challenge', { purpose: 'register', identity: alice }, null)).status).toBe(200);
  });

  it('refuses an identity on an authenticate challenge, and malformed purposes or identities', async () => {
    expect(refusalOf(await anonymous.post('/v1/auth/challenge', { purpose: 'authenticate', identity: alice }, null))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(refusalOf(await anonymous.post('/v1/auth/challenge', { purpose: 'login' }, null))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(refusalOf(await anonymous.post('/v1/auth/challenge', { purpose: 'register', identity: 'alice' }, null))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
  });
});

describe('passkey sign-in (POST /v1/auth/passkey) and GET /v1/whoami', () => {
  it('signs in with a passkey registered with attestation none, and whoami names the session', async () => {
    const auth = new SoftwareAuthenticator();
    const { identity, credential } = await passkeyIdentity(auth);
    const r = await signIn(auth, credential);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['credential', 'expires_at', 'principal', 'session']);
    expect(r.body).toMatchObject({ principal: identity, credential });
    expect(r.body.session).toMatch(/^ledger_st_[A-Za-z0-9_-]{43,}$/);
    // The configured lifetime (CONTRACT 5: 12 h unless configured).
    expect(r.body.expires_at).toBeGreaterThan(Date.now() + sessionLifetimeMs - 60_000);
    expect(r.body.expires_at).toBeLessThanOrEqual(Date.now() + sessionLifetimeMs);
    const who = await anonymous.get('/v1/whoami', r.body.session);
    expect(who.status).toBe(200);
    expect(who.body).toEqual({ principal: identity, credential, scheme: 'webauthn-es256', expires_at: r.body.expires_at });
    // Signed in again, the counter has moved on.
    expect((await signIn(auth, credential)).status).toBe(200);
  });

  it('registers a packed passkey into the set of the identity signed in, and signs in with it', async () => {
    const first = new SoftwareAuthenticator();
    const { identity, credential } = await passkeyIdentity(first, 'packed');
    const session = (await signIn(first, credential)).body.session as string;
    const second = new SoftwareAuthenticator({ counterStart: 5 });
    const reg = await anonymous.post('/v1/credentials', { marker: 'ordinary', scheme: 'webauthn-es256', passkey: second.register(await challenge('register', identity), { format: 'packed' }) }, session, freshKey());
    const view = await outcome(anonymous, reg, session);
    expect(view.state).toBe('Completed');
    const signed = await signIn(second, view.result.credential);
    expect(signed.status).toBe(200);
    expect(signed.body.principal).toBe(identity);
  });

  it('refuses replayed, wrong-origin, wrong-rp, wrong-challenge, wrong-identity, tampered and unverified ceremonies with 401', async () => {
    const auth = new SoftwareAuthenticator();
    const { credential } = await passkeyIdentity(auth);
    const other = new SoftwareAuthenticator();
    const { credential: otherCredential } = await passkeyIdentity(other);

    const assertion = auth.assert(await challenge('authenticate'));
    expect((await anonymous.post('/v1/auth/passkey', { assertion, credential }, null)).status).toBe(200);
    invalid(await anonymous.post('/v1/auth/passkey', { assertion, credential }, null));

    invalid(await signIn(auth, credential, { origin: 'https://evil.example' }));
    invalid(await signIn(auth, credential, { rpId: 'evil.example' }));
    invalid(await signIn(auth, credential, {}, await challenge('register')));
    invalid(await signIn(auth, credential, {}, randomBytes(32).toString('base64url')));
    invalid(await signIn(auth, credential, { type: 'webauthn.create' }));
    // Another identity's passkey presented for this credential, and this one's for another.
    invalid(await signIn(other, credential));
    invalid(await signIn(auth, otherCredential));
    invalid(await signIn(auth, credential, { tamperSignature: true }));
    invalid(await signIn(auth, credential, { userVerified: false }));
    invalid(await signIn(auth, credential, { counter: 1 }));
    invalid(await signIn(auth, 'did:ledger:cred:nobody'));
    // A credential that is not a passkey signs in with nothing.
    invalid(await signIn(auth, 'did:ledger:cred:alice'));
    // After all of that the genuine authenticator still signs in.
    expect((await signIn(auth, credential)).status).toBe(200);
    expect(signInDescriptions.size).toBe(1);
  });

  it('answers whoami for API keys (no expiry) and refuses a missing or unknown bearer', async () => {
    expect((await asAlice.get('/v1/whoami')).body).toEqual({ principal: alice, credential: 'did:ledger:cred:alice', scheme: 'api-key', expires_at: null });
    invalid(await anonymous.get('/v1/whoami', null));
    invalid(await anonymous.get('/v1/whoami', 'ledger_st_unknown'));
  });
});

describe('registering credentials and identities', () => {
  it('puts an API key on its deciding reply only; repeats carry api_key null and views never', async () => {
    const headers = freshKey();
    const first = await asAlice.post('/v1/credentials', { marker: 'ordinary', scheme: 'api-key' }, undefined, headers);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ terminal: true, state: 'Completed', result: { credential: expect.stringMatching(/^did:ledger:cred:/) } });
    expect(first.body.api_key).toMatch(/^ledger_ak_[A-Za-z0-9_-]{43,}$/);
    const again = await asAlice.post('/v1/credentials', { marker: 'ordinary', scheme: 'api-key' }, undefined, headers);
    expect(again.status).toBe(200);
    expect(again.body.operation_reference).toBe(first.body.operation_reference);
    expect(again.body.api_key).toBeNull();
    const view = await asAlice.get(`/v1/operations/${first.body.operation_reference}`);
    expect(view.body).not.toHaveProperty('api_key');
    expect(view.text).not.toContain(first.body.api_key);
    const who = await anonymous.get('/v1/whoami', first.body.api_key);
    expect(who.body).toEqual({ principal: alice, credential: first.body.result.credential, scheme: 'api-key', expires_at: null });
  });

  it('creates identities with a key verifier or an API key, by the identities principal only', async () => {
    const verifier = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
    const keyed = await outcome(identities, await identities.post('/v1/identities', { scheme: 'key', verifier }, undefined, freshKey()));
    expect(keyed).toMatchObject({ state: 'Completed', result: { identity: expect.stringMatching(/^did:ledger:id:/), credential: expect.stringMatching(/^did:ledger:cred:/) } });
    const withKey = await identities.post('/v1/identities', { scheme: 'api-key', reference: { crm: 42 } }, undefined, freshKey());
    expect(withKey.status).toBe(200);
    expect(withKey.body.reference).toEqual({ crm: 42 });
    expect((await anonymous.get('/v1/whoami', withKey.body.api_key)).body.principal).toBe(withKey.body.result.identity);
    expect(refusalOf(await asAlice.post('/v1/identities', { scheme: 'api-key' }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusalOf(await identities.post('/v1/identities', { scheme: 'key', verifier: '00'.repeat(32) }, undefined, freshKey()))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(refusalOf(await identities.post('/v1/identities', { scheme: 'api-key', verifier }, undefined, freshKey()))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
  });

  it('registers on behalf of an identity for the identities principal only', async () => {
    const forBob = await identities.post('/v1/credentials', { marker: 'ordinary', scheme: 'api-key' }, undefined, { ...freshKey(), 'on-behalf-of': bob });
    expect(forBob.status).toBe(200);
    expect((await anonymous.get('/v1/whoami', forBob.body.api_key)).body.principal).toBe(bob);
    expect(refusalOf(await asAlice.post('/v1/credentials', { marker: 'ordinary', scheme: 'api-key' }, undefined, { ...freshKey(), 'on-behalf-of': bob }))).toEqual({
      status: 403,
      error: 'ERR-NotAuthorised',
    });
  });

  it('refuses a registration whose attestation fails, or whose challenge cannot serve, with 401 at once', async () => {
    const auth = new SoftwareAuthenticator();
    const create = (passkey: unknown, headers = freshKey()) => identities.post('/v1/identities', { scheme: 'webauthn-es256', passkey }, undefined, headers);
    invalid(await create(auth.register(await challenge('register'), { origin: 'https://evil.example' })));
    invalid(await create(auth.register(await challenge('register'), { format: 'packed', tamperSignature: true })));
    invalid(await create(auth.register(await challenge('register'), { userVerified: false })));
    invalid(await create(auth.register(await challenge('authenticate'))));
    invalid(await create(auth.register(randomBytes(32).toString('base64url'))));
    // A register challenge bound to alice serves only alice's set.
    const boundToAlice = await challenge('register', alice);
    invalid(await identities.post('/v1/credentials', { marker: 'ordinary', scheme: 'webauthn-es256', passkey: auth.register(boundToAlice) }, undefined, { ...freshKey(), 'on-behalf-of': bob }));
    invalid(await create(auth.register(boundToAlice)));
    // A challenge serves one ceremony: the same attestation under a new client key is a
    // replay, while a repeat under the first one's key gets the first reply again.
    const headers = freshKey();
    const passkey = auth.register(await challenge('register'));
    const first = await create(passkey, headers);
    expect((await outcome(identities, first)).state).toBe('Completed');
    invalid(await create(passkey));
    const repeat = await create(passkey, headers);
    expect(repeat.status).toBe(200);
    expect(repeat.body.operation_reference).toBe(first.body.operation_reference);
  });

  it('decides two registrations racing for one challenge in order: the later one is refused', async () => {
    const auth = new SoftwareAuthenticator();
    const passkey = auth.register(await challenge('register'));
    const racing = await Promise.all([0, 1].map(() => identities.post('/v1/identities', { scheme: 'webauthn-es256', passkey }, undefined, freshKey())));
    const outcomes = await Promise.all(racing.map(async (r) => (r.status === 401 ? refusalOf(r).error : ((await outcome(identities, r)).error?.error ?? 'ok'))));
    expect(outcomes.sort()).toEqual(['ERR-CredentialInvalid', 'ok']);
  });
});

describe('expiry (the daemon clock moved 13 hours on)', () => {
  it('refuses an expired challenge and an expired session', async () => {
    const auth = new SoftwareAuthenticator();
    const { credential } = await passkeyIdentity(auth);
    const session = (await signIn(auth, credential)).body.session as string;
    const stale = await challenge('authenticate');
    const shifted = shared.daemon.stderr.length;
    shared.daemon.process.kill('SIGUSR2');
    await expect.poll(() => shared.daemon.stderr.slice(shifted).some((l) => l.startsWith('test clock:'))).toBe(true);
    invalid(await signIn(auth, credential, {}, stale));
    invalid(await anonymous.get('/v1/whoami', session));
    expect((await signIn(auth, credential)).status).toBe(200);
  });
});
