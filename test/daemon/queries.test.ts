/**
 * Query routes over the real daemon: statements (spec 9), movements (10), trial
 * balance (11), accounts (12), assets (13), aliases (14) and operations (CONTRACT 4),
 * with every rule of spec 7 for ERR-QueryUnbounded and ERR-MalformedCommand.
 */
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { decided, refused, useDaemon } from './support.js';

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const dave = 'did:ledger:acct:dave';
const shared = useDaemon({ alice: 100_000n, bob: 100n, dave: 100_000n });
const op = shared.as('operator');
const asAlice = shared.as('alice');
const asBob = shared.as('bob');
/** Times around the transfers made in beforeAll. */
let startMs: number;
let endMs: number;
const transfersMade = 5;

beforeAll(async () => {
  startMs = Date.now();
  for (let i = 1; i <= transfersMade; i++) {
    const r = await asAlice.post('/v1/transfers', { legs: [{ amount: String(i), asset: 'USD', from: alice, to: bob }], reference: { n: i } });
    await decided(asAlice, r.body.operation_reference);
  }
  // dave: 16 transfers of 64 legs, 1024 movements in one period (over the statement bound).
  for (let i = 0; i < 16; i++) {
    const legs = Array.from({ length: 64 }, () => ({ amount: '1', asset: 'USD', from: dave, to: bob }));
    const r = await op.post('/v1/transfers', { legs, reference: i });
    await decided(op, r.body.operation_reference);
  }
  endMs = Date.now() + 1;
});

const unbounded = { status: 400, error: 'ERR-QueryUnbounded' };
const malformed = { status: 400, error: 'ERR-MalformedCommand' };

describe('GET /v1/statements', () => {
  const base = () => ({ account: alice, asset: 'USD', from: String(startMs), to: String(endMs) });
  const qs = (q: Record<string, string>) => `/v1/statements?${new URLSearchParams(q)}`;

  it('answers the statement shape, with openings, closings and movements of the period', async () => {
    const r = await asAlice.get(qs(base()));
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['account', 'asset', 'closed', 'closing', 'from', 'from_seq', 'movements', 'opening', 'to', 'to_seq']);
    expect(r.body).toMatchObject({ account: alice, asset: 'USD', from: startMs, to: endMs, opening: { available: '100000', reserved: '0', encumbered: '0' } });
    expect(r.body.closing.available).toBe(String(100_000 - 15));
    expect(r.body.movements).toHaveLength(transfersMade);
    expect(r.body.movements[0]).toMatchObject({ account: alice, amount: '1', asset: 'USD', direction: 'debit', balance: 'available', counterparty: bob, kind: 'transfer', status: 'completed', reference: { n: 1 } });
  });

  it('reads at an earlier view with as_of and refuses a view the book has not reached', async () => {
    const now = await asAlice.get(`/v1/movements?account=${alice}&limit=1`);
    expect((await asAlice.get(qs({ ...base(), as_of: String(now.body.view) }))).status).toBe(200);
    expect(await refused(asAlice.get(qs({ ...base(), as_of: String(now.body.view + 1_000_000) })))).toEqual(unbounded);
  });

  it.each(['account', 'asset', 'from', 'to'])('refuses a statement without %s as unbounded', async (name) => {
    const q: Record<string, string> = base();
    delete q[name];
    expect(await refused(asAlice.get(qs(q)))).toEqual(unbounded);
  });

  it('refuses from after to, and a period of more than 1000 movements, as unbounded', async () => {
    expect(await refused(asAlice.get(qs({ ...base(), from: String(endMs), to: String(startMs) })))).toEqual(unbounded);
    expect(await refused(op.get(qs({ ...base(), account: dave })))).toEqual(unbounded);
    expect(await refused(op.get(qs({ ...base(), account: bob })))).toEqual(unbounded);
  });

  it.each([
    ['a non-numeric from', { from: 'yesterday' }],
    ['a negative to', { to: '-5' }],
    ['a fractional as_of', { as_of: '1.5' }],
    ['a time beyond uint64 precision', { to: '99999999999999999999999' }],
    ['an invalid account', { account: 'did:ledger:id:alice' }],
    ['an invalid asset', { asset: 'usd' }],
    ['an unknown parameter', { page: '1' }],
  ])('refuses %s as malformed', async (_what, change) => {
    expect(await refused(asAlice.get(qs({ ...base(), ...change })))).toEqual(malformed);
  });

  it('refuses a repeated parameter as malformed', async () => {
    expect(await refused(asAlice.get(`${qs(base())}&asset=EUR`))).toEqual(malformed);
  });

  it("refuses an unknown asset, and another customer's account", async () => {
    expect(await refused(asAlice.get(qs({ ...base(), asset: 'XAU' })))).toEqual({ status: 404, error: 'ERR-UnknownAsset' });
    expect(await refused(asBob.get(qs(base())))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
  });
});

