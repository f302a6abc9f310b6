/**
 * Grants attacked through a running ledgerd (issue 9): finishing reservations under a
 * grant, squatting a holder's grant space, listings past a page, treasury value under
 * a delegated grant, `on-behalf-of` nothing used, credential scope on grant decisions,
 * per-operation bounds over a whole operation, and commands racing in one round.
 */
import { describe, expect, it } from 'vitest';
import { type Client, type Reply, client, decided, refusalOf, useDaemon } from './support.js';

const shared = useDaemon({ alice: 1_000_000n, bob: 0n, carol: 0n, dave: 0n, mallory: 0n, erin: 0n, frank: 0n, grace: 0n });
const id = (name: string) => `did:ledger:id:${name}`;
const acct = (name: string) => `did:ledger:acct:${name}`;
const treasury = 'did:ledger:acct:treasury-USD';
const as = (who: string): Client => shared.as(who);
let keyCounter = 0;
const freshKey = () => ({ 'client-key': `grants-${Date.now()}-${++keyCounter}` });

/** The decided operation (or the refusal code of the submission). */
async function outcome(who: string | Client, r: Promise<Reply>): Promise<{ code: string; view: any }> {
  const reply = await r;
  if (reply.status !== 200 && reply.status !== 202) return { code: refusalOf(reply).error, view: null };
  const view = (await decided(typeof who === 'string' ? as(who) : who, reply.body.operation_reference)).body;
  return { code: view.error === undefined ? 'ok' : view.error.error, view };
}

const post = (who: string | Client, path: string, body: unknown, headers: Record<string, string> = {}) =>
  outcome(who, (typeof who === 'string' ? as(who) : who).post(path, body, undefined, { ...freshKey(), ...headers }));

async function ok(who: string | Client, path: string, body: unknown, headers: Record<string, string> = {}) {
  const r = await post(who, path, body, headers);
  expect(r.code, JSON.stringify(r.view)).toBe('ok');
  return r.view;
}

const terms = (principal: string, over: Record<string, unknown> = {}) => ({ kind: 'delegated', principal: id(principal), subject: { account: acct('alice') }, ops: ['transfer'], per_operation: '100', ...over });
const grant = async (who: string, t: Record<string, unknown>): Promise<string> => (await ok(who, '/v1/grants', t)).result.grant;
/** Every item of a grants listing, through its pages (cursors are the daemon's to make: none is forged to jump ahead). */
async function listedGrants(who: string, path: string): Promise<{ grant: string; revoked: number | null }[]> {
  const items: { grant: string; revoked: number | null }[] = [];
  let cursor: string | undefined;
  do {
    const r = await as(who).get(`${path}?limit=1000${cursor === undefined ? '' : `&cursor=${cursor}`}`);
    expect(r.status, r.text).toBe(200);
    items.push(...r.body.items);
    cursor = r.body.next;
  } while (cursor !== undefined);
  return items;
}
const transfer = (legs: { from: string; to: string; amount: string }[]) => ({ legs: legs.map((l) => ({ ...l, asset: 'USD' })) });

/** The postings an operation made on an account (read as the operator). */
async function movementsOf(account: string, ref: string): Promise<any[]> {
  const { movements } = (await as('operator').get(`/v1/movements?account=${account}&limit=1000`)).body;
  return movements.filter((m: { operation: string }) => m.operation === ref);
}

