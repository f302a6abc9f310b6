/**
 * Snapshot bounds on PostgreSQL (docs/daemon.md, snapshotsPerPrincipalMax): every query
 * holds a pooled connection while it reads, so one principal flooding slow queries must
 * not queue everyone else. The queries are made slow for real: the test locks the book's
 * table, so every snapshot read waits in PostgreSQL holding its connection.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { addConfig, client, daemonsOnPostgres, type Daemon, postgresStore, refusalOf, type Reply, startDaemon, useTempDirs, writeBook } from '../support.js';

daemonsOnPostgres();
const newDir = useTempDirs();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const movementsOf = (name: string) => `/v1/movements?account=did:ledger:acct:${name}&limit=10`;

/**
 * While the table is locked only the queries may wait on it: bearers are remembered (so
 * authentication reads nothing) and the layer's blocks and checkpoints are not timed.
 */
const quiet = { authCacheMs: 60_000, settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0 } };

let daemon: Daemon | null = null;
afterEach(async () => {
  await daemon?.stop();
  daemon = null;
});

/** Polls `check` until it holds (every wait here ends in a few hundred ms unless the bound is broken). */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await sleep(20);
  }
  throw new Error(`timed out waiting until ${what}`);
}

/**
 * Locks the book's table so every read of it waits in PostgreSQL, holding its connection;
 * `waiting` counts those reads, seen from a second connection (a transaction sees
 * pg_stat_activity as of its first look).
 */
async function lockBook(url: string): Promise<{ waiting(): Promise<number>; release(): Promise<void> }> {
  const [locker, watcher] = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
  for (const c of [locker, watcher]) {
    c.on('error', () => {});
    await c.connect();
  }
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE ledgerd_kv IN ACCESS EXCLUSIVE MODE');
  let released: Promise<unknown> | null = null;
  return {
    waiting: async () => Number((await watcher.query("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n),
    // Ending the locker's session ends its transaction and the lock with it.
    release: async () => {
      released ??= Promise.all([locker.end(), watcher.end()]);
      await released;
    },
  };
}

/** Requests sent at once, with their replies gathered as they come. */
function flood(request: () => Promise<Reply>, count: number): { replies: Reply[]; all: Promise<Reply[]> } {
  const replies: Reply[] = [];
  const all = Promise.all(Array.from({ length: count }, () => request().then((r) => (replies.push(r), r))));
  return { replies, all };
}

describe('snapshots on PostgreSQL, bounded per principal with a share for the operator', () => {
  it('refuses a principal past its bound at once (503 ERR-DecisionUnavailable, Retry-After) while others and the operator still get a connection', async () => {
    const dir = newDir();
    // A pool of 8: a principal may hold 4 snapshots, all but the operator together 6.
    const store = { ...(await postgresStore()), poolSize: 8 };
    const keys = await writeBook(dir, { alice: 1_000n, bob: 0n, carol: 0n }, store);
    addConfig(dir, quiet);
    daemon = await startDaemon({ dataDir: dir });
    const as = (key: string) => client(daemon!.url, key);
    const [alice, bob, carol, op] = [as(keys.customers.alice!), as(keys.customers.bob!), as(keys.customers.carol!), as(keys.operator)];
    for (const [who, name] of [[alice, 'alice'], [bob, 'bob'], [carol, 'carol'], [op, 'alice']] as const) expect((await who.get(movementsOf(name))).status).toBe(200);

    const lock = await lockBook(store.url);
    try {
      // Alice floods: 4 reads take connections and wait; the other 8 are refused at once, not queued.
      const aliceFlood = flood(() => alice.get(movementsOf('alice')), 12);
      await until("alice's excess is refused", () => aliceFlood.replies.length === 8);
      for (const r of aliceFlood.replies) {
        expect(refusalOf(r)).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
        expect(r.headers['retry-after']).toBe('1');
      }
      await until("alice's 4 reads wait in PostgreSQL", async () => (await lock.waiting()) === 4);

      // Bob still gets connections (2: the principals but the operator are now at their 6) ...
      const bobReads = flood(() => bob.get(movementsOf('bob')), 2);
      await until("bob's reads wait in PostgreSQL", async () => (await lock.waiting()) === 6);
      // ... carol is refused, the pool's rest being the operator's ...
      expect(refusalOf(await carol.get(movementsOf('carol')))).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
      // ... and the operator still gets its share.
      const opReads = flood(() => op.get(movementsOf('alice')), 2);
      await until("the operator's reads wait in PostgreSQL", async () => (await lock.waiting()) === 8);
      expect(aliceFlood.replies.length + bobReads.replies.length + opReads.replies.length).toBe(8);

      await lock.release();
      const answered = [...(await aliceFlood.all).filter((r) => r.status !== 503), ...(await bobReads.all), ...(await opReads.all)];
      expect(answered.map((r) => r.status)).toEqual(Array(8).fill(200));
    } finally {
      await lock.release();
    }
    // The slots were all given back: each principal reads again.
    for (const [who, name] of [[alice, 'alice'], [bob, 'bob'], [carol, 'carol'], [op, 'alice']] as const) expect((await who.get(movementsOf(name))).status).toBe(200);
  });

  it('takes snapshotsPerPrincipalMax from the config', async () => {
    const dir = newDir();
    const store = { ...(await postgresStore()), poolSize: 8 };
    const keys = await writeBook(dir, { alice: 1_000n }, store);
    addConfig(dir, { ...quiet, snapshotsPerPrincipalMax: 1 });
    daemon = await startDaemon({ dataDir: dir });
    const alice = client(daemon.url, keys.customers.alice!);
    expect((await alice.get(movementsOf('alice'))).status).toBe(200);

    const lock = await lockBook(store.url);
    try {
      const aliceFlood = flood(() => alice.get(movementsOf('alice')), 3);
      await until("alice's excess is refused", () => aliceFlood.replies.length === 2);
      for (const r of aliceFlood.replies) expect(refusalOf(r)).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
      await lock.release();
      expect((await aliceFlood.all).filter((r) => r.status === 200)).toHaveLength(1);
    } finally {
      await lock.release();
    }
  });
});
