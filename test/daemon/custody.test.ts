/**
 * Custody over the real daemon (spec endpoints 4, 5, 17, 22; CONTRACT 5, 8, 10): recovery
 * terms and their digest, owned accounts, reclaim with real ed25519 signatures and
 * software-authenticator passkey assertions, the operator and `delegated_accounts`
 * stopping at owned accounts, recoveries and successions over a clock the test moves,
 * freeze, close and identity restriction, with every refusal's code and status.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ed from '@noble/ed25519';
import { describe, expect, it } from 'vitest';
import '../../src/auth/keys.js';
import { ConfigError, loadConfig } from '../../daemon/config.js';
import { SoftwareAuthenticator } from '../support/authenticator.js';
import { type Client, type Reply, client, decided, refusalOf, repoRoot, startDaemon, useDaemon, useTempDirs, writeBook } from './support.js';

/** The default recovery delay (72 h) and the step the test clock takes past it. */
const delayMs = 72 * 3600 * 1000;
const shared = useDaemon({ alice: 1_000n, bob: 500n, carol: 0n, dave: 0n, erin: 300n, frank: 0n }, undefined, {
  NODE_OPTIONS: `--import ${repoRoot}test/support/clock-shift.mjs`,
  LEDGERD_TEST_CLOCK_STEP_MS: String(delayMs + 1000),
});
const operator = shared.as('operator');
const identities = shared.as('identities');
const as = (name: string) => shared.as(name);
const id = (name: string) => `did:ledger:id:${name}`;
const acct = (name: string) => `did:ledger:acct:${name}`;
let keyCounter = 0;
const freshKey = () => ({ 'client-key': `custody-${Date.now()}-${++keyCounter}` });

/** The decided operation of an acknowledged command. */
async function outcome(api: Client, r: Reply) {
  expect([200, 202], r.text).toContain(r.status);
  return (await decided(api, r.body.operation_reference)).body;
}
const completed = async (api: Client, r: Reply) => {
  const op = await outcome(api, r);
  expect(op.state, JSON.stringify(op)).toBe('Completed');
  return op;
};
const rejected = async (api: Client, r: Reply) => {
  const op = await outcome(api, r);
  expect(op.state, JSON.stringify(op)).toBe('Rejected');
  return op.error.error as string;
};
const refusal = (r: Reply) => refusalOf(r);

async function termsDigest(who: string): Promise<string> {
  const r = await as(who).get(`/v1/identities/${id(who)}/recovery-terms`);
  expect(r.status).toBe(200);
  return r.body.digest;
}

async function openAccount(owner: string, custody: 'delegated' | 'owned', by: Client = as(owner)): Promise<string> {
  const acknowledged = custody === 'owned' ? await termsDigest(owner) : undefined;
  const op = await completed(by, await by.post('/v1/accounts', { custody, kind: 'customer', owner: id(owner), acknowledged }, undefined, freshKey()));
  return op.result.account;
}

async function fund(account: string, amount: string, from = 'alice') {
  await completed(as(from), await as(from).post('/v1/transfers', { legs: [{ from: acct(from), to: account, amount, asset: 'USD' }] }, undefined, freshKey()));
}

async function balance(account: string, who: Client = operator): Promise<{ available: string; reserved: string }> {
  const r = await who.get(`/v1/accounts/${account}/balances`);
  return r.body.balances.find((b: { asset: string }) => b.asset === 'USD') ?? { available: '0', reserved: '0' };
}

const custodyOf = async (account: string) => (await operator.get(`/v1/accounts/${account}/custody`)).body;

/** A key credential of `owner`'s set, registered with its own API key. */
async function keyCredential(owner: string) {
  const secret = ed.utils.randomSecretKey();
  const verifier = Buffer.from(ed.getPublicKey(secret)).toString('hex');
  const op = await completed(as(owner), await as(owner).post('/v1/credentials', { marker: 'ordinary', scheme: 'key', verifier }, undefined, freshKey()));
  const sign = (account: string, epoch: number) => Buffer.from(ed.sign(new TextEncoder().encode(`ledger-reclaim:v1:${account}:${epoch}`), secret)).toString('hex');
  return { credential: op.result.credential as string, sign };
}

