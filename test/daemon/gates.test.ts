/**
 * The gates every command passes, whichever path decides it (issue 20): commands decided
 * at once, outside the kernel's rounds (disclosures, checkpoints, settlement comparisons,
 * rescans, layer deposits), are refused for a restricted identity and on a closed account
 * as kernel commands are; a revoked grant named through `on-behalf-of` answers
 * ERR-AuthorityRevoked; balances are read only under a grant naming the account (CONTRACT 11).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, decided, refusalOf, useDaemon } from './support.js';

const shared = useDaemon({ alice: 10_000n, bob: 0n, carol: 0n, dave: 5_000n }, { recovery: { delayMs: 0 } });
const id = (name: string) => `did:ledger:id:${name}`;
const acct = (name: string) => `did:ledger:acct:${name}`;
let keyCounter = 0;
const freshKey = () => ({ 'client-key': `gates-${Date.now()}-${++keyCounter}` });

/** Submits and waits for the decision; the decided operation's view, which must carry no error. */
async function completed(api: Client, path: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const r = await api.post(path, body, undefined, { ...freshKey(), ...headers });
  expect([200, 202], r.text).toContain(r.status);
  const view = (await decided(api, r.body.operation_reference)).body;
  expect(view.error, JSON.stringify(view)).toBeUndefined();
  return view;
}

/** The code a command is refused with, at submission or by its decision ('ok' when it is not). */
async function outcome(api: Client, path: string, body: unknown, headers: Record<string, string> = {}): Promise<string> {
  const r = await api.post(path, body, undefined, { ...freshKey(), ...headers });
  if (r.status !== 200 && r.status !== 202) return refusalOf(r).error;
  if (r.body.terminal === true) return 'ok';
  const view = (await decided(api, r.body.operation_reference)).body;
  return view.error === undefined ? 'ok' : view.error.error;
}

const openAccount = async (owner: string) => (await completed(shared.as(owner), '/v1/accounts', { owner: id(owner), kind: 'customer', custody: 'delegated' })).result.account as string;
const holds = (amount: string) => ({ shape: 'holds_at_least', amount, asset: 'USD', kind: 'available' });

/** A checkpoint of the journal as it is now, final. */
async function finalCheckpoint(): Promise<number> {
  const operator = shared.as('operator');
  const taken = await operator.post('/v1/ops/checkpoints', {}, undefined, freshKey());
  expect(taken.status, taken.text).toBe(200);
  expect((await operator.post('/v1/ops/layer/blocks', { count: 3 })).status).toBe(200);
  const number = taken.body.result.anchoring.checkpoint.number as number;
  expect((await operator.get(`/v1/checkpoints/${number}`)).body.status).toBe('final');
  return number;
}

let closed = '';

beforeAll(async () => {
  // An account of alice's that held value, emptied and closed, so that a checkpoint covers it.
  closed = await openAccount('alice');
  await completed(shared.as('alice'), '/v1/transfers', { legs: [{ from: acct('alice'), to: closed, asset: 'USD', amount: '5' }] });
  await completed(shared.as('alice'), '/v1/transfers', { legs: [{ from: closed, to: acct('alice'), asset: 'USD', amount: '5' }] });
  await completed(shared.as('alice'), `/v1/accounts/${closed}/close`, {});
  await finalCheckpoint();
});

