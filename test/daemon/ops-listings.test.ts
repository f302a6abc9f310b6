/**
 * The operator's listings of the whole book (issue 25 item 1; docs/api.md, Operator listings) over
 * a real ledgerd: GET /v1/ops/identities, accounts, operations, reservations and grants, their
 * filters, paging with sealed cursors, bounds (page limits, records read per page) and refusals.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, decided, refused, useDaemon } from './support.js';

const alice = 'did:ledger:acct:alice';
const aliceId = 'did:ledger:id:alice';
const bobId = 'did:ledger:id:bob';
const shared = useDaemon({ alice: 100_000n, bob: 100n });
const op = shared.as('operator');
const asAlice = shared.as('alice');
const asIdentities = shared.as('identities');

let keyCounter = 0;
async function decide(client: Client, path: string, body: unknown) {
  const r = await client.post(path, body, undefined, { 'client-key': `ops-listings-${++keyCounter}` });
  expect([200, 202], r.text).toContain(r.status);
  const view = (await decided(client, r.body.operation_reference)).body;
  expect(view.error, JSON.stringify(view)).toBeUndefined();
  return view;
}

/** Every item of a listing, following `next` page by page (`limit` items a page). */
async function all(path: string, limit: number): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 200; pages++) {
    const r = await op.get(`${path}${path.includes('?') ? '&' : '?'}limit=${limit}${cursor === undefined ? '' : `&cursor=${cursor}`}`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.items.length).toBeLessThanOrEqual(limit);
    items.push(...r.body.items);
    if (r.body.next === undefined) return items;
    cursor = r.body.next;
  }
  throw new Error('the listing did not end');
}

const opened: string[] = [];
let liveHold = '';
let releasedHold = '';
let liveGrant = '';
let revokedGrant = '';
let startedAtMs = 0;

beforeAll(async () => {
  startedAtMs = Date.now();
  for (let i = 0; i < 3; i++) opened.push((await decide(asAlice, '/v1/accounts', { owner: aliceId, kind: 'customer', custody: 'delegated' })).result.account);
  await decide(asAlice, '/v1/transfers', { legs: [{ from: alice, to: opened[0], asset: 'USD', amount: '700' }] });
  liveHold = (await decide(asAlice, '/v1/reservations', { payer: alice, asset: 'USD', amount: '30' })).operation_reference;
  releasedHold = (await decide(asAlice, '/v1/reservations', { payer: alice, asset: 'USD', amount: '5' })).operation_reference;
  await decide(asAlice, `/v1/reservations/${releasedHold}/release`, {});
  await decide(op, `/v1/accounts/${opened[1]}/freeze`, { justification: 'listing test' });
  await decide(op, `/v1/ops/identities/${bobId}/restrict`, { justification: 'listing test' });
  const grant = { kind: 'delegated', principal: bobId, subject: { account: alice }, ops: ['transfer'], per_operation: '100' };
  liveGrant = (await decide(asAlice, '/v1/grants', grant)).result.grant;
  revokedGrant = (await decide(asAlice, '/v1/grants', { ...grant, per_operation: '50' })).result.grant;
  await decide(asAlice, `/v1/grants/${revokedGrant}/revoke`, {});
});

const malformed = { status: 400, error: 'ERR-MalformedCommand' };
const unbounded = { status: 400, error: 'ERR-QueryUnbounded' };
const notAuthorised = { status: 403, error: 'ERR-NotAuthorised' };
const listings = ['identities', 'accounts', 'operations', 'reservations', 'grants'];

describe('GET /v1/ops/identities', () => {
  it('lists every identity in identifier order, with its status and how many accounts it opened', async () => {
    const r = await op.get('/v1/ops/identities');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['items', 'view']);
    const ids = r.body.items.map((i: any) => i.identity);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(expect.arrayContaining([aliceId, bobId]));
    expect(r.body.items.find((i: any) => i.identity === aliceId)).toEqual({ identity: aliceId, created_at: expect.any(Number), status: 'active', accounts: 4 });
  });

  it('filters by status', async () => {
    expect((await op.get('/v1/ops/identities?status=restricted')).body.items.map((i: any) => i.identity)).toEqual([bobId]);
    const active = (await op.get('/v1/ops/identities?status=active')).body.items.map((i: any) => i.identity);
    expect(active).toContain(aliceId);
    expect(active).not.toContain(bobId);
    expect(await refused(op.get('/v1/ops/identities?status=frozen'))).toEqual(malformed);
  });
});