async function challenge(purpose: 'authenticate' | 'register', identity: string | null = null): Promise<string> {
  const r = await operator.post('/v1/auth/challenge', { purpose, identity }, null);
  expect(r.status).toBe(200);
  return r.body.challenge;
}

/** A passkey of `owner`'s set, made by a software authenticator. */
async function passkeyCredential(owner: string) {
  const auth = new SoftwareAuthenticator();
  const passkey = auth.register(await challenge('register', id(owner)));
  const op = await completed(as(owner), await as(owner).post('/v1/credentials', { marker: 'ordinary', scheme: 'webauthn-es256', passkey }, undefined, freshKey()));
  return { auth, credential: op.result.credential as string };
}

async function reclaimWithKey(owner: string, account: string, key: { credential: string; sign: (a: string, e: number) => string }, headers = freshKey()) {
  const { epoch } = await custodyOf(account);
  const acknowledged = (await as(owner).get(`/v1/accounts/${account}/recovery-mechanisms`)).body.digest;
  return as(owner).post(`/v1/accounts/${account}/custody/reclaim`, { proof_credential: key.credential, acknowledged, signature: key.sign(account, epoch) }, undefined, headers);
}

/** Moves the daemon's clock past the recovery delay. */
async function pastTheDelay() {
  const before = shared.daemon.stderr.length;
  shared.daemon.process.kill('SIGUSR2');
  await expect.poll(() => shared.daemon.stderr.slice(before).some((l) => l.startsWith('test clock:'))).toBe(true);
}

describe('recovery terms (CONTRACT 8) and owned accounts (endpoints 5 and 17)', () => {
  it('shows the default terms with the digest of their canonical JSON, to the identity, the identities principal and the operator only', async () => {
    const r = await as('alice').get(`/v1/identities/${id('alice')}/recovery-terms`);
    expect(r.status).toBe(200);
    const mechanisms = [{ mechanism: 'recovery_authority', authority: 'did:ledger:id:identities', delay: delayMs }];
    expect(r.body).toEqual({ identity: id('alice'), digest: createHash('sha256').update(JSON.stringify([{ authority: 'did:ledger:id:identities', delay: delayMs, mechanism: 'recovery_authority' }])).digest('hex'), mechanisms });
    for (const reader of [identities, operator]) expect((await reader.get(`/v1/identities/${id('alice')}/recovery-terms`)).body).toEqual(r.body);
    expect(refusal(await as('bob').get(`/v1/identities/${id('alice')}/recovery-terms`))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await operator.get(`/v1/identities/${id('nobody')}/recovery-terms`))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
  });

  it('opens an owned account only over the current digest, and keeps the mechanisms with it', async () => {
    const open = (acknowledged?: unknown) => as('alice').post('/v1/accounts', { custody: 'owned', kind: 'customer', owner: id('alice'), acknowledged }, undefined, freshKey());
    expect(refusal(await open())).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await open('0'.repeat(64)))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await open('not hex'))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    const account = await openAccount('alice', 'owned');
    expect((await as('alice').get(`/v1/accounts/${account}`)).body).toMatchObject({ custody: 'owned', status: 'active', closed: false });
    expect(await custodyOf(account)).toEqual({ account, custody: 'owned', epoch: 0, owner: id('alice'), successor: null, changes: [] });
    const mechanisms = await as('alice').get(`/v1/accounts/${account}/recovery-mechanisms`);
    expect(mechanisms.body.digest).toBe(await termsDigest('alice'));
    expect(mechanisms.body.mechanisms).toEqual([{ mechanism: 'recovery_authority', authority: 'did:ledger:id:identities', delay: delayMs }]);
    expect(refusal(await as('bob').get(`/v1/accounts/${account}/recovery-mechanisms`))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    // The acknowledgement is ignored for delegated custody.
    expect((await as('alice').post('/v1/accounts', { custody: 'delegated', kind: 'customer', owner: id('alice'), acknowledged: '0'.repeat(64) }, undefined, freshKey())).status).toBe(202);
  });
});

