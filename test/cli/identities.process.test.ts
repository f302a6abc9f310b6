/**
 * The built `ledgerctl` against a real `ledgerd` for identities, credentials, sign-in, grants and
 * the operator's commands (issue 4's routes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accounts, testGenesis } from './support/book.js';
import { type Daemon, startDaemon } from './support/daemon.js';
import { configDir, ledgerctl, withoutClientKey } from './support/ledgerctl.js';

let daemon: Daemon;
/** Profiles only: no token in the environment, so `--profile` decides who acts. */
let env: Record<string, string>;

beforeAll(async () => {
  daemon = await startDaemon({ genesis: testGenesis });
  env = { LEDGER_URL: daemon.url, LEDGERCTL_CONFIG_DIR: configDir() };
  await ledgerctl(['profile', 'add', 'operator', '--url', daemon.url, '--token', daemon.operatorKey, '--use'], env);
  await ledgerctl(['profile', 'add', 'identities', '--url', daemon.url, '--token', daemon.identitiesKey], env);
});
afterAll(() => daemon?.stop());

const run = (...args: string[]) => ledgerctl(args, env);
const ok = async (...args: string[]) => {
  const r = await run(...args);
  expect(withoutClientKey(r.stderr)).toBe('');
  expect(r.code).toBe(0);
  return r;
};

describe('identities and sign-in', () => {
  it('asks for a challenge without a token', async () => {
    const r = await ledgerctl(['auth', 'challenge'], { LEDGER_URL: daemon.url, LEDGERCTL_CONFIG_DIR: configDir() });
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ challenge: expect.stringMatching(/^[A-Za-z0-9_-]+$/), expires_at: expect.any(Number) });
  });

  it('creates an identity whose API key becomes a profile, printed once', async () => {
    const created = (await ok('--profile', 'identities', 'identities', 'create', '--scheme', 'api-key', '--save-as', 'carol', '--client-key', 'create-carol')).json();
    expect(created).toMatchObject({ state: 'Completed', result: { identity: expect.stringMatching(/^did:ledger:id:/), credential: expect.any(String) }, api_key: expect.any(String) });
    const who = (await ok('--profile', 'carol', 'auth', 'whoami')).json();
    expect(who).toMatchObject({ principal: created.result.identity, scheme: 'api-key', expires_at: null });
    const key = await run('--profile', 'identities', 'identities', 'create', '--scheme', 'key');
    expect(key.code).toBe(2);
    expect(key.stderr).toContain('needs --save-as PROFILE');
  });

  it('signs in with an API key and out again', async () => {
    const fresh = { LEDGER_URL: daemon.url, LEDGERCTL_CONFIG_DIR: configDir() };
    const login = await ledgerctl(['auth', 'login', '--api-key', daemon.operatorKey], fresh);
    expect(login.code).toBe(0);
    expect(login.stdout).not.toContain(daemon.operatorKey);
    expect((await ledgerctl(['auth', 'whoami'], fresh)).json().principal).toBe('did:ledger:id:operator');
    expect((await ledgerctl(['auth', 'logout'], fresh)).code).toBe(0);
    const after = await ledgerctl(['auth', 'whoami'], fresh);
    expect(after.code).toBe(4);
    expect(after.stderr).toMatch(/^ERR-CredentialInvalid: /);
    const wrong = await ledgerctl(['auth', 'login', '--api-key', 'not-a-key'], fresh);
    expect(wrong.code).toBe(4);
  });

  it('registers an ed25519 key and an API key (printed once, null on a repeat)', async () => {
    await ok('--profile', 'identities', 'identities', 'create', '--scheme', 'api-key', '--save-as', 'dave', '--client-key', 'create-dave');
    const key = (await ok('--profile', 'dave', 'credentials', 'register', '--scheme', 'key', '--client-key', 'dave-key')).json();
    expect(key.result.credential).toMatch(/^did:ledger:cred:/);
    // A retry under the same client key sends the same public key: the same operation, no second credential.
    const retriedRun = await run('--profile', 'dave', 'credentials', 'register', '--scheme', 'key', '--client-key', 'dave-key');
    expect(retriedRun.code).toBe(0);
    expect(retriedRun.stderr).toBe(`ledgerctl: replay: client key dave-key was taken before; this is ${key.operation_reference}'s reply, nothing was done again\n`);
    const retried = retriedRun.json();
    expect(retried.operation_reference).toBe(key.operation_reference);
    expect((await ok('--profile', 'dave', 'profile', 'show')).json().key_credentials).toEqual([key.result.credential]);
    const first = (await ok('--profile', 'dave', 'credentials', 'register', '--scheme', 'api-key', '--client-key', 'second-key')).json();
    expect(first.api_key).toEqual(expect.any(String));
    const repeated = await run('--profile', 'dave', 'credentials', 'register', '--scheme', 'api-key', '--client-key', 'second-key');
    expect(repeated.stderr).toMatch(/^ledgerctl: replay: client key second-key was taken before/);
    const repeat = repeated.json();
    expect(repeat.operation_reference).toBe(first.operation_reference);
    expect(repeat.api_key).toBeNull();
  });

  it('registers the software passkey and signs in with it', async () => {
    await ok('--profile', 'identities', 'identities', 'create', '--scheme', 'api-key', '--save-as', 'erin', '--client-key', 'create-erin');
    const registered = (await ok('--profile', 'erin', 'credentials', 'register', '--scheme', 'webauthn-es256')).json();
    const signIn = await run('--profile', 'erin', 'auth', 'login');
    expect(signIn.code).toBe(0);
    // The profile's only API key is kept aside, and the operator is told so.
    expect(signIn.stderr).toContain("the profile's API key is kept");
    expect(signIn.json()).toMatchObject({ profile: 'erin', credential: registered.result.credential, expires_at: expect.any(Number) });
    expect((await ok('--profile', 'erin', 'auth', 'whoami')).json()).toMatchObject({ scheme: 'webauthn-es256', credential: registered.result.credential });
    // A second sign-in signs with the next counter; the key stays kept (said once).
    await ok('--profile', 'erin', 'auth', 'login');
    // Signing out of the session gives the profile its API key back.
    const out = await run('--profile', 'erin', 'auth', 'logout');
    expect(out.stderr).toContain('its API key is its token again');
    expect((await ok('--profile', 'erin', 'auth', 'whoami')).json()).toMatchObject({ scheme: 'api-key', expires_at: null });
  });

  it('creates identities whose first credential is a passkey or a key, kept in their profiles', async () => {
    const created = (await ok('--profile', 'identities', 'identities', 'create', '--scheme', 'webauthn-es256', '--save-as', 'heidi', '--client-key', 'create-heidi')).json();
    expect((await ok('--profile', 'heidi', 'auth', 'login')).json().principal).toBe(created.result.identity);
    const keyed = (await ok('--profile', 'identities', 'identities', 'create', '--scheme', 'key', '--save-as', 'ivan', '--client-key', 'create-ivan')).json();
    expect((await ok('--profile', 'ivan', 'profile', 'show')).json()).toMatchObject({ key_credentials: [keyed.result.credential], token: false });
  });
});

