/**
 * A database that stops answering in time (issue 26, item 1), on a real cluster: an
 * administrator's lock held on the book's table turns commands and queries into 503 with
 * Retry-After within the statement bound, never a hang; and a decider whose writes stay
 * stuck for longer than its lease stops renewing it, so a standby takes the book over.
 */
import { cpSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { type Daemon, client, daemonsOnPostgres, decided, postgresStore, refusalOf, startDaemon, useTempDirs, writeBook } from '../support.js';

daemonsOnPostgres();
const newDir = useTempDirs();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const transfer = { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '1' }] };

/** An administrator's session on the book's database. */
async function adminSession(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {});
  await c.connect();
  return c;
}

describe('ledgerd on PostgreSQL when a statement cannot finish', () => {
  it('answers a command and a query 503 with Retry-After within the statement bound while a lock is held, and decides again once it is gone', async () => {
    const dir = newDir();
    const store = await postgresStore(10_000, 500);
    const keysOf = await writeBook(dir, { alice: 1_000n, bob: 0n }, store);
    const daemon = await startDaemon({ dataDir: dir });
    const asAlice = client(daemon.url, keysOf.customers.alice!);
    const op = client(daemon.url, keysOf.operator);
    const admin = await adminSession(store.url);
    try {
      await admin.query('BEGIN');
      await admin.query('LOCK TABLE ledgerd_kv IN ACCESS EXCLUSIVE MODE');
      const t0 = performance.now();
      const during = await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'during-lock' });
      const commandMs = performance.now() - t0;
      expect(refusalOf(during)).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
      expect(during.headers['retry-after']).toBeDefined();
      const t1 = performance.now();
      expect(refusalOf(await op.get('/v1/trial-balance'))).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
      const queryMs = performance.now() - t1;
      // The bound is 500 ms a statement (plus the client's margin); before it, the lock's whole length.
      expect(commandMs).toBeLessThan(4_000);
      expect(queryMs).toBeLessThan(4_000);
      await sleep(3_000);
      expect(daemon.process.exitCode).toBeNull();
    } finally {
      await admin.query('ROLLBACK').catch(() => {});
      await admin.end();
    }
    let after = await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'during-lock' });
    for (let i = 0; i < 100 && after.status !== 202 && after.status !== 200; i++) {
      await sleep(200);
      after = await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'during-lock' });
    }
    expect([200, 202], after.text).toContain(after.status);
    expect((await decided(asAlice, after.body.operation_reference)).body.state).toBe('Completed');
    expect(await daemon.stop()).toBe(0);
  });

  it('lets the lease lapse when its writes stay stuck past it, so the standby takes the book over', async () => {
    const leaseMs = 2_000;
    const primaryDir = newDir();
    const store = await postgresStore(leaseMs, 300);
    const keysOf = await writeBook(primaryDir, { alice: 1_000_000n, bob: 0n }, store);
    const standbyDir = newDir();
    cpSync(primaryDir, standbyDir, { recursive: true });
    const primary = await startDaemon({ dataDir: primaryDir });
    const asAlice = client(primary.url, keysOf.customers.alice!);
    const first = await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'first' });
    expect((await decided(asAlice, first.body.operation_reference)).body.state).toBe('Completed');
    // Ready only once it holds the lease: started now, it waits as the standby.
    const standbyReady: Promise<Daemon> = startDaemon({ dataDir: standbyDir });
    standbyReady.catch(() => {});
    await sleep(500);

    // SHARE mode: every write of the book waits for the lock (then fails at the statement bound), while reads go on.
    const admin = await adminSession(store.url);
    let standby: Daemon | null = null;
    try {
      await admin.query('BEGIN');
      await admin.query('LOCK TABLE ledgerd_kv IN SHARE MODE');
      const lockedUntilMs = performance.now() + 3 * leaseMs;
      let n = 0;
      while (performance.now() < lockedUntilMs && primary.process.exitCode === null) {
        const r = await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': `stuck-${n++}` }).catch(() => null);
        if (r !== null && r.status !== 503) expect(r.status, r.text).toBe(202);
        if (n === 10) {
          // What the operator reads meanwhile (reads still work under this lock): commands refused, writes failing for a while.
          const status = (await client(primary.url, keysOf.operator).get('/v1/ops/store')).body;
          expect(status).toMatchObject({ kind: 'postgres', deciding: false });
          expect(status.writes_failing_ms).toBeGreaterThan(0);
        }
        await sleep(100);
      }
    } finally {
      await admin.query('ROLLBACK').catch(() => {});
      await admin.end();
    }
    standby = await standbyReady;
    try {
      const lease = await adminSession(store.url);
      try {
        const holder = ((await lease.query('SELECT holder FROM ledgerd_lease WHERE id = 1')).rows[0] as { holder: string }).holder;
        expect(holder).not.toBe('');
      } finally {
        await lease.end();
      }
      expect(primary.stderr.join('\n')).toContain('no longer renewing it');
      // The standby decides; the primary, fenced off, has stopped.
      const viaStandby = client(standby.url, keysOf.customers.alice!);
      const next = await viaStandby.post('/v1/transfers', transfer, undefined, { 'client-key': 'after-takeover' });
      expect([200, 202], next.text).toContain(next.status);
      expect((await decided(viaStandby, next.body.operation_reference)).body.state).toBe('Completed');
      for (let i = 0; i < 50 && primary.process.exitCode === null; i++) {
        await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': `late-${i}` }).catch(() => null);
        await sleep(200);
      }
      expect(primary.process.exitCode).not.toBeNull();
    } finally {
      await primary.stop('SIGKILL');
      await standby.stop();
    }
  }, 120_000);
});