describe('reclaim (endpoint 4)', () => {
  it('moves a delegated account to owned with a key signature over ledger-reclaim:v1:<account>:<epoch>, once', async () => {
    const account = await openAccount('alice', 'delegated');
    const key = await keyCredential('alice');
    const first = await reclaimWithKey('alice', account, key);
    expect(first.status).toBe(202);
    await completed(as('alice'), first);
    expect(await custodyOf(account)).toMatchObject({ custody: 'owned', epoch: 1 });
    // Reclaiming it again: its state is answered before the proof.
    expect(refusal(await reclaimWithKey('alice', account, key))).toEqual({ status: 409, error: 'ERR-InvalidTransition' });
    expect(refusal(await as('alice').post(`/v1/accounts/${account}/custody/reclaim`, { proof_credential: key.credential, acknowledged: null, signature: '00'.repeat(64) }, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-InvalidTransition' });
  });

  it('answers the repeat of a reclaim under its client key with the decided reply', async () => {
    const account = await openAccount('alice', 'delegated');
    const key = await keyCredential('alice');
    const acknowledged = (await as('alice').get(`/v1/accounts/${account}/recovery-mechanisms`)).body.digest;
    const body = { proof_credential: key.credential, acknowledged, signature: key.sign(account, 0) };
    const headers = freshKey();
    const first = await as('alice').post(`/v1/accounts/${account}/custody/reclaim`, body, undefined, headers);
    await completed(as('alice'), first);
    const again = await as('alice').post(`/v1/accounts/${account}/custody/reclaim`, body, undefined, headers);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ operation_reference: first.body.operation_reference, state: 'Completed', terminal: true });
    expect((await custodyOf(account)).epoch).toBe(1);
  });

  it('refuses a missing or stale acknowledgement, a bad proof, another principal and another set\'s credential', async () => {
    const account = await openAccount('alice', 'delegated');
    const key = await keyCredential('alice');
    const digest = (await as('alice').get(`/v1/accounts/${account}/recovery-mechanisms`)).body.digest;
    const reclaim = (body: Record<string, unknown>, who = 'alice') => as(who).post(`/v1/accounts/${account}/custody/reclaim`, { proof_credential: key.credential, acknowledged: digest, signature: key.sign(account, 0), ...body }, undefined, freshKey());
    expect(refusal(await reclaim({ acknowledged: null }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await reclaim({ acknowledged: 'ab'.repeat(32) }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await reclaim({ signature: key.sign(account, 1) }))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect(refusal(await reclaim({ signature: key.sign(acct('alice'), 0) }))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect(refusal(await reclaim({ signature: 'zz' }))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect(refusal(await reclaim({ signature: null }))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    const bobs = await keyCredential('bob');
    expect(refusal(await reclaim({ proof_credential: bobs.credential, signature: bobs.sign(account, 0) }))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    // Alice's API key is no key credential: it proves nothing.
    expect(refusal(await reclaim({ proof_credential: 'did:ledger:cred:alice' }))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect(refusal(await reclaim({}, 'bob'))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await reclaim({}, 'operator'))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await as('alice').post(`/v1/accounts/${acct('nobody')}/custody/reclaim`, { proof_credential: key.credential, acknowledged: digest, signature: key.sign(acct('nobody'), 0) }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await reclaim({ extra: 1 }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(refusal(await operator.post(`/v1/accounts/did:ledger:acct:treasury-USD/custody/reclaim`, { proof_credential: key.credential, acknowledged: digest, signature: key.sign(account, 0) }, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-InvalidTransition' });
    expect((await custodyOf(account)).custody).toBe('delegated');
    // The genuine proof still works after all of that.
    await completed(as('alice'), await reclaim({}));
  });

  it('reclaims with a passkey assertion over a fresh authenticate challenge, which never serves twice', async () => {
    const first = await openAccount('alice', 'delegated');
    const second = await openAccount('alice', 'delegated');
    const { auth, credential } = await passkeyCredential('alice');
    const digest = (await as('alice').get(`/v1/accounts/${first}/recovery-mechanisms`)).body.digest;
    const assertion = auth.assert(await challenge('authenticate'));
    await completed(as('alice'), await as('alice').post(`/v1/accounts/${first}/custody/reclaim`, { proof_credential: credential, acknowledged: digest, assertion }, undefined, freshKey()));
    expect(await custodyOf(first)).toMatchObject({ custody: 'owned', epoch: 1 });
    // The same assertion again, on another account: its challenge is used.
    const replay = (assertionBody: unknown) => as('alice').post(`/v1/accounts/${second}/custody/reclaim`, { proof_credential: credential, acknowledged: digest, assertion: assertionBody }, undefined, freshKey());
    expect(refusal(await replay(assertion))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect(refusal(await replay(auth.assert(await challenge('register', id('alice')))))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect(refusal(await replay(auth.assert(await challenge('authenticate'), { tamperSignature: true })))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    const stranger = new SoftwareAuthenticator({ credentialId: auth.credentialId });
    expect(refusal(await replay(stranger.assert(await challenge('authenticate'))))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect((await custodyOf(second)).custody).toBe('delegated');
    await completed(as('alice'), await replay(auth.assert(await challenge('authenticate'))));
  });

  it('decides two reclaims racing for one account in order: one completes, the other is refused', async () => {
    const account = await openAccount('alice', 'delegated');
    const key = await keyCredential('alice');
    const replies = await Promise.all([reclaimWithKey('alice', account, key), reclaimWithKey('alice', account, key)]);
    const outcomes = await Promise.all(replies.map(async (r) => (r.status === 202 ? (await outcome(as('alice'), r)).state : refusal(r).error)));
    expect(outcomes.filter((o) => o === 'Completed')).toHaveLength(1);
    expect((await custodyOf(account)).epoch).toBe(1);
  });
});

describe('the operator and delegated_accounts stop at owned accounts (CONTRACT 8)', () => {
  it('refuses the operator debiting, reserving and capturing on an owned account, while the owner\'s grants keep working', async () => {
    const account = await openAccount('erin', 'delegated');
    await completed(as('erin'), await as('erin').post('/v1/transfers', { legs: [{ from: acct('erin'), to: account, amount: '200', asset: 'USD' }] }, undefined, freshKey()));
    // Under delegated custody: the operator reserves, bob spends under delegated_accounts and under an {account} grant.
    const held = await outcome(operator, await operator.post('/v1/reservations', { payer: account, amount: '10', asset: 'USD' }, undefined, freshKey()));
    expect(held.state).toBe('Reserved');
    const grant = (subject: unknown) => as('erin').post('/v1/grants', { kind: 'delegated', principal: id('bob'), subject, ops: ['transfer'], per_operation: '50' }, undefined, freshKey());
    await completed(as('erin'), await grant('delegated_accounts'));
    const byBob = () => as('bob').post('/v1/transfers', { legs: [{ from: account, to: acct('bob'), amount: '1', asset: 'USD' }] }, undefined, freshKey());
    await completed(as('bob'), await byBob());

    await completed(as('erin'), await reclaimWithKey('erin', account, await keyCredential('erin')));
    expect(refusal(await operator.post('/v1/transfers', { legs: [{ from: account, to: acct('carol'), amount: '1', asset: 'USD' }] }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await operator.post('/v1/reservations', { payer: account, amount: '1', asset: 'USD' }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await operator.post(`/v1/reservations/${held.operation_reference}/capture`, { to: acct('carol') }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await operator.post(`/v1/reservations/${held.operation_reference}/release`, {}, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await byBob())).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    // A grant the owner gave over the account by name keeps working; the hold is the owner's to release.
    await completed(as('erin'), await grant({ account }));
    await completed(as('bob'), await byBob());
    await completed(as('erin'), await as('erin').post(`/v1/reservations/${held.operation_reference}/release`, {}, undefined, freshKey()));
    expect(await balance(account)).toMatchObject({ available: '198', reserved: '0' });
  });
});

describe('recovery and succession (CONTRACT 8)', () => {
  it('hands an account over in place by a succession after the delay, raising the epoch', async () => {
    const account = await openAccount('alice', 'owned');
    const open = await as('alice').post(`/v1/accounts/${account}/custody/changes`, { kind: 'succession', new_owner: id('dave') }, undefined, freshKey());
    const opened = await completed(as('alice'), open);
    const pending = opened.result.pending as string;
    expect(pending).toBe(opened.operation_reference);
    expect(opened.result.effective_at).toBe(opened.decided_at + delayMs);
    expect(await custodyOf(account)).toMatchObject({ owner: id('alice'), successor: id('dave'), epoch: 0, changes: [{ kind: 'succession', pending, state: 'pending', effective_at: opened.result.effective_at, initiated_at: opened.decided_at }] });
    // A second change while one is pending, completing early, by anyone but the new owner (who accepts it by completing it).
    expect(refusal(await as('alice').post(`/v1/accounts/${account}/custody/changes`, { kind: 'succession', new_owner: id('carol') }, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-InvalidTransition' });
    expect(refusal(await as('dave').post(`/v1/accounts/${account}/custody/changes/${pending}/complete`, {}, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-RecoveryNotElapsed' });
    expect(refusal(await as('alice').post(`/v1/accounts/${account}/custody/changes/${pending}/complete`, {}, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await as('alice').post(`/v1/accounts/${account}/custody/changes/nope/complete`, {}, undefined, freshKey()))).toEqual({ status: 404, error: 'ERR-UnknownOperation' });
    await pastTheDelay();
    expect(refusal(await as('alice').post(`/v1/accounts/${account}/custody/changes/${pending}/complete`, {}, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    const done = await completed(as('dave'), await as('dave').post(`/v1/accounts/${account}/custody/changes/${pending}/complete`, {}, undefined, freshKey()));
    expect(done.result).toMatchObject({ pending, effective_at: opened.result.effective_at });
    expect(await custodyOf(account)).toMatchObject({ owner: id('dave'), successor: null, epoch: 1, custody: 'owned', changes: [{ pending, state: 'completed' }] });
    expect((await as('dave').get(`/v1/accounts?owner=${id('dave')}&limit=10`)).body.items.map((a: { account: string }) => a.account)).toContain(account);
    expect(refusal(await as('alice').get(`/v1/accounts/${account}`))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await as('dave').post(`/v1/accounts/${account}/custody/changes/${pending}/complete`, {}, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-InvalidTransition' });
    expect(refusal(await as('dave').post(`/v1/accounts/${account}/custody/changes/${pending}/cancel`, {}, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-InvalidTransition' });
  });

  it('cancels a pending change (the owner, or whoever opened it); a cancelled one never completes', async () => {
    const account = await openAccount('carol', 'delegated');
    const opened = await completed(identities, await identities.post(`/v1/accounts/${account}/custody/changes`, { kind: 'recovery', new_owner: id('frank'), to: acct('frank') }, undefined, freshKey()));
    const pending = opened.result.pending;
    expect(refusal(await as('bob').post(`/v1/accounts/${account}/custody/changes/${pending}/cancel`, {}, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    const cancelled = await completed(as('carol'), await as('carol').post(`/v1/accounts/${account}/custody/changes/${pending}/cancel`, {}, undefined, freshKey()));
    expect(cancelled.result.pending).toBe(pending);
    expect(await custodyOf(account)).toMatchObject({ epoch: 0, changes: [{ pending, kind: 'recovery', state: 'cancelled' }] });
    expect(refusal(await identities.post(`/v1/accounts/${account}/custody/changes/${pending}/complete`, {}, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-InvalidTransition' });
    // A new one may be opened after it; the opener cancels its own too.
    const again = await completed(identities, await identities.post(`/v1/accounts/${account}/custody/changes`, { kind: 'recovery', new_owner: id('frank'), to: acct('frank') }, undefined, freshKey()));
    await completed(identities, await identities.post(`/v1/accounts/${account}/custody/changes/${again.result.pending}/cancel`, {}, undefined, freshKey()));
    expect((await custodyOf(account)).changes.map((c: { state: string }) => c.state)).toEqual(['cancelled', 'cancelled']);
  });

  it('refuses opening a recovery but by the named authority, into another owner\'s account, or without `to`', async () => {
    const open = (who: Client, body: Record<string, unknown>) => who.post(`/v1/accounts/${acct('carol')}/custody/changes`, body, undefined, freshKey());
    expect(refusal(await open(as('carol'), { kind: 'recovery', new_owner: id('frank'), to: acct('frank') }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await open(operator, { kind: 'recovery', new_owner: id('frank'), to: acct('frank') }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await open(identities, { kind: 'recovery', new_owner: id('frank'), to: acct('dave') }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await open(identities, { kind: 'recovery', new_owner: id('frank') }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(refusal(await open(identities, { kind: 'recovery', new_owner: id('carol'), to: acct('carol') }))).toEqual({ status: 400, error: 'ERR-UnsupportedLeg' });
    expect(refusal(await open(as('carol'), { kind: 'succession', new_owner: id('frank'), to: acct('frank') }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(refusal(await open(as('carol'), { kind: 'succession', new_owner: id('carol') }))).toEqual({ status: 409, error: 'ERR-InvalidTransition' });
    expect(refusal(await open(as('carol'), { kind: 'succession', new_owner: id('nobody') }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await open(as('carol'), { kind: 'sideways', new_owner: id('frank') }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
  });

  it('decides two changes racing in order (one opens, the other is refused), refuses closing with one pending, and completing a recovery of a frozen account', async () => {
    const account = await openAccount('carol', 'delegated');
    const open = () => identities.post(`/v1/accounts/${account}/custody/changes`, { kind: 'recovery', new_owner: id('frank'), to: acct('frank') }, undefined, freshKey());
    const replies = await Promise.all([open(), open()]);
    const outcomes = await Promise.all(replies.map(async (r) => (r.status === 202 ? await outcome(identities, r) : { state: refusal(r).error, result: null })));
    expect(outcomes.map((o) => o.state).sort()).toEqual(['Completed', expect.stringMatching(/^(Rejected|ERR-InvalidTransition)$/)].sort());
    const pending = outcomes.find((o) => o.state === 'Completed')!.result.pending;
    expect((await custodyOf(account)).changes).toHaveLength(1);
    expect(refusal(await as('carol').post(`/v1/accounts/${account}/close`, {}, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-InvalidTransition' });
    await completed(operator, await operator.post(`/v1/accounts/${account}/freeze`, { justification: 'hold for review' }, undefined, freshKey()));
    await pastTheDelay();
    const complete = () => identities.post(`/v1/accounts/${account}/custody/changes/${pending}/complete`, {}, undefined, freshKey());
    expect(await rejected(identities, await complete())).toBe('ERR-AccountFrozen');
    await completed(operator, await operator.post(`/v1/accounts/${account}/unfreeze`, { justification: 'reviewed' }, undefined, freshKey()));
    await completed(identities, await complete());
    expect((await operator.get(`/v1/accounts/${account}`)).body.status).toBe('closed');
  });

  it('completes a recovery by sweeping available value under recovery authority and closing the account; ERR-ReleaseUnsafe while value is held', async () => {
    const account = await openAccount('bob', 'owned');
    await fund(account, '120', 'bob');
    const held = await outcome(as('bob'), await as('bob').post('/v1/reservations', { payer: account, amount: '20', asset: 'USD' }, undefined, freshKey()));
    expect(held.state).toBe('Reserved');
    const opened = await completed(identities, await identities.post(`/v1/accounts/${account}/custody/changes`, { kind: 'recovery', new_owner: id('frank'), to: acct('frank') }, undefined, freshKey()));
    // A reclaim racing the recovery: the account has a change pending.
    expect(refusal(await as('bob').post(`/v1/accounts/${account}/custody/reclaim`, { proof_credential: 'did:ledger:cred:bob', acknowledged: null, signature: '00'.repeat(64) }, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-InvalidTransition' });
    await pastTheDelay();
    const complete = () => identities.post(`/v1/accounts/${account}/custody/changes/${opened.result.pending}/complete`, {}, undefined, freshKey());
    expect(await rejected(identities, await complete())).toBe('ERR-ReleaseUnsafe');
    await completed(as('bob'), await as('bob').post(`/v1/reservations/${held.operation_reference}/release`, {}, undefined, freshKey()));
    const frankBefore = BigInt((await balance(acct('frank'))).available);
    const done = await completed(identities, await complete());
    expect(done.result.postings).toHaveLength(2);
    expect((await balance(acct('frank'))).available).toBe(String(frankBefore + 120n));
    expect(await balance(account)).toMatchObject({ available: '0', reserved: '0' });
    const moves = await operator.get(`/v1/movements?account=${account}&limit=10`);
    const sweep = moves.body.movements.find((m: { kind: string }) => m.kind === 'recovery');
    expect(sweep).toMatchObject({ direction: 'debit', amount: '120', counterparty: acct('frank'), authorities: [{ kind: 'recovery', principal: 'did:ledger:id:identities', grant: null }] });
    expect((await operator.get(`/v1/accounts/${account}`)).body).toMatchObject({ status: 'closed', closed: true });
    expect(await custodyOf(account)).toMatchObject({ epoch: 1, changes: [{ state: 'completed', kind: 'recovery' }] });
    expect(await rejected(as('bob'), await as('bob').post('/v1/transfers', { legs: [{ from: acct('bob'), to: account, amount: '1', asset: 'USD' }] }, undefined, freshKey()))).toBe('ERR-AccountClosed');
  });
});

describe('the account and identity lifecycle (CONTRACT 10)', () => {
  it('freezes and unfreezes with a justification: a frozen account is neither debited nor credited', async () => {
    const account = await openAccount('alice', 'delegated');
    await fund(account, '50');
    expect(refusal(await operator.post(`/v1/accounts/${account}/freeze`, {}, undefined, freshKey()))).toEqual({ status: 400, error: 'ERR-JustificationRequired' });
    expect(refusal(await operator.post(`/v1/accounts/${account}/freeze`, { justification: '  ' }, undefined, freshKey()))).toEqual({ status: 400, error: 'ERR-JustificationRequired' });
    expect(refusal(await as('alice').post(`/v1/accounts/${account}/freeze`, { justification: 'mine' }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await operator.post(`/v1/accounts/${account}/unfreeze`, { justification: 'not frozen' }, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-InvalidTransition' });
    const held = await outcome(as('alice'), await as('alice').post('/v1/reservations', { payer: account, amount: '5', asset: 'USD' }, undefined, freshKey()));
    await completed(operator, await operator.post(`/v1/accounts/${account}/freeze`, { justification: 'court order 17' }, undefined, freshKey()));
    expect((await as('alice').get(`/v1/accounts/${account}`)).body.status).toBe('frozen');
    const move = (from: string, to: string) => as('alice').post('/v1/transfers', { legs: [{ from, to, amount: '1', asset: 'USD' }] }, undefined, freshKey());
    expect(await rejected(as('alice'), await move(account, acct('alice')))).toBe('ERR-AccountFrozen');
    expect(await rejected(as('alice'), await move(acct('alice'), account))).toBe('ERR-AccountFrozen');
    expect(await rejected(as('alice'), await as('alice').post('/v1/reservations', { payer: account, amount: '1', asset: 'USD' }, undefined, freshKey()))).toBe('ERR-AccountFrozen');
    expect(await rejected(as('alice'), await as('alice').post(`/v1/reservations/${held.operation_reference}/capture`, { to: acct('carol') }, undefined, freshKey()))).toBe('ERR-AccountFrozen');
    // A hold already taken may be released back to it.
    await completed(as('alice'), await as('alice').post(`/v1/reservations/${held.operation_reference}/release`, {}, undefined, freshKey()));
    expect(refusal(await operator.post(`/v1/accounts/${account}/freeze`, { justification: 'twice' }, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-InvalidTransition' });
    await completed(operator, await operator.post(`/v1/accounts/${account}/unfreeze`, { justification: 'order lifted' }, undefined, freshKey()));
    await completed(as('alice'), await move(account, acct('alice')));
  });

  it('closes an account only when empty, and for good', async () => {
    const account = await openAccount('alice', 'delegated');
    await fund(account, '3');
    expect(refusal(await as('bob').post(`/v1/accounts/${account}/close`, {}, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await rejected(as('alice'), await as('alice').post(`/v1/accounts/${account}/close`, {}, undefined, freshKey()))).toBe('ERR-AccountNotEmpty');
    await completed(as('alice'), await as('alice').post('/v1/transfers', { legs: [{ from: account, to: acct('alice'), amount: '3', asset: 'USD' }] }, undefined, freshKey()));
    await completed(as('alice'), await as('alice').post(`/v1/accounts/${account}/close`, {}, undefined, freshKey()));
    expect((await as('alice').get(`/v1/accounts/${account}`)).body).toMatchObject({ status: 'closed', closed: true });
    expect(refusal(await as('alice').post(`/v1/accounts/${account}/close`, {}, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-AccountClosed' });
    expect(refusal(await operator.post(`/v1/accounts/${account}/freeze`, { justification: 'late' }, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-AccountClosed' });
    expect(await rejected(as('alice'), await as('alice').post('/v1/transfers', { legs: [{ from: acct('alice'), to: account, amount: '1', asset: 'USD' }] }, undefined, freshKey()))).toBe('ERR-AccountClosed');
    // The operator closes an empty owned account too.
    const owned = await openAccount('alice', 'owned');
    await completed(operator, await operator.post(`/v1/accounts/${owned}/close`, {}, undefined, freshKey()));
  });

  it('restricts an identity: its commands are refused, value still reaches it', async () => {
    expect(refusal(await operator.post(`/v1/ops/identities/${id('dave')}/restrict`, {}, undefined, freshKey()))).toEqual({ status: 400, error: 'ERR-JustificationRequired' });
    expect(refusal(await as('alice').post(`/v1/ops/identities/${id('dave')}/restrict`, { justification: 'x' }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusal(await operator.post(`/v1/ops/identities/did:ledger:id:operator/restrict`, { justification: 'x' }, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-InvalidTransition' });
    await completed(operator, await operator.post(`/v1/ops/identities/${id('dave')}/restrict`, { justification: 'sanctions screening' }, undefined, freshKey()));
    expect(refusal(await as('dave').post('/v1/accounts', { custody: 'delegated', kind: 'customer', owner: id('dave') }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-IdentityRestricted' });
    await fund(acct('dave'), '4');
    expect(refusal(await as('dave').post('/v1/transfers', { legs: [{ from: acct('dave'), to: acct('alice'), amount: '1', asset: 'USD' }] }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-IdentityRestricted' });
    expect((await as('dave').get(`/v1/accounts/${acct('dave')}`)).status).toBe(200);
    await completed(operator, await operator.post(`/v1/ops/identities/${id('dave')}/unrestrict`, { justification: 'cleared' }, undefined, freshKey()));
    await completed(as('dave'), await as('dave').post('/v1/transfers', { legs: [{ from: acct('dave'), to: acct('alice'), amount: '1', asset: 'USD' }] }, undefined, freshKey()));
  });

  it('answers the accounts-per-identity bound with ERR-BoundExceeded, not ERR-IdentityRestricted', async () => {
    const owned = (await operator.get(`/v1/accounts?owner=${id('frank')}&limit=1000`)).body.items.length as number;
    for (let i = owned; i < 256; i += 32) {
      await Promise.all(Array.from({ length: Math.min(32, 256 - i) }, () => openAccount('frank', 'delegated', identities)));
    }
    const r = await identities.post('/v1/accounts', { custody: 'delegated', kind: 'customer', owner: id('frank') }, undefined, freshKey());
    expect(await rejected(identities, r)).toBe('ERR-BoundExceeded');
  });
});

describe('the recovery setting (CONTRACT 8)', () => {
  const dirs = useTempDirs();
  const withRecovery = (recovery: unknown) => () => loadConfig({ flags: {}, env: {}, readFile: () => JSON.stringify({ recovery }) });

  it('takes a delay of 0 to 366 days and an identity as the authority, and refuses anything else', () => {
    expect(withRecovery({ delayMs: 0 })().recovery).toEqual({ authority: null, delayMs: 0 });
    expect(withRecovery({ delayMs: 366 * 24 * 3600 * 1000, authority: id('carol') })().recovery).toEqual({ authority: id('carol'), delayMs: 366 * 24 * 3600 * 1000 });
    for (const bad of [{ delayMs: -1 }, { delayMs: 366 * 24 * 3600 * 1000 + 1 }, { delayMs: 1.5 }, { authority: 'carol' }, { authority: '' }, { other: 1 }, [], 'x']) {
      expect(withRecovery(bad), JSON.stringify(bad)).toThrow(ConfigError);
    }
  });

  it('refuses to start with an authority that is not an identity of the book (exit 3), and shows a configured one in the terms', async () => {
    const dir = dirs();
    const keys = await writeBook(dir, { carol: 0n });
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ recovery: { authority: id('nobody') } }));
    await expect(startDaemon({ dataDir: dir })).rejects.toThrow(/exited with 3[\s\S]*recovery\.authority did:ledger:id:nobody is not an identity of the book/);
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ recovery: { authority: id('carol'), delayMs: 0 } }));
    const daemon = await startDaemon({ dataDir: dir });
    try {
      const terms = await client(daemon.url, keys.operator).get(`/v1/identities/${id('carol')}/recovery-terms`);
      expect(terms.body.mechanisms).toEqual([{ mechanism: 'recovery_authority', authority: id('carol'), delay: 0 }]);
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  });
});