describe('finishing reservations', () => {
  it('needs a grant naming capture or release; checks its revocation; records the authority that allowed it', async () => {
    await grant('alice', terms('bob', { ops: ['reserve'] }));
    const held = (await ok('bob', '/v1/reservations', { payer: acct('alice'), amount: '50', asset: 'USD' })).operation_reference;
    // A reserve grant does not capture, not even the holder's own reservation.
    expect((await post('bob', `/v1/reservations/${held}/capture`, { to: acct('bob') })).code).toBe('ERR-NotAuthorised');
    expect((await post('bob', `/v1/reservations/${held}/release`, {})).code).toBe('ERR-NotAuthorised');

    const finisher = await grant('alice', terms('bob', { ops: ['capture', 'release'], counterparties: [acct('bob')] }));
    const captured = (await ok('bob', `/v1/reservations/${held}/capture`, { to: acct('bob'), amount: '30' })).operation_reference;
    const postings = await movementsOf(acct('bob'), captured);
    expect(postings[0].authorities[0]).toMatchObject({ kind: 'delegated', grant: finisher, principal: id('bob'), on_behalf_of: id('alice') });

    const second = (await ok('bob', '/v1/reservations', { payer: acct('alice'), amount: '20', asset: 'USD' })).operation_reference;
    // Beyond the grant's per-operation bound, and to a counterparty the grant does not name.
    const bigger = (await ok('alice', '/v1/reservations', { payer: acct('alice'), amount: '500', asset: 'USD' })).operation_reference;
    expect((await post('bob', `/v1/reservations/${bigger}/capture`, { to: acct('bob') })).code).toBe('ERR-BoundExceeded');
    expect((await post('bob', `/v1/reservations/${second}/capture`, { to: acct('carol') })).code).toBe('ERR-NotAuthorised');
    // A release moves nothing away from alice: the grant's counterparties do not limit it.
    const third = (await ok('bob', '/v1/reservations', { payer: acct('alice'), amount: '5', asset: 'USD' })).operation_reference;
    const freed = (await ok('bob', `/v1/reservations/${third}/release`, {})).operation_reference;
    expect((await movementsOf(acct('alice'), freed))[0].authorities[0]).toMatchObject({ kind: 'delegated', grant: finisher });
    await ok('alice', `/v1/grants/${finisher}/revoke`, {});
    expect((await post('bob', `/v1/reservations/${second}/capture`, { to: acct('bob') })).code).toBe('ERR-AuthorityRevoked');
    expect((await post('bob', `/v1/reservations/${second}/release`, {})).code).toBe('ERR-AuthorityRevoked');
    // The owner still finishes it, as the owner.
    const released = (await ok('alice', `/v1/reservations/${second}/release`, {})).operation_reference;
    expect((await movementsOf(acct('alice'), released))[0].authorities[0]).toMatchObject({ kind: 'owner', principal: id('alice'), grant: null });
  });
});

describe('grant space', () => {
  it('lets no stranger fill another principal’s held grants, and drops revoked ones from the space', async () => {
    const junk = { kind: 'delegated', principal: id('carol'), subject: { account: acct('mallory') }, ops: ['transfer'], per_operation: '1' };
    const codes = [];
    for (let i = 0; i < 64; i++) codes.push((await post('mallory', '/v1/grants', junk)).code);
    const accepted = codes.filter((c) => c === 'ok').length;
    expect(accepted).toBeLessThan(64);
    expect(codes.filter((c) => c !== 'ok').every((c) => c === 'ERR-UnboundedGrant')).toBe(true);
    // The genuine grant carol holds still works.
    await grant('alice', terms('carol'));
    expect((await post('carol', '/v1/transfers', transfer([{ from: acct('alice'), to: acct('carol'), amount: '5' }]))).code).toBe('ok');
    // Carol revokes what she did not ask for; mallory's room is back only as she revokes.
    const { items } = (await as('carol').get(`/v1/identities/${id('mallory')}/grants`)).body;
    expect(items.length).toBe(accepted);
    await ok('carol', `/v1/grants/${items[0].grant}/revoke`, {});
    expect((await post('mallory', '/v1/grants', junk)).code).toBe('ok');
    expect((await post('mallory', '/v1/grants', junk)).code).toBe('ERR-UnboundedGrant');
  });

  it('keeps a holder’s room for the grants of an owner it deals with, however many strangers give it grants over theirs', async () => {
    // Four strangers give grace as many grants over their own accounts as each may: 64, today's whole space.
    for (const stranger of ['dave', 'erin', 'frank', 'mallory']) {
      const junk = { kind: 'delegated', principal: id('grace'), subject: { account: acct(stranger) }, ops: ['transfer'], per_operation: '1' };
      const codes = await Promise.all(Array.from({ length: 16 }, async () => (await post(stranger, '/v1/grants', junk)).code));
      expect(codes.every((c) => c === 'ok'), codes.join()).toBe(true);
      // A stranger fills only its own share of what grace holds over its accounts.
      expect((await post(stranger, '/v1/grants', junk)).code).toBe('ERR-UnboundedGrant');
    }
    // The grant grace wants, from the owner it deals with, is still given and works.
    const wanted = await grant('alice', terms('grace'));
    const used = await ok('grace', '/v1/transfers', transfer([{ from: acct('alice'), to: acct('grace'), amount: '5' }]));
    expect((await movementsOf(acct('alice'), used.operation_reference))[0].authorities[0]).toMatchObject({ kind: 'delegated', grant: wanted, principal: id('grace') });
  });
});