describe('GET /v1/movements', () => {
  const qs = (q: Record<string, string>) => `/v1/movements?${new URLSearchParams(q)}`;

  it('pages oldest first, following next to the end, with the page shape', async () => {
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const r = await asAlice.get(qs({ account: alice, limit: '2', ...(cursor ? { cursor } : {}) }));
      expect(r.status).toBe(200);
      expect(typeof r.body.view).toBe('number');
      expect(r.body.movements.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.movements.map((m: { seq: number }) => m.seq));
      cursor = r.body.next;
      if (cursor === undefined) break;
      expect(cursor).toMatch(/^[0-9a-f]+$/);
    }
    // The genesis opening, then the transfers.
    expect(seen).toHaveLength(transfersMade + 1);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
  });

  it('filters by identity, period, asset and direction', async () => {
    const byIdentity = await asAlice.get(qs({ identity: 'did:ledger:id:alice', limit: '1000' }));
    expect(byIdentity.body.movements).toHaveLength(transfersMade + 1);
    expect(byIdentity.body.movements[0]).toMatchObject({ kind: 'opening', status: 'opening', direction: 'credit' });
    const period = await asAlice.get(qs({ account: alice, limit: '1000', from: String(startMs), to: String(endMs) }));
    expect(period.body.movements).toHaveLength(transfersMade);
    const empty = await asAlice.get(qs({ account: alice, limit: '1000', from: String(startMs), to: String(startMs) }));
    expect(empty.body.movements).toHaveLength(0);
    expect((await asAlice.get(qs({ account: alice, limit: '1000', asset: 'EUR' }))).body.movements).toHaveLength(0);
    expect((await asAlice.get(qs({ account: alice, limit: '1000', direction: 'credit' }))).body.movements).toHaveLength(1);
    expect((await asAlice.get(qs({ account: alice, limit: '1000', direction: 'debit' }))).body.movements).toHaveLength(transfersMade);
  });

  it('refuses a cursor with other filters, and one that is not hex', async () => {
    const first = await asAlice.get(qs({ account: alice, limit: '1' }));
    expect(first.body.next).toBeDefined();
    expect(await refused(asAlice.get(qs({ account: alice, limit: '1', direction: 'debit', cursor: first.body.next })))).toEqual(malformed);
    expect((await asAlice.get(qs({ account: alice, limit: '3', cursor: first.body.next }))).status).toBe(200);
    expect(await refused(asAlice.get(qs({ account: alice, limit: '1', cursor: 'zz-not-hex' })))).toEqual(malformed);
    expect(await refused(asAlice.get(qs({ account: alice, limit: '1', cursor: 'abcdef' })))).toEqual(malformed);
  });

  it.each([
    ['both account and identity', { account: alice, identity: 'did:ledger:id:alice', limit: '5' }],
    ['neither account nor identity', { limit: '5' }],
    ['no limit', { account: alice }],
    ['a limit of 1001', { account: alice, limit: '1001' }],
    ['a limit of many digits', { account: alice, limit: '9'.repeat(400) }],
    ['a limit above 1000 with leading zeros', { account: alice, limit: '0001001' }],
    ['from without to', { account: alice, limit: '5', from: '1' }],
    ['to without from', { account: alice, limit: '5', to: '1' }],
    ['from after to', { account: alice, limit: '5', from: '10', to: '9' }],
  ])('refuses %s as unbounded', async (_what, q) => {
    expect(await refused(asAlice.get(qs(q)))).toEqual(unbounded);
  });

  it.each([
    ['a limit not made of digits', { account: alice, limit: '10a' }],
    ['a negative limit', { account: alice, limit: '-1' }],
    ['a fractional limit', { account: alice, limit: '1.5' }],
    ['an empty limit', { account: alice, limit: '' }],
    ['a limit of zero', { account: alice, limit: '0' }],
    ['a non-numeric from', { account: alice, limit: '5', from: 'a', to: '9' }],
    ['a direction other than debit or credit', { account: alice, limit: '5', direction: 'both' }],
    ['an invalid account', { account: 'alice', limit: '5' }],
    ['an invalid identity', { identity: 'did:ledger:acct:alice', limit: '5' }],
    ['an invalid asset', { account: alice, limit: '5', asset: '1USD' }],
    ['an unknown parameter', { account: alice, limit: '5', counterparty: bob }],
  ])('refuses %s as malformed', async (_what, q) => {
    expect(await refused(asAlice.get(qs(q)))).toEqual(malformed);
  });

  it("refuses another customer's account and an unknown asset", async () => {
    expect(await refused(asBob.get(qs({ account: alice, limit: '5' })))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await refused(asBob.get(qs({ identity: 'did:ledger:id:alice', limit: '5' })))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await refused(asAlice.get(qs({ account: alice, limit: '5', asset: 'XAU' })))).toEqual({ status: 404, error: 'ERR-UnknownAsset' });
  });
});

