/**
 * Read slots on PostgreSQL (docs/daemon.md, "Reads under load"): every read holds a pooled
 * connection, so each principal runs at most its share of the pool and its further reads
 * wait their turn in its own queue, bounded in length and in time; only those past either
 * bound are refused (503 ERR-DecisionUnavailable, Retry-After). The reads are made slow for
 * real: the test locks the book's table, so every snapshot read waits in PostgreSQL holding
 * its connection.
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

/** Polls `check` until it holds (every wait here ends in a few hundred ms unless the bound is broken; 30 s for a whole-suite run on 2 cores). */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1500; i++) {
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

const metricValue = (text: string, name: string) => Number(new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} ([0-9.]+)$`, 'm').exec(text)?.[1] ?? NaN);

describe('reads on PostgreSQL: a share of the pool per principal, the rest waits its turn', () => {
  it("answers one principal's 32 concurrent reads all 200 on the default pool, within the wait bound, and logs that they waited", async () => {
    const dir = newDir();
    // The default pool (8): a principal runs 4 reads at once, the other 28 wait in its queue.
    const store = { ...(await postgresStore()), poolSize: 8 };
    const keys = await writeBook(dir, { alice: 1_000n }, store);
    daemon = await startDaemon({ dataDir: dir, env: { LEDGERD_LOG_LEVEL: 'info' } });
    const alice = client(daemon.url, keys.customers.alice!);
    expect((await alice.get(movementsOf('alice'))).status).toBe(200);
    const startedMs = Date.now();
    const replies = await Promise.all(Array.from({ length: 32 }, () => alice.get(movementsOf('alice'))));
    const tookMs = Date.now() - startedMs;
    expect(replies.map((r) => r.status)).toEqual(Array(32).fill(200));
    // snapshotQueueWaitMs's default bounds each wait: the whole burst ends well within it.
    expect(tookMs).toBeLessThan(5_000);
    await until('the request log is written', () => daemon!.stderr.filter((l) => l.includes('"url":"/v1/movements')).length >= 33);
    const logged = daemon.stderr.filter((l) => l.includes('"url":"/v1/movements')).map((l) => JSON.parse(l) as { status: number; waitedMs?: number });
    // Those that waited their turn say so, with how long.
    const waited = logged.filter((l) => l.waitedMs !== undefined);
    expect(waited.length).toBeGreaterThan(0);
    for (const l of waited) expect(l.status === 200 && l.waitedMs! >= 1).toBe(true);
  });

  it("queues a principal's reads past its share, refuses those past the queue's length at once, and those past the wait when it runs out; others and the operator still read", async () => {
    const dir = newDir();
    // A pool of 8: a principal runs 4 reads, all but the operator 6; queues of 3, waits of 1.5 s.
    const store = { ...(await postgresStore()), poolSize: 8 };
    const keys = await writeBook(dir, { alice: 1_000n, bob: 0n, carol: 0n }, store);
    addConfig(dir, { ...quiet, snapshotQueuePerPrincipalMax: 3, snapshotQueueWaitMs: 1_500 });
    daemon = await startDaemon({ dataDir: dir });
    const as = (key: string) => client(daemon!.url, key);
    const [alice, bob, carol, op] = [as(keys.customers.alice!), as(keys.customers.bob!), as(keys.customers.carol!), as(keys.operator)];
    for (const [who, name] of [[alice, 'alice'], [bob, 'bob'], [carol, 'carol'], [op, 'alice']] as const) expect((await who.get(movementsOf(name))).status).toBe(200);
    // A scrape with the book readable: its gauges have values to show while it is not.
    expect(metricValue((await op.get('/metrics')).text, 'ledgerd_book_balanced')).toBe(1);

    const lock = await lockBook(store.url);
    try {
      // Alice sends 10: 4 take connections and wait in PostgreSQL, 3 wait in her queue, 3 are refused at once.
      const aliceFlood = flood(() => alice.get(movementsOf('alice')), 10);
      await until("alice's excess is refused", () => aliceFlood.replies.length === 3);
      for (const r of aliceFlood.replies) {
        expect(refusalOf(r)).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
        expect(r.headers['retry-after']).toBe('1');
        expect(r.body.description).toMatch(/queue 3 more/);
      }
      await until("alice's 4 reads wait in PostgreSQL", async () => (await lock.waiting()) === 4);

      // Bob gets 2 connections (the principals but the operator are at their 6), his third waits;
      // carol's read waits too, and the operator's reads take its reserve.
      const bobReads = flood(() => bob.get(movementsOf('bob')), 3);
      const carolRead = flood(() => carol.get(movementsOf('carol')), 1);
      const opReads = flood(() => op.get(movementsOf('alice')), 2);
      await until('bob and the operator hold the rest of the pool', async () => (await lock.waiting()) === 8);

      // The queued reads' wait runs out: refused 503 with Retry-After, never a timeout.
      await until("the queued reads' wait runs out", () => aliceFlood.replies.length === 6 && bobReads.replies.length === 1 && carolRead.replies.length === 1);
      for (const r of [...aliceFlood.replies.slice(3), ...bobReads.replies, ...carolRead.replies]) {
        expect(refusalOf(r)).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
        expect(r.headers['retry-after']).toBe('1');
        expect(r.body.description).toMatch(/waited 1500 ms/);
      }
      // Scraped while the lock holds every pooled connection: the book's gauges are read by one reader in the
      // background, so the scrape answers within its wait (metricsBookReadWaitMs) with the last values and their
      // age, never queued behind the database. The counters say what happened under the lock.
      for (let i = 0; i < 2; i++) {
        const startedMs = Date.now();
        const scrape = await op.get('/metrics');
        expect({ status: scrape.status, quick: Date.now() - startedMs < 2_500 }).toEqual({ status: 200, quick: true });
        expect(metricValue(scrape.text, 'ledgerd_book_balanced')).toBe(1);
        expect(metricValue(scrape.text, 'ledgerd_book_gauges_age_seconds')).toBeGreaterThanOrEqual(1);
        expect(metricValue(scrape.text, 'ledgerd_reads_queued{share="principals"}')).toBe(0);
        expect(metricValue(scrape.text, 'ledgerd_read_refusals_total{share="principals",reason="queue_full"}')).toBe(3);
        expect(metricValue(scrape.text, 'ledgerd_read_refusals_total{share="principals",reason="wait_expired"}')).toBe(5);
      }
      await lock.release();
      const answered = [...(await aliceFlood.all).filter((r) => r.status !== 503), ...(await bobReads.all).filter((r) => r.status !== 503), ...(await opReads.all)];
      expect(answered.map((r) => r.status)).toEqual(Array(8).fill(200));
    } finally {
      await lock.release();
    }
    // The slots were all given back: each principal reads again.
    for (const [who, name] of [[alice, 'alice'], [bob, 'bob'], [carol, 'carol'], [op, 'alice']] as const) expect((await who.get(movementsOf(name))).status).toBe(200);
  });

  it('serves waiting principals in turn as slots free: a flood queued first does not keep a later reader waiting behind all of it', async () => {
    const dir = newDir();
    // A pool of 4 (2 per principal, 3 for all but the operator): alice fills her 2 and queues 20; bob's first read
    // runs at once on the third connection and his next 3 queue behind alice's 20, in arrival order.
    const store = { ...(await postgresStore()), poolSize: 4 };
    const keys = await writeBook(dir, { alice: 1_000n, bob: 0n }, store);
    addConfig(dir, { ...quiet, snapshotQueuePerPrincipalMax: 20 });
    daemon = await startDaemon({ dataDir: dir });
    const [alice, bob] = [client(daemon.url, keys.customers.alice!), client(daemon.url, keys.customers.bob!)];
    for (const [who, name] of [[alice, 'alice'], [bob, 'bob']] as const) expect((await who.get(movementsOf(name))).status).toBe(200);

    const order: string[] = [];
    const lock = await lockBook(store.url);
    try {
      const aliceReads = flood(() => alice.get(movementsOf('alice')).then((r) => (order.push('alice'), r)), 22);
      await until("alice's 2 reads wait in PostgreSQL", async () => (await lock.waiting()) === 2);
      const bobReads = flood(() => bob.get(movementsOf('bob')).then((r) => (order.push('bob'), r)), 4);
      await until("bob's first read waits in PostgreSQL", async () => (await lock.waiting()) === 3);
      await lock.release();
      expect([...(await aliceReads.all), ...(await bobReads.all)].map((r) => r.status)).toEqual(Array(26).fill(200));
    } finally {
      await lock.release();
    }
    // Round-robin: bob's 4 are all answered before alice's last few, not after her whole queue.
    const lastBob = order.lastIndexOf('bob');
    expect(lastBob).toBeLessThan(order.length - 10);
  });

  it("holds checkpoint reads to the caller's share of the pool as well: the rest of a principal's burst waits in its queue, and the operator still gets a connection", async () => {
    const dir = newDir();
    // A pool of 4: a principal runs 2 reads at once, all but the operator 3.
    const store = { ...(await postgresStore()), poolSize: 4 };
    const keys = await writeBook(dir, { alice: 1_000n }, store);
    addConfig(dir, { ...quiet, snapshotQueuePerPrincipalMax: 20 });
    daemon = await startDaemon({ dataDir: dir });
    const [alice, op] = [client(daemon.url, keys.customers.alice!), client(daemon.url, keys.operator)];
    // Tokens looked up before the lock: a burst's lookups of one cold token are one read, which would wait in PostgreSQL in place of the reads measured here.
    for (const who of [alice, op]) expect((await who.get(movementsOf('alice'))).status).toBe(200);
    for (const path of ['/v1/checkpoints', '/v1/checkpoints/1']) {
      const lock = await lockBook(store.url);
      try {
        const burst = flood(() => alice.get(path), 6);
        await until(`alice's reads of ${path} wait in PostgreSQL`, async () => (await lock.waiting()) >= 2);
        await sleep(300);
        // Her share (2) holds connections; her other 4 wait in her queue, not in the pool's.
        expect(await lock.waiting()).toBe(2);
        const opRead = flood(() => op.get(movementsOf('alice')), 1);
        await until("the operator's read waits in PostgreSQL beside hers", async () => (await lock.waiting()) === 3);
        await lock.release();
        expect((await burst.all).every((r) => r.status === 200 || refusalOf(r).error === 'ERR-AnchorNotFinal')).toBe(true);
        expect((await opRead.all)[0]!.status).toBe(200);
      } finally {
        await lock.release();
      }
    }
  });
});