describe('grant listings', () => {
  it('page with limit, cursor and next, however many grants a grantee narrowed', async () => {
    const root = await grant('alice', terms('dave', { per_operation: '10' }));
    const narrowings: string[] = [];
    // A grantee narrows the grant again and again (revoking as it goes, to stay within its bounds).
    while (narrowings.length < 1010) {
      const batch = await Promise.all(Array.from({ length: 16 }, () => post('dave', '/v1/grants', terms('erin', { parent: root, per_operation: '1' }))));
      for (const b of batch) expect(b.code, JSON.stringify(b.view)).toBe('ok');
      const ids = batch.map((b) => b.view.result.grant as string);
      narrowings.push(...ids);
      await Promise.all(ids.map((g) => ok('dave', `/v1/grants/${g}/revoke`, {})));
    }
    await ok('alice', `/v1/grants/${root}/revoke`, {});
    for (const path of [`/v1/identities/${id('alice')}/grants`, `/v1/accounts/${acct('alice')}/grants`]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const r = await as('alice').get(`${path}?limit=400${cursor === undefined ? '' : `&cursor=${cursor}`}`);
        expect(r.status, r.text).toBe(200);
        expect(r.body.items.length).toBeLessThanOrEqual(400);
        seen.push(...r.body.items.map((g: { grant: string }) => g.grant));
        cursor = r.body.next;
        pages++;
      } while (cursor !== undefined);
      expect(pages).toBeGreaterThanOrEqual(3);
      expect(seen).toEqual([...seen].sort());
      expect(new Set(seen).size).toBe(seen.length);
      for (const g of [root, ...narrowings]) expect(seen).toContain(g);
      // Without a limit, a page holds at most 1000 and says where the next starts.
      const first = await as('alice').get(path);
      expect(first.status).toBe(200);
      expect(first.body.items.length).toBe(1000);
      expect(typeof first.body.next).toBe('string');
    }
    // dave sees the grants he holds or gave, a page at a time too.
    const daves = await as('dave').get(`/v1/identities/${id('alice')}/grants?limit=5`);
    expect(daves.body.items.length).toBe(5);
    expect(typeof daves.body.next).toBe('string');
    expect(refusalOf(await as('alice').get(`/v1/identities/${id('alice')}/grants?cursor=zz`)).error).toBe('ERR-MalformedCommand');
    expect(refusalOf(await as('alice').get(`/v1/identities/${id('alice')}/grants?limit=1001`)).error).toBe('ERR-QueryUnbounded');
  }, 120_000);
});

describe('treasuries', () => {
  it('give no value under a delegated grant, whatever its subject', async () => {
    const overTreasury = { kind: 'delegated', principal: id('bob'), subject: { account: treasury }, ops: ['transfer'], per_operation: '1000' };
    expect((await post('operator', '/v1/grants', overTreasury)).code).toBe('ERR-NotAuthorised');
    await grant('operator', { ...overTreasury, subject: { asset: 'USD' } });
    expect((await post('bob', '/v1/transfers', transfer([{ from: treasury, to: acct('bob'), amount: '5' }]))).code).toBe('ERR-NotAuthorised');
    expect((await post('bob', '/v1/reservations', { payer: treasury, amount: '5', asset: 'USD' })).code).toBe('ERR-NotAuthorised');
  });
});

