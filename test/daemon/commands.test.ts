/**
 * Command routes over the real daemon: transfers (spec 7), reservations (18) with
 * capture and release (CONTRACT 4), account opening (5); the reply of spec 2.1,
 * client keys, references, on-behalf-of, and every stated refusal.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decided, refused, useDaemon } from './support.js';

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const carol = 'did:ledger:acct:carol';
const shared = useDaemon({ alice: 1_000_000n, bob: 1_000n, carol: 0n });
const op = shared.as('operator');
const asAlice = shared.as('alice');
const asBob = shared.as('bob');

const leg = (amount: string, from = alice, to = bob, asset = 'USD') => ({ amount, asset, from, to });
const transfer = (amount: string, extra: Record<string, unknown> = {}) => ({ legs: [leg(amount)], ...extra });
let keyCounter = 0;
const freshKey = () => ({ 'client-key': `ck-${Date.now()}-${++keyCounter}` });

describe('POST /v1/transfers', () => {
  it('acknowledges at Received with 202 and the reply of spec 2.1, then decides Completed', async () => {
    const r = await asAlice.post('/v1/transfers', transfer('250'), undefined, freshKey());
    expect(r.status).toBe(202);
    expect(Object.keys(r.body).sort()).toEqual(['client_key', 'client_key_derived', 'operation_reference', 'state', 'terminal']);
    expect(r.body).toMatchObject({ client_key_derived: false, terminal: false, state: 'Received' });
    const view = await decided(asAlice, r.body.operation_reference);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({ operation_reference: r.body.operation_reference, command: 'transfer', state: 'Completed', terminal: true });
    expect(view.body.result.postings).toHaveLength(2);
    expect(typeof view.body.submitted_at).toBe('number');
    expect(typeof view.body.decided_at).toBe('number');
  });

  it('answers a repeat under the same client key with the decided reply, 200, and no second effect', async () => {
    const headers = freshKey();
    const first = await asAlice.post('/v1/transfers', transfer('7'), undefined, headers);
    await decided(asAlice, first.body.operation_reference);
    const before = await asAlice.get(`/v1/movements?account=${alice}&limit=1000`);
    const again = await asAlice.post('/v1/transfers', transfer('7'), undefined, headers);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ operation_reference: first.body.operation_reference, terminal: true, class: 'terminal', state: 'Completed' });
    expect(again.body.result.postings).toHaveLength(2);
    const after = await asAlice.get(`/v1/movements?account=${alice}&limit=1000`);
    expect(after.body.movements.length).toBe(before.body.movements.length);
  });

  it('derives the client key from principal, method, path and canonical JSON when none is sent', async () => {
    const body = '{ "legs": [ {"to": "did:ledger:acct:bob", "from": "did:ledger:acct:alice", "asset": "USD", "amount": "3"} ], "reference": {"b": 1, "a": [true, null]} }';
    const r = await asAlice.post('/v1/transfers', body);
    expect(r.status).toBe(202);
    const canonical = '{"legs":[{"amount":"3","asset":"USD","from":"did:ledger:acct:alice","to":"did:ledger:acct:bob"}],"reference":{"a":[true,null],"b":1}}';
    const expected = createHash('sha256').update(`did:ledger:id:alice\nPOST\n/v1/transfers\n${canonical}`).digest('hex');
    expect(r.body).toMatchObject({ client_key: expected, client_key_derived: true });
    // The same request again, laid out differently, is a repeat of the first.
    const again = await asAlice.post('/v1/transfers', JSON.parse(body));
    expect(again.body.operation_reference).toBe(r.body.operation_reference);
  });

  it('echoes reference exactly as sent, in the reply, the operation view and the movements', async () => {
    const reference = '{ "invoice" : 7, "note": "caf\\u00e9 ✓", "n": 1.50 }';
    const r = await asAlice.post('/v1/transfers', `{"legs":[${JSON.stringify(leg('11'))}],"reference":${reference}}`, undefined, freshKey());
    expect(r.text).toContain(`"reference":${reference}`);
    const view = await decided(asAlice, r.body.operation_reference);
    expect(view.text).toContain(`"reference":${reference}`);
    const moves = await asAlice.get(`/v1/movements?account=${alice}&limit=1000`);
    const mine = moves.text.split('"operation":').filter((part) => part.includes(r.body.operation_reference));
    expect(mine.length).toBeGreaterThan(0);
    expect(moves.text).toContain(`"reference":${reference}`);
  });

  it('takes a reference of exactly 1024 bytes of UTF-8 and refuses 1025', async () => {
    const fits = `"${'é'.repeat(511)}"`; // 2 + 511 * 2 bytes
    expect(Buffer.byteLength(fits)).toBe(1024);
    expect((await asAlice.post('/v1/transfers', `{"legs":[${JSON.stringify(leg('1'))}],"reference":${fits}}`, undefined, freshKey())).status).toBe(202);
    const over = `"${'é'.repeat(511)}a"`;
    expect(await refused(asAlice.post('/v1/transfers', `{"legs":[${JSON.stringify(leg('1'))}],"reference":${over}}`, undefined, freshKey()))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
  });

  it('refuses a client key reused for a different request', async () => {
    const headers = freshKey();
    expect((await asAlice.post('/v1/transfers', transfer('1'), undefined, headers)).status).toBe(202);
    expect(await refused(asAlice.post('/v1/transfers', transfer('2'), undefined, headers))).toEqual({ status: 409, error: 'ERR-ClientKeyReused' });
  });

  it('takes a client key of 256 characters and refuses 257 or an empty one', async () => {
    expect((await asAlice.post('/v1/transfers', transfer('1'), undefined, { 'client-key': 'k'.repeat(256) })).status).toBe(202);
    expect(await refused(asAlice.post('/v1/transfers', transfer('1'), undefined, { 'client-key': 'k'.repeat(257) }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(await refused(asAlice.post('/v1/transfers', transfer('1'), undefined, { 'client-key': '' }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
  });

  it.each([
    ['"0"', 'ERR-ZeroAmount'],
    ['"10.5"', 'ERR-PrecisionExceeded'],
    [`"${(1n << 128n).toString()}"`, 'ERR-PrecisionExceeded'],
    ['"-1"', 'ERR-MalformedCommand'],
    ['"01"', 'ERR-MalformedCommand'],
    ['"1e3"', 'ERR-MalformedCommand'],
    ['"abc"', 'ERR-MalformedCommand'],
    ['5', 'ERR-MalformedCommand'],
  ])('refuses amount %s with %s', async (amount, code) => {
    const body = `{"legs":[{"amount":${amount},"asset":"USD","from":"${alice}","to":"${bob}"}]}`;
    expect((await refused(asAlice.post('/v1/transfers', body, undefined, freshKey()))).error).toBe(code);
  });

  it.each([
    ['an invalid account', { legs: [leg('1', 'did:ledger:acct:', bob)] }, 400, 'ERR-MalformedCommand'],
    ['an invalid asset symbol', { legs: [leg('1', alice, bob, 'usd')] }, 400, 'ERR-MalformedCommand'],
    ['an unknown asset', { legs: [leg('1', alice, bob, 'XYZ')] }, 404, 'ERR-UnknownAsset'],
    ['no legs', { legs: [] }, 400, 'ERR-MalformedCommand'],
    ['too many legs', { legs: Array.from({ length: 65 }, () => leg('1')) }, 400, 'ERR-BatchTooLarge'],
    ['a leg to the same account', { legs: [leg('1', alice, alice)] }, 400, 'ERR-UnsupportedLeg'],
    ['a leg missing a member', { legs: [{ amount: '1', asset: 'USD', from: alice }] }, 400, 'ERR-MalformedCommand'],
    ['an unknown member', { legs: [leg('1')], colour: 'red' }, 400, 'ERR-MalformedCommand'],
    ['no legs member', { reference: 1 }, 400, 'ERR-MalformedCommand'],
    ['a fractional deadline', { legs: [leg('1')], deadline: 1.5 }, 400, 'ERR-MalformedCommand'],
    ['a text deadline', { legs: [leg('1')], deadline: '5' }, 400, 'ERR-MalformedCommand'],
    ['a deadline past the horizon', { legs: [leg('1')], deadline: Date.now() + 400 * 86_400_000 }, 400, 'ERR-MalformedCommand'],
    ["another customer's account", { legs: [leg('1', bob, alice)] }, 403, 'ERR-NotAuthorised'],
  ])('refuses %s', async (_what, body, status, error) => {
    expect(await refused(asAlice.post('/v1/transfers', body, undefined, freshKey()))).toEqual({ status, error });
  });

  it('answers an unknown account to the operator with ERR-UnknownAccount', async () => {
    expect(await refused(op.post('/v1/transfers', { legs: [leg('1', 'did:ledger:acct:nobody', bob)] }))).toEqual({ status: 404, error: 'ERR-UnknownAccount' });
  });

  it('acknowledges an overdraft, then rejects it in the decision with ERR-InsufficientAvailable', async () => {
    const r = await asBob.post('/v1/transfers', { legs: [leg('999999', bob, alice)] });
    expect(r.status).toBe(202);
    const view = await decided(asBob, r.body.operation_reference);
    expect(view.body).toMatchObject({ state: 'Rejected', terminal: true, error: { error: 'ERR-InsufficientAvailable' } });
  });

  it('expires a transfer whose deadline has passed, moving nothing', async () => {
    const r = await asAlice.post('/v1/transfers', transfer('5', { deadline: 1 }), undefined, freshKey());
    expect(r.status).toBe(202);
    expect((await decided(asAlice, r.body.operation_reference)).body).toMatchObject({ state: 'Expired', terminal: true });
  });

  it('lets the operator act in delegated custody and records on-behalf-of', async () => {
    const r = await op.post('/v1/transfers', transfer('2'), undefined, { 'on-behalf-of': 'did:ledger:id:alice', ...freshKey() });
    expect(r.status).toBe(202);
    const view = await decided(op, r.body.operation_reference);
    expect(view.body.state).toBe('Completed');
    const moves = await op.get(`/v1/movements?account=${bob}&limit=1000`);
    const entry = moves.body.movements.find((m: { operation: string }) => m.operation === r.body.operation_reference);
    expect(entry.authorities[0]).toMatchObject({ kind: 'operator', principal: 'did:ledger:id:operator', on_behalf_of: 'did:ledger:id:alice' });
  });

  it('refuses on-behalf-of another identity from a customer, and a malformed one', async () => {
    expect(await refused(asAlice.post('/v1/transfers', transfer('1'), undefined, { 'on-behalf-of': 'did:ledger:id:bob' }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await refused(asAlice.post('/v1/transfers', transfer('1'), undefined, { 'on-behalf-of': 'bob' }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect((await asAlice.post('/v1/transfers', transfer('1'), undefined, { 'on-behalf-of': 'did:ledger:id:alice', ...freshKey() })).status).toBe(202);
  });

  it('refuses a missing, unknown or malformed bearer with 401', async () => {
    expect(await refused(asAlice.post('/v1/transfers', transfer('1'), null))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect(await refused(asAlice.post('/v1/transfers', transfer('1'), 'not-a-key'))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect(await refused(asAlice.raw('POST', '/v1/transfers', { body: '{}', headers: { authorization: `Basic ${shared.keys.customers.alice}`, 'content-type': 'application/json' } }))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
  });

  it('refuses malformed JSON, other content types, non-object bodies, oversized bodies and query parameters', async () => {
    const bearer = { authorization: `Bearer ${shared.keys.customers.alice}` };
    const cases: [string, Record<string, string>][] = [
      ['{"legs": [', { 'content-type': 'application/json' }],
      ['[1,2]', { 'content-type': 'application/json' }],
      ['"text"', { 'content-type': 'application/json' }],
      ['', { 'content-type': 'application/json' }],
      ['legs=1', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['{}', { 'content-type': 'text/plain' }],
      [`{"legs":[],"reference":"${'x'.repeat(70_000)}"}`, { 'content-type': 'application/json' }],
    ];
    for (const [body, headers] of cases) {
      expect(await refused(asAlice.raw('POST', '/v1/transfers', { body, headers: { ...bearer, ...headers } }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    }
    expect(await refused(asAlice.post('/v1/transfers?x=1', transfer('1')))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
  });
});

describe('POST /v1/reservations, capture and release', () => {
  async function reserve(amount: string, payer = alice, as = asAlice) {
    const r = await as.post('/v1/reservations', { amount, asset: 'USD', payer }, undefined, freshKey());
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ state: 'Received', terminal: false });
    const view = await decided(as, r.body.operation_reference);
    return { ref: r.body.operation_reference as string, view: view.body };
  }

  it('reserves, then captures part to another account and releases the rest', async () => {
    const { ref, view } = await reserve('100');
    expect(view).toMatchObject({ command: 'reserve', state: 'Reserved', terminal: false });
    const cap = await asAlice.post(`/v1/reservations/${ref}/capture`, { to: carol, amount: '60', reference: [1] }, undefined, freshKey());
    expect(cap.status).toBe(202);
    expect(cap.body.reference).toEqual([1]);
    expect((await decided(asAlice, cap.body.operation_reference)).body).toMatchObject({ command: 'capture', state: 'Completed' });
    expect((await asAlice.get(`/v1/operations/${ref}`)).body).toMatchObject({ state: 'Captured', terminal: true });
    // The view says who submitted it and what it asked to move (the dashboard shows both).
    expect((await asAlice.get(`/v1/operations/${ref}`)).body).toMatchObject({ command: 'reserve', principal: expect.stringMatching(/^did:ledger:id:/), moves: [{ from: expect.stringMatching(/^did:ledger:acct:/), to: null, amount: '100', asset: 'USD' }] });
    const moves = await op.get(`/v1/movements?account=${carol}&limit=10`);
    expect(moves.body.movements.map((m: { amount: string; kind: string }) => [m.kind, m.amount])).toContainEqual(['capture', '60']);
  });

  it('releases a reservation', async () => {
    const { ref } = await reserve('40');
    const rel = await asAlice.post(`/v1/reservations/${ref}/release`, {}, undefined, freshKey());
    expect(rel.status).toBe(202);
    expect((await decided(asAlice, rel.body.operation_reference)).body.state).toBe('Completed');
    expect((await asAlice.get(`/v1/operations/${ref}`)).body.state).toBe('Released');
    expect(await refused(asAlice.post(`/v1/reservations/${ref}/release`, {}, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-OperationTerminal' });
    expect(await refused(asAlice.post(`/v1/reservations/${ref}/capture`, { to: bob }, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-OperationTerminal' });
  });

  it('rejects in the decision a reservation above the available balance, and a capture to the payer', async () => {
    const { view } = await reserve('999999', bob, asBob);
    expect(view).toMatchObject({ state: 'Rejected', error: { error: 'ERR-InsufficientAvailable' } });
    const { ref } = await reserve('5');
    const cap = await asAlice.post(`/v1/reservations/${ref}/capture`, { to: alice }, undefined, freshKey());
    expect((await decided(asAlice, cap.body.operation_reference)).body).toMatchObject({ state: 'Rejected', error: { error: 'ERR-UnsupportedLeg' } });
  });

  it('hides a reservation from other customers and refuses unknown or malformed references', async () => {
    const { ref } = await reserve('3');
    expect(await refused(asBob.post(`/v1/reservations/${ref}/release`, {}))).toEqual({ status: 404, error: 'ERR-UnknownOperation' });
    expect(await refused(asAlice.post('/v1/reservations/op_nothing/release', {}))).toEqual({ status: 404, error: 'ERR-UnknownOperation' });
    expect(await refused(asAlice.post('/v1/reservations/op%20x/release', {}))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    // The operator may finish any reservation.
    expect((await op.post(`/v1/reservations/${ref}/release`, {}, undefined, freshKey())).status).toBe(202);
  });

  it.each([
    ['a missing payer', { amount: '1', asset: 'USD' }, 400, 'ERR-MalformedCommand'],
    ['a zero amount', { amount: '0', asset: 'USD', payer: alice }, 400, 'ERR-ZeroAmount'],
    ['a fractional amount', { amount: '0.5', asset: 'USD', payer: alice }, 400, 'ERR-PrecisionExceeded'],
    ['an unknown asset', { amount: '1', asset: 'XAU', payer: alice }, 404, 'ERR-UnknownAsset'],
    ['a malformed payer', { amount: '1', asset: 'USD', payer: 'alice' }, 400, 'ERR-MalformedCommand'],
    ["another's account", { amount: '1', asset: 'USD', payer: bob }, 403, 'ERR-NotAuthorised'],
    ['a negative deadline', { amount: '1', asset: 'USD', payer: alice, deadline: -1 }, 400, 'ERR-MalformedCommand'],
  ])('refuses a reservation with %s', async (_what, body, status, error) => {
    expect(await refused(asAlice.post('/v1/reservations', body, undefined, freshKey()))).toEqual({ status, error });
  });

  it('refuses a capture without `to`, with a bad amount or unknown members, and a release with members', async () => {
    const { ref } = await reserve('2');
    expect(await refused(asAlice.post(`/v1/reservations/${ref}/capture`, {}))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(await refused(asAlice.post(`/v1/reservations/${ref}/capture`, { to: bob, amount: '0' }))).toEqual({ status: 400, error: 'ERR-ZeroAmount' });
    expect(await refused(asAlice.post(`/v1/reservations/${ref}/capture`, { to: bob, extra: 1 }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(await refused(asAlice.post(`/v1/reservations/${ref}/release`, { amount: '1' }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
  });
});

describe('POST /v1/accounts', () => {
  it('opens a customer account for an identity, by the identities principal, and shows it', async () => {
    const ids = shared.as('identities');
    const r = await ids.post('/v1/accounts', { custody: 'delegated', kind: 'customer', owner: 'did:ledger:id:carol', reference: 'kyc-1' });
    expect(r.status).toBe(202);
    expect(r.body.reference).toBe('kyc-1');
    const view = await decided(ids, r.body.operation_reference);
    expect(view.body).toMatchObject({ command: 'open_account', state: 'Completed' });
    const account = view.body.result.account as string;
    expect(account).toMatch(/^did:ledger:acct:/);
    const shown = await shared.as('carol').get(`/v1/accounts/${account}`);
    expect(shown.body).toMatchObject({ account, owner: 'did:ledger:id:carol', custody: 'delegated', kind: 'customer', status: 'active', closed: false });
    expect(typeof shown.body.opened_at).toBe('number');
  });

  it('lets the owner open its own account, and the operator a treasury with limits', async () => {
    const own = await asBob.post('/v1/accounts', { custody: 'delegated', kind: 'customer', owner: 'did:ledger:id:bob' });
    expect((await decided(asBob, own.body.operation_reference)).body.state).toBe('Completed');
    const t = await op.post('/v1/accounts', { custody: 'delegated', kind: 'treasury', owner: 'did:ledger:id:operator', treasury_limits: { EUR: '1000' } });
    expect((await decided(op, t.body.operation_reference)).body.state).toBe('Completed');
  });

  it.each([
    ['owned custody (no recovery terms can be acknowledged yet)', { custody: 'owned', kind: 'customer', owner: 'did:ledger:id:alice' }, 403, 'ERR-NotAuthorised'],
    ["another identity's account", { custody: 'delegated', kind: 'customer', owner: 'did:ledger:id:bob' }, 403, 'ERR-NotAuthorised'],
    ['a treasury, by a customer', { custody: 'delegated', kind: 'treasury', owner: 'did:ledger:id:alice' }, 403, 'ERR-NotAuthorised'],
    ['an unknown kind', { custody: 'delegated', kind: 'savings', owner: 'did:ledger:id:alice' }, 400, 'ERR-MalformedCommand'],
    ['an unknown custody', { custody: 'shared', kind: 'customer', owner: 'did:ledger:id:alice' }, 400, 'ERR-MalformedCommand'],
    ['a malformed owner', { custody: 'delegated', kind: 'customer', owner: 'alice' }, 400, 'ERR-MalformedCommand'],
    ['a missing owner', { custody: 'delegated', kind: 'customer' }, 400, 'ERR-MalformedCommand'],
    ['a malformed acknowledged digest', { custody: 'owned', kind: 'customer', owner: 'did:ledger:id:alice', acknowledged: 'xyz' }, 400, 'ERR-MalformedCommand'],
    ['treasury limits on a customer account', { custody: 'delegated', kind: 'customer', owner: 'did:ledger:id:alice', treasury_limits: { USD: '1' } }, 400, 'ERR-MalformedCommand'],
  ])('refuses %s', async (_what, body, status, error) => {
    expect(await refused(asAlice.post('/v1/accounts', body, undefined, freshKey()))).toEqual({ status, error });
  });

  it('refuses malformed treasury limits from the operator', async () => {
    expect(await refused(op.post('/v1/accounts', { custody: 'delegated', kind: 'treasury', owner: 'did:ledger:id:operator', treasury_limits: { usd: '1' } }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(await refused(op.post('/v1/accounts', { custody: 'delegated', kind: 'treasury', owner: 'did:ledger:id:operator', treasury_limits: { USD: '-1' } }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(await refused(op.post('/v1/accounts', { custody: 'delegated', kind: 'treasury', owner: 'did:ledger:id:operator', treasury_limits: { XAU: '1' } }))).toEqual({ status: 404, error: 'ERR-UnknownAsset' });
  });
});