describe('GET /v1/trial-balance', () => {
  it('answers the operator with the balanced trial balance', async () => {
    const r = await op.get('/v1/trial-balance');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['accounts', 'rows', 'unbalanced', 'view']);
    expect(r.body.unbalanced).toEqual([]);
    expect(r.body.rows).toContainEqual({ asset: 'USD', openings: '0', layers: { available: '0', reserved: '0', encumbered: '0' } });
    expect(r.body.accounts).toBe(7);
  });

  it('filters by asset and ignores amount, whatever it holds', async () => {
    expect((await op.get('/v1/trial-balance?asset=EUR')).body.rows).toEqual([{ asset: 'EUR', openings: '0', layers: { available: '0', reserved: '0', encumbered: '0' } }]);
    expect((await op.get('/v1/trial-balance?amount=not-a-number&amount=2')).status).toBe(200);
  });

  it('refuses a non-operator, a malformed or unknown asset and unknown parameters', async () => {
    expect(await refused(asAlice.get('/v1/trial-balance'))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await refused(shared.as('identities').get('/v1/trial-balance'))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await refused(op.get('/v1/trial-balance?asset=e'))).toEqual(malformed);
    expect(await refused(op.get('/v1/trial-balance?asset=XAU'))).toEqual({ status: 404, error: 'ERR-UnknownAsset' });
    expect(await refused(op.get('/v1/trial-balance?as_of=3'))).toEqual(malformed);
  });
});

describe('GET /v1/accounts/{account}', () => {
  it('shows an account to its owner, the operator and the identities principal', async () => {
    for (const c of [asAlice, op, shared.as('identities')]) {
      const r = await c.get(`/v1/accounts/${alice}`);
      expect(r.status).toBe(200);
      // deposit_ref: what a deposit on the settlement layer names to reach the account (docs/settlement.md).
      const depositRef = createHash('sha256').update(`ledger-deposit-ref:v1:${alice}`).digest('hex');
      expect(r.body).toEqual({ account: alice, closed: false, custody: 'delegated', kind: 'customer', status: 'active', opened_at: 0, owner: 'did:ledger:id:alice', deposit_ref: depositRef });
    }
  });

  it('refuses a malformed id, an unknown account, another customer, and parameters', async () => {
    expect(await refused(asAlice.get('/v1/accounts/alice'))).toEqual(malformed);
    expect(await refused(op.get('/v1/accounts/did:ledger:acct:nobody'))).toEqual({ status: 404, error: 'ERR-UnknownAccount' });
    expect(await refused(asBob.get(`/v1/accounts/${alice}`))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await refused(asAlice.get(`/v1/accounts/${alice}?x=1`))).toEqual(malformed);
  });
});