describe('GET /v1/ops/accounts', () => {
  it('lists every account, of every owner, in identifier order', async () => {
    const items = (await op.get('/v1/ops/accounts?limit=1000')).body.items;
    const ids = items.map((a: any) => a.account);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(expect.arrayContaining([alice, 'did:ledger:acct:bob', ...opened]));
    expect(items.some((a: any) => a.kind === 'treasury')).toBe(true);
    expect(items.find((a: any) => a.account === opened[0])).toEqual(expect.objectContaining({ owner: aliceId, kind: 'customer', custody: 'delegated', status: 'active' }));
  });

  it('filters by kind, status, custody, owner and an asset held, together', async () => {
    const ids = async (query: string) => (await op.get(`/v1/ops/accounts?${query}`)).body.items.map((a: any) => a.account);
    const treasuries = (await op.get('/v1/ops/accounts?kind=treasury')).body.items;
    expect(treasuries.length).toBeGreaterThan(0);
    expect(treasuries.every((a: any) => a.kind === 'treasury')).toBe(true);
    expect(await ids('status=frozen')).toEqual([opened[1]]);
    expect(await ids(`owner=${aliceId}`)).toEqual([alice, ...opened].sort());
    expect(await ids(`owner=${aliceId}&status=active`)).toEqual([alice, opened[0], opened[2]].sort());
    // opened[2] never held anything; opened[0] received USD.
    expect(await ids(`owner=${aliceId}&asset=USD`)).toEqual([alice, opened[0]].sort());
    expect(await ids(`owner=${aliceId}&asset=EUR`)).toEqual([]);
    expect(await ids('custody=owned')).toEqual([]);
    expect(await ids('owner=did:ledger:id:nobody')).toEqual([]);
  });

  it('refuses filters that do not parse, and an asset not registered', async () => {
    expect(await refused(op.get('/v1/ops/accounts?kind=savings'))).toEqual(malformed);
    expect(await refused(op.get('/v1/ops/accounts?owner=alice'))).toEqual(malformed);
    expect(await refused(op.get('/v1/ops/accounts?asset=usd'))).toEqual(malformed);
    expect(await refused(op.get('/v1/ops/accounts?asset=XYZ'))).toEqual({ status: 404, error: 'ERR-UnknownAsset' });
  });
});

describe('GET /v1/ops/operations', () => {
  it('lists every operation newest first, as GET /v1/operations/{ref} shows it', async () => {
    const items = await all('/v1/ops/operations', 1000);
    const times = items.map((o: any) => o.submitted_at);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const refs = items.map((o: any) => o.operation_reference);
    expect(new Set(refs).size).toBe(refs.length);
    expect(refs).toEqual(expect.arrayContaining([liveHold, releasedHold]));
    expect(items.find((o: any) => o.operation_reference === liveHold)).toEqual((await op.get(`/v1/operations/${liveHold}`)).body);
  });

  it('filters by state, command, principal and submission time', async () => {
    const refs = async (query: string) => (await op.get(`/v1/ops/operations?${query}`)).body.items.map((o: any) => o.operation_reference);
    expect(await refs('state=Released')).toEqual([releasedHold]);
    expect(await refs(`command=reserve&principal=${aliceId}`)).toEqual([releasedHold, liveHold]);
    expect(await refs('command=reserve&state=Reserved')).toEqual([liveHold]);
    const opens = (await op.get(`/v1/ops/operations?command=open_account&principal=${aliceId}`)).body.items;
    expect(opens.map((o: any) => o.result.account)).toEqual([...opened].reverse());
    expect(await refs(`principal=${bobId}`)).toEqual([]);
    const held = (await op.get(`/v1/operations/${liveHold}`)).body.submitted_at;
    expect(await refs(`command=reserve&from=${held}&to=${held + 1}`)).toContain(liveHold);
    expect(await refs(`command=reserve&to=${held}`)).not.toContain(liveHold);
    expect(await refs(`from=${startedAtMs - 3_600_000}&to=${startedAtMs - 1}`)).toEqual([]);
    expect(await refused(op.get('/v1/ops/operations?from=10&to=9'))).toEqual(unbounded);
    expect(await refused(op.get('/v1/ops/operations?state=Pending'))).toEqual(malformed);
    expect(await refused(op.get('/v1/ops/operations?from=-1'))).toEqual(malformed);
    expect(await refused(op.get('/v1/ops/operations?from=99999999999999999999'))).toEqual(malformed);
    expect(await refused(op.get('/v1/ops/operations?command=Transfer'))).toEqual(malformed);
    expect(await refused(op.get('/v1/ops/operations?principal=alice'))).toEqual(malformed);
  });
});

