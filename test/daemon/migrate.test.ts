/**
 * `ledgerd migrate` (issue 10), black-box, on a real stage-1 book: the fixture in
 * test/fixtures/layout-1 was made by the stage-1 ledgerd (commit c1eb7cc, the last that
 * writes store layout 1; make-book.mjs says how) and holds its backup (every store
 * entry), the API keys, and what that daemon answered. The test lays those entries in a
 * LevelDB book as the old daemon had them, so it needs no old code: the built ledgerd
 * refuses to serve it, migrates it, and then answers what the old one did and goes on
 * deciding; a crash mid-migration and a refused migration leave the old book as it was.
 */
import { createHash } from 'node:crypto';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AccountId } from '../../src/model/values.js';
import { prefixEnd, settlementKeys } from '../../src/model/keys.js';
import type { BatchOp } from '../../src/store/port.js';
import { depositRefOf } from '../../src/settlement/book.js';
import { LevelStore } from '../../src/store/level.js';
import { type Client, type Keys, client, decided, ledgerdRun, refusalOf, startDaemon, useTempDirs, writeBook } from './support.js';
import { eventsFromStart, fixtureBook, layFixtureBook } from '../support/fixture-books.js';
import { migratedFromLayout3AfterAKill, migratedFromLayout4AfterAKill, migratedFromLayout5, pausedMigrate, writeBookWithEvents } from '../support/layouts.js';
import { leveldbStoreDefault } from '../../daemon/config.js';

const fixture = fixtureBook('layout-1');
const { keys, expected } = fixture;
const newDir = useTempDirs();
/** All a migration says on stderr when it is not a terminal: one summary line (issue 25 item 8, test/daemon/progress.test.ts). */
const migratedSummary = /^ledgerd migrate: [\d,]+ entries read in \d+\.\d s \([\d,]+\/s\)\n$/;

/** A data dir holding the stage-1 book as its daemon left it: every store entry, daemon.key and the clerk's pair, the API keys. */
async function layout1DataDir(edit: (entries: Map<string, string>) => void = () => {}): Promise<string> {
  const dir = newDir();
  await layFixtureBook(fixture, dir, edit);
  return dir;
}

/** SHA-256 over every key and value of a stopped LevelDB book, in key order. */
async function digestOf(bookDir: string): Promise<string> {
  const store = await LevelStore.open(bookDir, { createIfMissing: false });
  const hash = createHash('sha256');
  try {
    for await (const [key, value] of store.entries({ limit: Number.MAX_SAFE_INTEGER })) hash.update(JSON.stringify([key, value]));
  } finally {
    await store.close();
  }
  return hash.digest('hex');
}

const layout1Refusal = /store layout 1; this ledgerd reads layout 7: run ledgerd migrate/;

