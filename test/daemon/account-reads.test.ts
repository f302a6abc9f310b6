/**
 * The operator's reads of CONTRACT 11 over the real daemon: an account's balances in every asset it
 * has held (GET /v1/accounts/{account}/balances) and an identity's accounts, paged in identifier
 * order (GET /v1/accounts?owner=&limit=&cursor=), with spec 7's refusals.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { decided, refused, useDaemon } from './support.js';

const alice = 'did:ledger:acct:alice';
const aliceId = 'did:ledger:id:alice';
const shared = useDaemon({ alice: 100_000n, bob: 100n });
const op = shared.as('operator');
const asAlice = shared.as('alice');
const asBob = shared.as('bob');
const asIdentities = shared.as('identities');
/** Accounts alice opened beside her first, in opening order. */
const opened: string[] = [];
let scopedKey = '';

let keyCounter = 0;

/** Submits under a fresh client key (identical bodies would otherwise be one command) and expects success. */
async function decide(client: typeof op, path: string, body: unknown) {
  const r = await client.post(path, body, undefined, { 'client-key': `account-reads-${++keyCounter}` });
  expect([200, 202], r.text).toContain(r.status);
  const view = (await decided(client, r.body.operation_reference)).body;
  expect(view.error, JSON.stringify(view)).toBeUndefined();
  return { reply: r.body, view };
}

beforeAll(async () => {
  for (let i = 0; i < 3; i++) opened.push((await decide(asAlice, '/v1/accounts', { owner: aliceId, kind: 'customer', custody: 'delegated' })).view.result.account);
  await decide(asAlice, '/v1/transfers', { legs: [{ from: alice, to: opened[0], asset: 'USD', amount: '700' }] });
  await decide(asAlice, '/v1/reservations', { payer: alice, asset: 'USD', amount: '30' });
  scopedKey = (await decide(asAlice, '/v1/credentials', { marker: 'ordinary', scheme: 'api-key', scope: [opened[1]] })).reply.api_key;
});

const malformed = { status: 400, error: 'ERR-MalformedCommand' };
const unbounded = { status: 400, error: 'ERR-QueryUnbounded' };
const notAuthorised = { status: 403, error: 'ERR-NotAuthorised' };

describe('GET /v1/accounts/{account}/balances', () => {
  it('answers every asset the account has held, with its three layers, at a view', async () => {
    const r = await asAlice.get(`/v1/accounts/${alice}/balances`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['account', 'balances', 'view']);
    expect(r.body.account).toBe(alice);
    expect(r.body.view).toEqual(expect.any(Number));
    expect(r.body.balances).toEqual([{ asset: 'USD', available: String(100_000 - 700 - 30), reserved: '30', encumbered: '0' }]);
    expect((await asAlice.get(`/v1/accounts/${opened[0]}/balances`)).body.balances).toEqual([{ asset: 'USD', available: '700', reserved: '0', encumbered: '0' }]);
    // An account that has held nothing lists no asset.
    expect((await asAlice.get(`/v1/accounts/${opened[2]}/balances`)).body.balances).toEqual([]);
  });

  it('is reachable like the account view, and refuses alike', async () => {
    expect((await op.get(`/v1/accounts/${alice}/balances`)).status).toBe(200);
    expect((await asIdentities.get(`/v1/accounts/${alice}/balances`)).status).toBe(200);
    expect(await refused(asBob.get(`/v1/accounts/${alice}/balances`))).toEqual(notAuthorised);
    expect(await refused(op.get('/v1/accounts/did:ledger:acct:nobody/balances'))).toEqual({ status: 404, error: 'ERR-UnknownAccount' });
    expect(await refused(op.get('/v1/accounts/not-an-account/balances'))).toEqual(malformed);
    expect(await refused(op.get(`/v1/accounts/${alice}/balances?asset=USD`))).toEqual(malformed);
    expect(await refused(asAlice.get(`/v1/accounts/${alice}/balances`, null))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
  });
});

describe('GET /v1/accounts?owner=', () => {
  const list = (client: typeof op, query: Record<string, string>) => client.get(`/v1/accounts?${new URLSearchParams(query)}`);
  const all = () => [alice, ...opened].sort();

  it("lists the owner's accounts as account views in identifier order", async () => {
    const r = await list(asAlice, { owner: aliceId, limit: '1000' });
    expect(r.status).toBe(200);
    expect(r.body.items.map((a: { account: string }) => a.account)).toEqual(all());
    expect(r.body.items[0]).toEqual((await asAlice.get(`/v1/accounts/${r.body.items[0].account}`)).body);
    expect(r.body).not.toHaveProperty('next');
    expect(r.body.view).toEqual(expect.any(Number));
  });

  it('pages with next until a page has none', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const r = await list(op, { owner: aliceId, limit: '3', ...(cursor === undefined ? {} : { cursor }) });
      expect(r.status).toBe(200);
      expect(r.body.items.length).toBeLessThanOrEqual(3);
      seen.push(...r.body.items.map((a: { account: string }) => a.account));
      cursor = r.body.next;
      if (cursor === undefined) break;
      expect(cursor).toMatch(/^[0-9a-f]+$/);
    }
    expect(seen).toEqual(all());
  });

  it('is readable by the owner, the operator and the identities principal only; a scoped credential sees its scope', async () => {
    expect((await list(asIdentities, { owner: aliceId, limit: '10' })).body.items).toHaveLength(4);
    expect(await refused(list(asBob, { owner: aliceId, limit: '10' }))).toEqual(notAuthorised);
    const scoped = await asAlice.get(`/v1/accounts?owner=${aliceId}&limit=10`, scopedKey);
    expect(scoped.body.items.map((a: { account: string }) => a.account)).toEqual([opened[1]]);
    // An identity that owns nothing (or does not exist) lists nothing.
    expect((await list(op, { owner: 'did:ledger:id:nobody', limit: '10' })).body).toMatchObject({ items: [] });
  });

  it('refuses a listing without owner or limit as unbounded, and values that do not parse as malformed', async () => {
    expect(await refused(list(op, { owner: aliceId }))).toEqual(unbounded);
    expect(await refused(list(op, { limit: '10' }))).toEqual(unbounded);
    expect(await refused(list(op, { owner: aliceId, limit: '1001' }))).toEqual(unbounded);
    expect(await refused(list(op, { owner: aliceId, limit: '99999999999999999999' }))).toEqual(unbounded);
    for (const query of <Record<string, string>[]>[
      { owner: aliceId, limit: '0' },
      { owner: aliceId, limit: 'ten' },
      { owner: 'alice', limit: '10' },
      { owner: aliceId, limit: '10', cursor: 'zz' },
      { owner: aliceId, limit: '10', cursor: 'abc' },
      { owner: aliceId, limit: '10', cursor: Buffer.from('not an account').toString('hex') },
      { owner: aliceId, limit: '10', kind: 'customer' },
    ]) {
      expect(await refused(list(op, query)), JSON.stringify(query)).toEqual(malformed);
    }
  });
});