describe('GET /v1/ops/reservations', () => {
  it('lists the live holds with payer, amount, asset, deadline and holder; a released one is gone', async () => {
    const r = await op.get('/v1/ops/reservations');
    expect(r.status).toBe(200);
    expect(r.body.items).toEqual([
      {
        operation_reference: liveHold,
        payer: alice,
        amount: '30',
        asset: 'USD',
        deadline: expect.any(Number),
        holder: aliceId,
        credential: 'did:ledger:cred:alice',
        on_behalf_of: null,
        reserved_at: expect.any(Number),
      },
    ]);
    expect(r.body.items[0].deadline).toBeGreaterThan(Date.now());
  });
});

describe('GET /v1/ops/grants', () => {
  it('filters by grantor, holder and state', async () => {
    const grants = async (query: string) => (await op.get(`/v1/ops/grants?${query}`)).body.items.map((g: any) => [g.grant, g.state]);
    expect((await grants(`grantor=${aliceId}`)).sort()).toEqual([[liveGrant, 'live'], [revokedGrant, 'revoked']].sort());
    expect(await grants(`holder=${bobId}&state=live`)).toEqual([[liveGrant, 'live']]);
    expect(await grants('state=revoked')).toEqual([[revokedGrant, 'revoked']]);
    expect(await grants(`holder=${aliceId}`)).toEqual([]);
    const item = (await op.get(`/v1/ops/grants?grantor=${aliceId}&state=live`)).body.items[0];
    expect(item).toEqual({ grant: liveGrant, granted_at: expect.any(Number), grantor: aliceId, revoked: null, terms: expect.objectContaining({ principal: bobId, per_operation: '100' }), state: 'live' });
    expect(await refused(op.get('/v1/ops/grants?state=gone'))).toEqual(malformed);
  });
});

describe('paging and bounds', () => {
  it.each(listings)('%s: pages of one follow next to the same items as one page', async (listing) => {
    const whole = (await op.get(`/v1/ops/${listing}?limit=1000`)).body;
    expect(whole.next).toBeUndefined();
    expect(whole.items.length).toBeGreaterThan(0);
    expect(await all(`/v1/ops/${listing}`, 1)).toEqual(whole.items);
  });

  it.each(listings)('%s: refuses a limit out of bounds and a cursor it did not issue for that listing', async (listing) => {
    expect(await refused(op.get(`/v1/ops/${listing}?limit=1001`))).toEqual(unbounded);
    expect(await refused(op.get(`/v1/ops/${listing}?limit=99999999999999999999`))).toEqual(unbounded);
    expect(await refused(op.get(`/v1/ops/${listing}?limit=0`))).toEqual(malformed);
    expect(await refused(op.get(`/v1/ops/${listing}?cursor=${'ab'.repeat(24)}`))).toEqual(malformed);
    expect(await refused(op.get(`/v1/ops/${listing}?cursor=${'a'.repeat(600)}`))).toEqual(malformed);
    expect(await refused(op.get(`/v1/ops/${listing}?bogus=1`))).toEqual(malformed);
    const other = listing === 'identities' ? 'accounts' : 'identities';
    const foreign = (await op.get(`/v1/ops/${other}?limit=1`)).body.next;
    expect(foreign).toEqual(expect.any(String));
    expect(await refused(op.get(`/v1/ops/${listing}?cursor=${foreign}`))).toEqual(malformed);
  });

  it.each(listings)("%s: the operator's alone", async (listing) => {
    expect(await refused(asAlice.get(`/v1/ops/${listing}`))).toEqual(notAuthorised);
    expect(await refused(asIdentities.get(`/v1/ops/${listing}`))).toEqual(notAuthorised);
    expect(await refused(shared.as('bob').get(`/v1/ops/${listing}`))).toEqual(notAuthorised);
  });

  it('a page reads a bounded number of records: a filter that matches nothing answers no items and a next that resumes the scan', async () => {
    // 4,200 transfers put more operations in the index than one page reads (opsListingScanMax, 4,000).
    for (let b = 0; b < 5; b++) {
      const commands = Array.from({ length: b < 4 ? 1000 : 200 }, (_, i) => ({ command: 'transfer', body: { legs: [{ from: alice, to: opened[0], asset: 'USD', amount: '1' }] }, client_key: `bulk-${b}-${i}` }));
      const r = await asAlice.post('/v1/batches', { commands });
      expect([200, 202], r.text).toContain(r.status);
    }
    const r = await op.get('/v1/ops/operations?command=open_account&limit=10');
    expect(r.status).toBe(200);
    expect(r.body.items).toEqual([]);
    expect(r.body.next).toEqual(expect.any(String));
    // Following next reaches the accounts opened before the transfers.
    const opens = await all('/v1/ops/operations?command=open_account', 10);
    expect(opens.filter((o) => o.principal === aliceId).map((o) => o.result.account)).toEqual([...opened].reverse());
  });
});