describe('commands decided at once pass the gates of every command', () => {
  it('refuses a restricted identity its disclosures (ERR-IdentityRestricted), as its transfers, and answers a repeat from before', async () => {
    const dave = shared.as('dave');
    const operator = shared.as('operator');
    const disclosure = { subject: acct('dave'), assertion: holds('1'), recipient_reference: 'ab'.repeat(32) };
    const before = await dave.post('/v1/disclosures', disclosure, undefined, { 'client-key': 'dave-before' });
    expect(before.status, before.text).toBe(200);
    await completed(operator, `/v1/ops/identities/${id('dave')}/restrict`, { justification: 'gates test' });
    try {
      expect(await outcome(dave, '/v1/transfers', { legs: [{ from: acct('dave'), to: acct('bob'), asset: 'USD', amount: '1' }] })).toBe('ERR-IdentityRestricted');
      expect(refusalOf(await dave.post('/v1/disclosures', disclosure, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-IdentityRestricted' });
      // A repeat is answered from its first reply, as the kernel answers repeats: never refused anew, never a second effect.
      const repeat = await dave.post('/v1/disclosures', disclosure, undefined, { 'client-key': 'dave-before' });
      expect(repeat.status).toBe(200);
      expect(repeat.body).toEqual(before.body);
      // The operator may still disclose about a restricted identity's account under a legal obligation.
      const legal = await operator.post('/v1/disclosures', { ...disclosure, legal_obligation: 'court order 7' }, undefined, freshKey());
      expect(legal.status, legal.text).toBe(200);
    } finally {
      await completed(operator, `/v1/ops/identities/${id('dave')}/unrestrict`, { justification: 'gates test' });
    }
    expect((await dave.post('/v1/disclosures', disclosure, undefined, freshKey())).status).toBe(200);
  });

  it('refuses a disclosure about a closed account (ERR-AccountClosed) to those who reach it, and tells a stranger nothing', async () => {
    const about = { subject: closed, assertion: { shape: 'flows_bound', asset: 'USD', bound: '5', bound_kind: 'at_least', direction: 'in', from_sequence: 1, to_sequence: 3 }, recipient_reference: 'cd'.repeat(32) };
    expect(refusalOf(await shared.as('alice').post('/v1/disclosures', about, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-AccountClosed' });
    expect(refusalOf(await shared.as('operator').post('/v1/disclosures', { ...about, legal_obligation: 'court order 8' }, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-AccountClosed' });
    expect(refusalOf(await shared.as('bob').post('/v1/disclosures', about, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    // As a transfer into it is.
    expect(await outcome(shared.as('alice'), '/v1/transfers', { legs: [{ from: acct('alice'), to: closed, asset: 'USD', amount: '1' }] })).toBe('ERR-AccountClosed');
  });
});

describe('a revoked grant named through on-behalf-of', () => {
  it('answers ERR-AuthorityRevoked (CONTRACT 5), not ERR-NotAuthorised', async () => {
    const alice = shared.as('alice');
    const carol = shared.as('carol');
    const terms = { kind: 'delegated', principal: id('carol'), subject: { account: acct('alice') }, ops: ['transfer'], per_operation: '100' };
    const grant = (await completed(alice, '/v1/grants', terms)).result.grant as string;
    const transfer = { legs: [{ from: acct('alice'), to: acct('carol'), asset: 'USD', amount: '1' }] };
    expect(await outcome(carol, '/v1/transfers', transfer, { 'on-behalf-of': id('alice') })).toBe('ok');
    await completed(alice, `/v1/grants/${grant}/revoke`, {});
    expect(refusalOf(await carol.post('/v1/transfers', transfer, undefined, { ...freshKey(), 'on-behalf-of': id('alice') }))).toEqual({ status: 403, error: 'ERR-AuthorityRevoked' });
    // Without the header, the same use is refused the same way (by the decision).
    expect(await outcome(carol, '/v1/transfers', transfer)).toBe('ERR-AuthorityRevoked');
    // One who never held a grant over alice is not authorised at all.
    expect(refusalOf(await shared.as('bob').post('/v1/transfers', transfer, undefined, { ...freshKey(), 'on-behalf-of': id('alice') }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
  });
});

describe('balances (CONTRACT 11)', () => {
  it('are read under a grant naming the account, not under a grant over another account of the same owner', async () => {
    const alice = shared.as('alice');
    const bob = shared.as('bob');
    const second = await openAccount('alice');
    await completed(alice, '/v1/transfers', { legs: [{ from: acct('alice'), to: second, asset: 'USD', amount: '7' }] });
    await completed(alice, '/v1/grants', { kind: 'delegated', principal: id('bob'), subject: { account: acct('alice') }, ops: ['transfer'], per_operation: '1' });
    expect((await bob.get(`/v1/accounts/${acct('alice')}/balances`)).status).toBe(200);
    // The account view of the other account is bob's to read (a grant over its owner); its balances are not.
    expect((await bob.get(`/v1/accounts/${second}`)).status).toBe(200);
    expect(refusalOf(await bob.get(`/v1/accounts/${second}/balances`))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    // A grant over delegated_accounts names every account of alice in delegated custody.
    await completed(alice, '/v1/grants', { kind: 'delegated', principal: id('bob'), subject: 'delegated_accounts', ops: ['transfer'], per_operation: '1' });
    const read = await bob.get(`/v1/accounts/${second}/balances`);
    expect(read.status, read.text).toBe(200);
    expect(read.body.balances).toEqual([{ asset: 'USD', available: '7', reserved: '0', encumbered: '0' }]);
  });
});

describe('bounds one principal could fill for another (CONTRACT 8)', () => {
  it('hands an account over only when its new owner accepts the succession by completing it', async () => {
    const bob = shared.as('bob');
    const carol = shared.as('carol');
    const account = await openAccount('bob');
    const { pending } = (await completed(bob, `/v1/accounts/${account}/custody/changes`, { kind: 'succession', new_owner: id('carol') })).result;
    // Whoever opened it cannot complete it: that would hand carol an account she never asked for.
    expect(await outcome(bob, `/v1/accounts/${account}/custody/changes/${pending}/complete`, {})).toBe('ERR-NotAuthorised');
    expect((await bob.get(`/v1/accounts/${account}/custody`)).body).toMatchObject({ owner: id('bob'), successor: id('carol'), epoch: 0 });
    expect(await outcome(carol, `/v1/accounts/${account}/custody/changes/${pending}/complete`, {})).toBe('ok');
    expect((await carol.get(`/v1/accounts/${account}/custody`)).body).toMatchObject({ owner: id('carol'), successor: null, epoch: 1, changes: [{ pending, state: 'completed' }] });
  });

  it('does not count closed accounts toward an identity\'s bound on accounts', async () => {
    const identities = shared.as('identities');
    const owner = (await completed(identities, '/v1/identities', { scheme: 'api-key' })).result.identity as string;
    const open = () => identities.post('/v1/accounts', { owner, kind: 'customer', custody: 'delegated' }, undefined, freshKey());
    const accounts: string[] = [];
    // accountsPerIdentityMax (256) open accounts, in rounds of 64.
    for (let round = 0; round < 4; round++) {
      const replies = await Promise.all(Array.from({ length: 64 }, open));
      for (const r of replies) {
        expect(r.status, r.text).toBe(202);
        accounts.push((await decided(identities, r.body.operation_reference)).body.result.account);
      }
    }
    const refused = (await decided(identities, (await open()).body.operation_reference)).body;
    expect(refused.error).toMatchObject({ error: 'ERR-BoundExceeded' });
    await completed(shared.as('operator'), `/v1/accounts/${accounts[0]}/close`, {});
    const reopened = (await decided(identities, (await open()).body.operation_reference)).body;
    expect(reopened.error, JSON.stringify(reopened)).toBeUndefined();
    expect((await identities.get(`/v1/accounts?owner=${owner}&limit=1000`)).body.items).toHaveLength(257);
  }, 60_000);
});