describe('on-behalf-of', () => {
  it('is recorded only when a grant over that identity covered the act, and names an identity the caller holds something over', async () => {
    await grant('bob', { kind: 'delegated', principal: id('alice'), subject: { account: acct('bob') }, ops: ['transfer'], per_operation: '100' });
    const own = await post('alice', '/v1/transfers', transfer([{ from: acct('alice'), to: acct('frank'), amount: '3' }]), { 'on-behalf-of': id('bob') });
    expect(own.code).toBe('ok');
    expect((await movementsOf(acct('frank'), own.view.operation_reference))[0].authorities[0]).toMatchObject({ kind: 'owner', principal: id('alice'), on_behalf_of: null });
    // The operator acts for the owner of an account in its custody, and for no one else.
    const forOwner = await post('operator', '/v1/transfers', transfer([{ from: acct('alice'), to: acct('frank'), amount: '1' }]), { 'on-behalf-of': id('alice') });
    expect((await movementsOf(acct('frank'), forOwner.view.operation_reference))[0].authorities[0]).toMatchObject({ kind: 'operator', on_behalf_of: id('alice') });
    const forOther = await post('operator', '/v1/transfers', transfer([{ from: acct('alice'), to: acct('frank'), amount: '1' }]), { 'on-behalf-of': id('bob') });
    expect((await movementsOf(acct('frank'), forOther.view.operation_reference))[0].authorities[0]).toMatchObject({ kind: 'operator', on_behalf_of: null });
    expect(refusalOf(await as('operator').post('/v1/transfers', transfer([{ from: acct('alice'), to: acct('frank'), amount: '1' }]), undefined, { ...freshKey(), 'on-behalf-of': id('nobody') }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusalOf(await as('frank').post('/v1/transfers', transfer([{ from: acct('frank'), to: acct('alice'), amount: '1' }]), undefined, { ...freshKey(), 'on-behalf-of': id('bob') }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
  });
});

describe('credential scope', () => {
  it('bounds every grant decision: revoke, narrow, give, list', async () => {
    const second = (await ok('alice', '/v1/accounts', { owner: id('alice'), kind: 'customer', custody: 'delegated' })).result.account;
    const registered = await as('alice').post('/v1/credentials', { marker: 'ordinary', scheme: 'api-key', scope: [second] }, undefined, freshKey());
    const scoped = client(() => shared.daemon.url, registered.body.api_key as string);
    const outside = await grant('alice', terms('bob'));
    const inside = await grant('alice', terms('bob', { subject: { account: second } }));
    expect((await post(scoped, `/v1/grants/${outside}/revoke`, {})).code).toBe('ERR-NotAuthorised');
    expect((await post(scoped, '/v1/grants', terms('carol'))).code).toBe('ERR-NotAuthorised');
    const listed = (await scoped.get(`/v1/identities/${id('alice')}/grants`)).body.items.map((g: { grant: string }) => g.grant);
    expect(listed).toContain(inside);
    expect(listed).not.toContain(outside);
    expect((await post(scoped, `/v1/grants/${inside}/revoke`, {})).code).toBe('ok');
  });
});

describe('per-operation bounds', () => {
  it('cover everything one operation moves under the grant', async () => {
    await grant('alice', terms('erin', { per_operation: '100' }));
    const five = Array.from({ length: 5 }, () => ({ from: acct('alice'), to: acct('erin'), amount: '100' }));
    expect((await post('erin', '/v1/transfers', transfer(five))).code).toBe('ERR-BoundExceeded');
    expect((await post('erin', '/v1/transfers', transfer([{ from: acct('alice'), to: acct('erin'), amount: '60' }, { from: acct('alice'), to: acct('frank'), amount: '40' }]))).code).toBe('ok');
    await ok('operator', '/v1/ops/issuance-grants', { grant: { kind: 'issuance', principal: id('operator'), subject: { account: treasury }, ops: ['transfer'], per_operation: '100' }, justification: 'bounded float' });
    const issue = (n: number) => Array.from({ length: n }, () => ({ from: treasury, to: acct('frank'), amount: '60' }));
    expect((await post('operator', '/v1/transfers', transfer(issue(1)))).code).toBe('ok');
    expect((await post('operator', '/v1/transfers', transfer(issue(2)))).code).toBe('ERR-BoundExceeded');
  });
});

describe('commands racing in one round', () => {
  it('decide as they would one after another, and the daemon keeps deciding', async () => {
    for (let i = 0; i < 15; i++) {
      // frank gives himself a grant, then narrows it and revokes it at once.
      const own = await grant('frank', { kind: 'delegated', principal: id('frank'), subject: { account: acct('frank') }, ops: ['transfer'], per_operation: '5' });
      const [narrowed, revoked] = await Promise.all([
        post('frank', '/v1/grants', { kind: 'delegated', principal: id('bob'), subject: { account: acct('frank') }, ops: ['transfer'], per_operation: '1', parent: own }),
        post('frank', `/v1/grants/${own}/revoke`, {}),
      ]);
      expect(revoked.code).toBe('ok');
      expect(['ok', 'ERR-AuthorityRevoked']).toContain(narrowed.code);
      // A grantor revoking while its grantee narrows.
      const given = await grant('alice', terms('carol', { per_operation: '5' }));
      const [child, gone] = await Promise.all([post('carol', '/v1/grants', terms('dave', { parent: given, per_operation: '1' })), post('alice', `/v1/grants/${given}/revoke`, {})]);
      expect(gone.code).toBe('ok');
      expect(['ok', 'ERR-AuthorityRevoked']).toContain(child.code);
      // Whatever the order, nothing narrowed from a revoked grant is left live.
      if (child.code === 'ok') {
        const listed = (await listedGrants('alice', `/v1/identities/${id('alice')}/grants`)).find((g) => g.grant === child.view.result.grant);
        expect(listed?.revoked, JSON.stringify(listed)).toEqual(expect.any(Number));
      }
    }
    expect(shared.daemon.process.exitCode).toBeNull();
    expect((await as('operator').get('/v1/health')).status).toBe(200);
  });

  it('read every ancestor of a grant in use, even one another command of the round read for itself', async () => {
    for (let i = 0; i < 15; i++) {
      // A windowed root, narrowed to erin: her use reads the root's window too.
      const root = await grant('alice', terms('dave', { per_operation: null, per_window: { length: 60_000, limit: '1000' } }));
      await grant('dave', terms('erin', { parent: root, per_operation: '1', per_window: { length: 60_000, limit: '1000' } }));
      const [revoked, used] = await Promise.all([post('alice', `/v1/grants/${root}/revoke`, {}), post('erin', '/v1/transfers', transfer([{ from: acct('alice'), to: acct('erin'), amount: '1' }]))]);
      expect(revoked.code).toBe('ok');
      expect(['ok', 'ERR-AuthorityRevoked']).toContain(used.code);
    }
    expect(shared.daemon.process.exitCode).toBeNull();
  });
});