describe('ledgerd migrate', () => {
  it('refuses to serve or check a layout-1 book, naming ledgerd migrate', async () => {
    const dir = await layout1DataDir();
    const before = await digestOf(join(dir, 'book'));
    const served = await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0']);
    expect(served.code).toBe(1);
    expect(served.stderr).toMatch(layout1Refusal);
    const checked = await ledgerdRun(['check', '--data-dir', dir]);
    expect(checked.code).toBe(4);
    expect(checked.stderr).toMatch(/store layout 1; this ledgerd reads 7: run ledgerd migrate on it first/);
    // Refused, the book is as the stage-1 daemon left it.
    expect(await digestOf(join(dir, 'book'))).toBe(before);
  });

  it('migrates a stage-1 book, which then answers what the stage-1 daemon did, decides on, and checks clean', async () => {
    const dir = await layout1DataDir();
    const before = await digestOf(join(dir, 'book'));
    const migrated = await ledgerdRun(['migrate', '--data-dir', dir]);
    expect(migrated.stderr).toMatch(migratedSummary);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toMatch(/book migrated from store layout 1 to 7 and verified: \d+ entries read, 26 journal entries in \d+ chunks, 5 accounts, 2 assets, 2 held and 1 revoked grant index entries moved, 26 account index entries made compact/);
    // The old book is kept beside, as it was.
    expect(await digestOf(join(dir, 'book.layout-1'))).toBe(before);
    expect(existsSync(join(dir, 'book.migrate'))).toBe(false);

    const checked = await ledgerdRun(['check', '--data-dir', dir]);
    expect(checked.stdout).toMatch(/5 accounts, 6 balances, 26 journal entries, journal position 26, 0 checkpoints: consistent/);
    expect(checked.code).toBe(0);

    const daemon = await startDaemon({ dataDir: dir });
    try {
      const op = client(daemon.url, keys.operator);
      for (const [account, body] of Object.entries(expected.balances)) expect((await op.get(`/v1/accounts/${account}/balances`)).body).toMatchObject(body as object);
      for (const [account, body] of Object.entries(expected.movements)) expect((await op.get(`/v1/movements?account=${account}&limit=1000`)).body).toMatchObject(body as object);
      expect((await op.get('/v1/trial-balance')).body).toMatchObject(expected.trialBalance);
      for (const [ref, body] of Object.entries(expected.operations)) expect((await op.get(`/v1/operations/${ref}`)).body).toMatchObject(body as object);
      const replayed = await eventsFromStart(daemon.url, keys.operator, expected.events.length);
      expect(replayed).toMatchObject(expected.events);

      const { alice, bob } = expected.accounts as { alice: string; bob: string };
      // A statement over the whole book: the journal's time index was rebuilt from the old entries.
      const statement = await op.get(`/v1/statements?account=${alice}&asset=USD&from=0&to=${Date.now()}`);
      expect(statement.status).toBe(200);
      expect(statement.body.movements.map((m: { seq: number }) => m.seq)).toEqual(expected.movements[alice].movements.filter((m: { asset: string }) => m.asset === 'USD').map((m: { seq: number }) => m.seq));

      // Deciding goes on: a transfer by alice's own key, journalled after the migrated entries.
      const asAlice = client(daemon.url, keys.alice!);
      const sent = await asAlice.post('/v1/transfers', { legs: [{ from: alice, to: bob, asset: 'USD', amount: '125' }] }, undefined, { 'client-key': 'after-migration-1' });
      expect([200, 202]).toContain(sent.status);
      const transfer = (await decided(asAlice, sent.body.operation_reference)).body;
      expect(transfer).toMatchObject({ state: 'Completed', result: { postings: [27, 28] } });
      const balance = async (api: Client, account: string) => (await api.get(`/v1/accounts/${account}/balances`)).body.balances.find((b: { asset: string }) => b.asset === 'USD');
      const aliceBefore = expected.balances[alice].balances.find((b: { asset: string }) => b.asset === 'USD');
      expect(BigInt((await balance(op, alice)).available)).toBe(BigInt(aliceBefore.available) - 125n);

      // The reservation left pending by the stage-1 daemon: released now, or expired by its deadline in the migrated expiry index.
      const pending = (await op.get(`/v1/operations/${expected.pending}`)).body;
      if (pending.state === 'Reserved') {
        const release = await asAlice.post(`/v1/reservations/${expected.pending}/release`, {}, undefined, { 'client-key': 'after-migration-2' });
        expect((await decided(asAlice, release.body.operation_reference)).body.state).toBe('Completed');
        expect((await op.get(`/v1/operations/${expected.pending}`)).body.state).toBe('Released');
      } else {
        expect(pending.state).toBe('Expired');
      }
      expect(BigInt((await balance(op, alice)).reserved)).toBe(0n);
      const tb = (await op.get('/v1/trial-balance')).body;
      expect(tb.rows.map((r: { openings: string }) => r.openings)).toEqual(['0', '0']);
      expect(tb.rows.find((r: { asset: string }) => r.asset === 'USD').layers).toEqual({ available: '0', reserved: '0', encumbered: '0' });
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
    const again = await ledgerdRun(['check', '--data-dir', dir]);
    expect(again.stdout).toMatch(/journal position 3\d, 0 checkpoints: consistent/);
    // Deposits on the settlement layer find every migrated account by its deposit reference.
    const store = await LevelStore.open(join(dir, 'book'), { createIfMissing: false });
    try {
      for (const account of Object.values(expected.accounts as Record<string, string>)) expect(await store.get(settlementKeys.depositRef(depositRefOf(account as AccountId)))).toBe(account);
    } finally {
      await store.close();
    }

    // Nothing more to do, and said so.
    const second = await ledgerdRun(['migrate', '--data-dir', dir]);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/the book is in store layout 7 already: nothing to do/);
  });

  it('leaves the old book as it was when killed mid-migration; the next run migrates it', async () => {
    // Archived identifiers (as a large genesis leaves them) make the book several batches long: the kill comes mid-stream.
    const dir = await layout1DataDir((e) => {
      for (let i = 0; i < 2500; i++) e.set(`arch/legacy-crm/customer%20${1000 + i}`, '');
    });
    const before = await digestOf(join(dir, 'book'));
    const kill = await pausedMigrate(dir, 1);
    expect(existsSync(join(dir, 'book.migrate'))).toBe(true);
    await kill();

    expect(await digestOf(join(dir, 'book'))).toBe(before);
    expect(existsSync(join(dir, 'book.layout-1'))).toBe(false);
    expect((await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0'])).stderr).toMatch(layout1Refusal);

    const migrated = await ledgerdRun(['migrate', '--data-dir', dir]);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toMatch(/verified: 26\d\d entries read, 26 journal entries/);
    expect((await ledgerdRun(['check', '--data-dir', dir])).code).toBe(0);
  });

  it('migrates a stage-1 backup restored by this ledgerd (a book lost before the upgrade)', async () => {
    const dir = newDir();
    // A backup of a stage-1 ledgerd is unsigned: restored only as unverified.
    const restored = await ledgerdRun(['restore', '--from', join(fixture.dir, 'book.backup'), '--data-dir', dir, '--accept-unverified']);
    expect(restored.code).toBe(0);
    writeFileSync(join(dir, 'operator.key'), `${keys.operator}\n`, { mode: 0o600 });
    expect((await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0'])).stderr).toMatch(layout1Refusal);
    const migrated = await ledgerdRun(['migrate', '--data-dir', dir]);
    expect(migrated.stderr).toMatch(migratedSummary);
    expect(migrated.code).toBe(0);
    const daemon = await startDaemon({ dataDir: dir });
    try {
      const op = client(daemon.url, keys.operator);
      expect((await op.get('/v1/trial-balance')).body).toMatchObject(expected.trialBalance);
      const { alice, bob } = expected.accounts as Record<string, string>;
      const sent = await client(daemon.url, keys.alice!).post('/v1/transfers', { legs: [{ from: alice, to: bob, asset: 'USD', amount: '1' }] }, undefined, { 'client-key': 'after-restore-1' });
      expect((await decided(op, sent.body.operation_reference)).body.state).toBe('Completed');
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  });

  it('finishes a swap a crash cut between its two renames, instead of making a new book', async () => {
    const dir = await layout1DataDir();
    expect((await ledgerdRun(['migrate', '--data-dir', dir])).code).toBe(0);
    const migrated = await digestOf(join(dir, 'book'));
    // The state between the renames: the old book aside, the verified new one not yet in place.
    renameSync(join(dir, 'book'), join(dir, 'book.migrate'));
    const checked = await ledgerdRun(['check', '--data-dir', dir]);
    expect(checked.code).toBe(0);
    expect(checked.stdout).toMatch(/26 journal entries, journal position 26/);
    expect(await digestOf(join(dir, 'book'))).toBe(migrated);
  });

  it('refuses, leaving the old book as it was, a record this ledgerd cannot read or a book that does not verify', async () => {
    const cases: [string, (entries: Map<string, string>) => void, RegExp][] = [
      ['an unreadable journal entry', (e) => e.set('j/0000000000000003', e.get('j/0000000000000003')!.replace(/"amountMinor":"\d+"/, '"amountMinor":12')), /j\/0000000000000003: damaged layout-1 journal entry record: amountMinor is not decimal text/],
      ['a journal entry dated before the one preceding it', (e) => e.set('j/0000000000000005', e.get('j/0000000000000005')!.replace(/"atMs":\d+/, '"atMs":1')), /journal entry 5 is dated before the entry preceding it/],
      ['a key no stage-1 ledgerd wrote', (e) => e.set('jt/0000000000000001/0000000000000001', ''), /jt\/0000000000000001\/0000000000000001 is not a layout-1 key/],
      [
        'a balance off the trial balance',
        (e) => e.set('bal/did:ledger:acct:legacy/EUR', JSON.stringify({ ...JSON.parse(e.get('bal/did:ledger:acct:legacy/EUR')!), a: '1' })),
        /the trial balance of EUR does not verify/,
      ],
    ];
    for (const [what, edit, message] of cases) {
      const dir = await layout1DataDir(edit);
      const before = await digestOf(join(dir, 'book'));
      const refused = await ledgerdRun(['migrate', '--data-dir', dir]);
      expect(refused.code, what).toBe(6);
      expect(refused.stderr, what).toMatch(/the book was not migrated \(it is left as it was\)/);
      expect(refused.stderr, what).toMatch(message);
      expect(await digestOf(join(dir, 'book')), what).toBe(before);
      expect(existsSync(join(dir, 'book.migrate')), what).toBe(false);
      expect(existsSync(join(dir, 'book.layout-1')), what).toBe(false);
    }
  });
});

describe('ledgerd migrate from layout 2', () => {
  /** A book this ledgerd wrote, with bob holding a reserve grant of alice's and a transfer grant she revoked, then put back in layout 2's held-grant index. */
  async function layout2DataDir(): Promise<{ dir: string; keys: Keys; live: string; revoked: string }> {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 1_000n, bob: 0n });
    const daemon = await startDaemon({ dataDir: dir });
    let live: string;
    let revoked: string;
    try {
      const alice = client(daemon.url, keys.customers.alice!);
      const give = async (op: string) => {
        const sent = await alice.post('/v1/grants', { kind: 'delegated', principal: 'did:ledger:id:bob', subject: { account: 'did:ledger:acct:alice' }, ops: [op], per_operation: '10' }, undefined, { 'client-key': `layout2-grant-${op}` });
        return (await decided(alice, sent.body.operation_reference)).body.result.grant as string;
      };
      live = await give('reserve');
      revoked = await give('transfer');
      const revocation = await alice.post(`/v1/grants/${revoked}/revoke`, {}, undefined, { 'client-key': 'layout2-revoke' });
      expect((await decided(alice, revocation.body.operation_reference)).body.state).toBe('Completed');
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
    const store = await LevelStore.open(join(dir, 'book'), { createIfMissing: false });
    try {
      const ops: BatchOp[] = [{ type: 'put', key: 'meta/layout', value: '2' }];
      for (const [from, to] of [['gho/', 'gh/'], ['ghro/', 'ghr/']] as const) {
        for await (const [key] of store.entries({ gte: from, lt: prefixEnd(from), limit: 1000 })) {
          const [holder, , grant] = key.slice(from.length).split('/');
          ops.push({ type: 'del', key }, { type: 'put', key: `${to}${holder}/${grant}`, value: '' });
        }
      }
      expect(ops).toHaveLength(5);
      await store.write(ops, true);
    } finally {
      await store.close();
    }
    return { dir, keys, live, revoked };
  }

  it('moves the held-grant index in place, resumes after a kill, and the grants then work as before', async () => {
    const { dir, keys, live, revoked } = await layout2DataDir();
    const refusal = /store layout 2; this ledgerd reads layout 7: run ledgerd migrate/;
    expect((await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0'])).stderr).toMatch(refusal);
    // Killed after its first write: the book is marked as moving, and nothing serves it.
    await (await pausedMigrate(dir, 1))();
    expect((await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0'])).stderr).toMatch(/store layout 2-3; this ledgerd reads layout 7: run ledgerd migrate/);

    const migrated = await ledgerdRun(['migrate', '--data-dir', dir]);
    // Not a terminal: one summary line of the entries the move read (docs/operations.md, Progress of long work).
    expect(migrated.stderr).toMatch(/^ledgerd migrate: [\d,]+ entries read in \d+\.\d s \([\d,]+\/s\)\n$/);
    expect(migrated.stdout).toMatch(/book migrated from store layout 2-3 to 7 in place: 1 held and 1 revoked grant index entries moved, 0 account index entries made compact/);
    expect((await ledgerdRun(['check', '--data-dir', dir])).code).toBe(0);
    const daemon = await startDaemon({ dataDir: dir });
    try {
      const bob = client(daemon.url, keys.customers.bob!);
      const held = await bob.post('/v1/reservations', { payer: 'did:ledger:acct:alice', amount: '10', asset: 'USD' }, undefined, { 'client-key': 'after-layout2-1' });
      const used = (await decided(bob, held.body.operation_reference)).body;
      expect(used.state).toBe('Reserved');
      const postings = (await client(daemon.url, keys.operator).get('/v1/movements?account=did:ledger:acct:alice&limit=10')).body.movements;
      expect(postings.find((m: { operation: string }) => m.operation === used.operation_reference).authorities[0]).toMatchObject({ grant: live });
      // A transfer only the revoked grant covered answers as revoked.
      const sent = await bob.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '5' }] }, undefined, { 'client-key': 'after-layout2-2' });
      expect(refusalOf(sent)).toEqual({ status: 403, error: 'ERR-AuthorityRevoked' });
      expect(revoked).not.toBe(live);
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  });
});

describe('ledgerd migrate from layout 3', () => {
  it('makes the account index compact in place, resumes after a kill, and ends with the book this ledgerd writes', async () => {
    const dir = newDir();
    // 700 customers funded at genesis: 1,400 index entries, two pages of the move.
    await writeBook(dir, Object.fromEntries(Array.from({ length: 700 }, (_, i) => [`c${i}`, 10n])));
    await migratedFromLayout3AfterAKill(dir, leveldbStoreDefault, 1400);
  });

  it('refuses an index entry it cannot read, naming it; the book stays marked and served by no ledgerd', async () => {
    const dir = newDir();
    let damagedKey = '';
    await layFixtureBook(fixtureBook('layout-3'), dir, (entries) => {
      damagedKey = [...entries.keys()].find((key) => key.startsWith('aa/'))!;
      entries.set(damagedKey, entries.get(damagedKey)!.replace(/"amount":"\d+"/, '"amount":12'));
    });
    const refused = await ledgerdRun(['migrate', '--data-dir', dir]);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain(`${damagedKey}: damaged journal entry record: amount is not decimal text`);
    expect((await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0'])).stderr).toMatch(/store layout 3-4; this ledgerd reads layout 7: run ledgerd migrate/);
  });
});

describe('ledgerd migrate from layout 5', () => {
  it('moves the mark alone, the journal\'s chunks of leaves read as they stand beside the compact chunks written after', async () => {
    const dir = newDir();
    await writeBookWithEvents(dir);
    await migratedFromLayout5(dir, leveldbStoreDefault);
  }, 120_000);
});

describe('ledgerd migrate from layout 4', () => {
  it('stores each decided operation once, in its event chunk, in place; resumes after a kill, and ends with the book this ledgerd writes', async () => {
    const dir = newDir();
    await writeBookWithEvents(dir);
    await migratedFromLayout4AfterAKill(dir, leveldbStoreDefault);
  }, 120_000);
});