describe('GET /v1/assets', () => {
  it('lists the registered assets with the asset shape', async () => {
    const r = await asBob.get('/v1/assets');
    expect(r.status).toBe(200);
    expect(r.body).toContainEqual({ id: 'USD', kind: 'fiat', precision: 2, status: 'active', binding: 'book_only', location: null });
    expect(r.body.map((a: { id: string }) => a.id).sort()).toEqual(['BTC', 'EUR', 'USD', 'USDC']);
    expect(await refused(asBob.get('/v1/assets?kind=fiat'))).toEqual(malformed);
  });
});

describe('GET /v1/aliases', () => {
  it('finds the treasury accounts by alias for the operator', async () => {
    const r = await op.get('/v1/aliases?source=ledger&name=treasury:USD');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ account: 'did:ledger:acct:treasury-USD' });
  });

  it('refuses an unknown or unreachable alias with ERR-UnknownAccount and an archived one with ERR-IdentifierArchived', async () => {
    expect(await refused(op.get('/v1/aliases?source=ledger&name=treasury:XAU'))).toEqual({ status: 404, error: 'ERR-UnknownAccount' });
    expect(await refused(asAlice.get('/v1/aliases?source=ledger&name=treasury:USD'))).toEqual({ status: 404, error: 'ERR-UnknownAccount' });
    expect(await refused(op.get('/v1/aliases?source=legacy&name=gone-1'))).toEqual({ status: 410, error: 'ERR-IdentifierArchived' });
    expect(await refused(op.get('/v1/aliases?source=ledger'))).toEqual({ status: 404, error: 'ERR-UnknownAccount' });
    expect(await refused(op.get('/v1/aliases?source=ledger&name=a&name=b'))).toEqual(malformed);
    expect(await refused(op.get('/v1/aliases?source=ledger&name=x&alias=y'))).toEqual(malformed);
  });
});

describe('GET /v1/operations/{operation_reference}', () => {
  it('shows an operation to whoever submitted it and to the operator, to no one else', async () => {
    const r = await asAlice.post('/v1/transfers', { legs: [{ amount: '1', asset: 'USD', from: alice, to: bob }] }, undefined, { 'client-key': 'visible-1' });
    const view = await decided(asAlice, r.body.operation_reference);
    expect(Object.keys(view.body).sort()).toEqual(['client_key', 'command', 'credential', 'deadline', 'decided_at', 'moves', 'operation_reference', 'principal', 'result', 'state', 'submitted_at', 'terminal']);
    expect(view.body.moves).toEqual([{ from: alice, to: bob, amount: '1', asset: 'USD' }]);
    // The transfer's deadline: the daemon's default, 30 s after it was received (stamped just before submitted_at).
    expect(view.body.deadline).toBeGreaterThan(view.body.submitted_at + 29_000);
    expect(view.body.deadline).toBeLessThanOrEqual(view.body.submitted_at + 30_000);
    expect((await op.get(`/v1/operations/${r.body.operation_reference}`)).status).toBe(200);
    expect(await refused(asBob.get(`/v1/operations/${r.body.operation_reference}`))).toEqual({ status: 404, error: 'ERR-UnknownOperation' });
    expect(await refused(asAlice.get('/v1/operations/op_0000'))).toEqual({ status: 404, error: 'ERR-UnknownOperation' });
    expect(await refused(asAlice.get('/v1/operations/op%2F..%2Fx'))).toEqual(malformed);
  });
});