describe('grants and the operator', () => {
  it('issues, lists and revokes a delegated grant; an unbounded one is refused', async () => {
    const holder = (await ok('--profile', 'identities', 'identities', 'create', '--scheme', 'api-key', '--save-as', 'frank', '--client-key', 'create-frank')).json().result.identity;
    const agent = (await ok('--profile', 'identities', 'identities', 'create', '--scheme', 'api-key', '--save-as', 'grace', '--client-key', 'create-grace')).json().result.identity;
    const account = (await ok('--profile', 'identities', 'accounts', 'open', '--owner', holder, '--wait', '--field', 'result.account')).stdout.trim();
    const issued = (await ok('--profile', 'frank', 'grants', 'issue', '--principal', agent, '--subject-account', account, '--ops', 'transfer', '--per-operation', '500', '--wait')).json();
    const grant = issued.result.grant as string;
    expect(grant).toMatch(/^did:ledger:grant:/);
    const listed = (await ok('--profile', 'frank', 'grants', 'list', '--account', account)).json();
    expect(listed.items).toEqual([expect.objectContaining({ grant, grantor: holder, revoked: null, terms: expect.objectContaining({ principal: agent, per_operation: '500' }) })]);
    expect((await ok('--profile', 'grace', 'grants', 'list', '--identity', holder)).json().items.map((g: { grant: string }) => g.grant)).toEqual([grant]);
    await ok('--profile', 'frank', 'grants', 'revoke', grant, '--wait');
    expect((await ok('--profile', 'frank', 'grants', 'list', '--account', account)).json().items[0].revoked).toEqual(expect.any(Number));
    const unbounded = await run('--profile', 'frank', 'grants', 'issue', '--principal', agent, '--subject-account', account, '--ops', 'transfer', '--wait');
    expect(unbounded.code).toBe(1);
    expect(unbounded.stderr).toMatch(/^ERR-UnboundedGrant: /m);
  });

  it('issues value out of the treasury under an issuance grant', async () => {
    const noJustification = await run('ops', 'issuance-grant', '--principal', 'did:ledger:id:operator', '--subject-account', accounts.treasury, '--ops', 'transfer');
    expect(noJustification.code).toBe(2);
    await ok('ops', 'issuance-grant', '--principal', 'did:ledger:id:operator', '--subject-account', accounts.treasury, '--ops', 'transfer', '--per-operation', '1000000', '--justification', 'opening float', '--wait');
    const issued = (await ok('transfers', 'create', '--from', accounts.treasury, '--to', accounts.bob, '--amount', '900', '--asset', 'USD', '--wait')).json();
    expect(issued.state).toBe('Completed');
  });

  it('lists integrating parties', async () => {
    expect((await ok('ops', 'parties')).json()).toEqual({ items: expect.any(Array) });
  });

  it('shows an account\'s custody', async () => {
    expect((await ok('accounts', 'custody', accounts.alice)).json()).toMatchObject({ account: accounts.alice, custody: 'delegated', epoch: 0, changes: [] });
  });
});
