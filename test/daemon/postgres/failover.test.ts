/**
 * Failover on PostgreSQL's own replication: a primary and a synchronous standby cluster
 * on loopback; ledgerd under load on the primary; the primary's ledgerd and PostgreSQL
 * killed at random instants; the standby promoted and ledgerd started on it. Every
 * acknowledged command is there, decided once; a repeat under its client key has no
 * second effect; balances are what the decided commands make them; the trial balance
 * is zero and `ledgerd check` finds the book consistent.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type PostgresCluster, startPostgresCluster, startStandby } from '../../support/postgres-cluster.js';
import { clusterUrl, createBookDatabase } from '../../support/stores.js';
import { withPgClient } from '../../support/pg-books.js';
import { type Daemon, client, decided, ledgerd, removeDir, startDaemon, tempDir, writeBook } from '../support.js';
import { postgresStoreOf } from '../../../daemon/config.js';

const run = promisify(execFile);
const leaseMs = 2_000;
const workers = 16;
const database = 'ledger';
const fundingMinor = 1_000_000_000n;
const clusters: PostgresCluster[] = [];
const daemons: Daemon[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const d of daemons) await d.stop('SIGKILL');
  for (const c of clusters) await c.stop().catch(() => {});
  for (const dir of dirs) await removeDir(dir);
});

function admin<T>(cluster: PostgresCluster, use: (c: pg.Client) => Promise<T>, db = cluster.database): Promise<T> {
  return withPgClient(clusterUrl(cluster, db), use);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Command n: alice pays bob, or bob pays carol (refused in the decision while bob holds too little). */
function command(n: number) {
  const [from, to] = n % 3 === 0 ? ['bob', 'carol'] : ['alice', 'bob'];
  return { from, to, amountMinor: BigInt(1 + (n % 7)), body: { legs: [{ from: `did:ledger:acct:${from}`, to: `did:ledger:acct:${to}`, asset: 'USD', amount: String(1 + (n % 7)) }] } };
}

describe('failover to a synchronous standby', () => {
  it('loses no acknowledged command, decides each once, and balances to zero', async () => {
    const primary = await startPostgresCluster();
    clusters.push(primary);
    const standby = await startStandby(primary, 'standby1');
    clusters.push(standby);
    // Synchronous from here: a commit returns once the standby has flushed it too.
    await admin(primary, async (c) => {
      await c.query("ALTER SYSTEM SET synchronous_standby_names = 'standby1'");
      await c.query('SELECT pg_reload_conf()');
    });
    for (let i = 0; ; i++) {
      const state = await admin(primary, async (c) => (await c.query("SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'")).rows[0]?.sync_state);
      if (state === 'sync') break;
      if (i > 200) throw new Error(`the standby is not synchronous (${String(state)})`);
      await sleep(50);
    }
    await createBookDatabase(primary, database);

    const dir = tempDir();
    dirs.push(dir);
    const keys = await writeBook(dir, { alice: fundingMinor, bob: 0n, carol: 0n }, postgresStoreOf({ url: clusterUrl(primary, database), poolSize: 4, leaseMs }));
    const first = await startDaemon({ dataDir: dir });
    daemons.push(first);

    // Load: each worker submits its own commands one after another until the primary goes.
    const acked = new Map<number, string>();
    const sent = new Set<number>();
    let next = 0;
    let killed = false;
    const load = async (url: string) => {
      const asAlice = client(url, keys.customers.alice!);
      const asBob = client(url, keys.customers.bob!);
      while (!killed) {
        const n = next++;
        const c = command(n);
        sent.add(n);
        try {
          const r = await (c.from === 'alice' ? asAlice : asBob).post('/v1/transfers', c.body, undefined, { 'client-key': `k-${n}` });
          if (r.status === 202 || r.status === 200) acked.set(n, r.body.operation_reference);
        } catch {
          return;
        }
      }
    };
    const loading = Promise.all(Array.from({ length: workers }, () => load(first.url)));
    while (acked.size === 0) await sleep(5);
    // The primary's ledgerd and its PostgreSQL die at random instants, a little apart.
    await sleep(200 + Math.random() * 800);
    const ledgerdFirst = Math.random() < 0.5;
    const killLedgerd = async () => {
      await first.stop('SIGKILL');
    };
    const killPostgres = () => primary.crash();
    if (ledgerdFirst) await killLedgerd();
    else await killPostgres();
    await sleep(Math.random() * 50);
    if (ledgerdFirst) await killPostgres();
    else await killLedgerd();
    killed = true;
    await loading;
    expect(acked.size).toBeGreaterThan(workers);

    // Failover: promote the standby, start ledgerd on it (it waits out the dead one's lease, then decides its backlog).
    await standby.promote();
    const standbyUrl = clusterUrl(standby, database);
    const second = await startDaemon({ dataDir: dir, env: { LEDGERD_STORE_URL: standbyUrl } });
    daemons.push(second);
    const asAlice = client(second.url, keys.customers.alice!);
    const asBob = client(second.url, keys.customers.bob!);

    // Every acknowledged command is there and decided.
    const views = new Map<number, { ref: string; state: string }>();
    const check = async (ns: number[]) => {
      for (const n of ns) {
        const c = command(n);
        const as = c.from === 'alice' ? asAlice : asBob;
        const known = acked.get(n);
        // A repeat of every command sent (acknowledged or not) under its client key: never a second effect.
        const again = await as.post('/v1/transfers', c.body, undefined, { 'client-key': `k-${n}` });
        expect([200, 202], `repeat of ${n}: ${again.text}`).toContain(again.status);
        if (known !== undefined) expect(again.body.operation_reference, `acknowledged ${n} kept its operation`).toBe(known);
        const view = await decided(as, again.body.operation_reference);
        expect(['Completed', 'Rejected'], `${n}`).toContain(view.body.state);
        views.set(n, { ref: again.body.operation_reference, state: view.body.state });
      }
    };
    const all = [...sent].sort((x, y) => x - y);
    await Promise.all(Array.from({ length: workers }, (_, w) => check(all.filter((_, i) => i % workers === w))));
    expect(new Set([...views.values()].map((v) => v.ref)).size).toBe(views.size);

    // Balances are exactly what the Completed commands make them: each decided once.
    const expected = { alice: fundingMinor, bob: 0n, carol: 0n };
    for (const [n, v] of views) {
      if (v.state !== 'Completed') continue;
      const c = command(n);
      expected[c.from as keyof typeof expected] -= c.amountMinor;
      expected[c.to as keyof typeof expected] += c.amountMinor;
    }
    const op = client(second.url, keys.operator);
    for (const name of ['alice', 'bob', 'carol'] as const) {
      const r = await op.get(`/v1/accounts/did:ledger:acct:${name}/balances`);
      const usd = r.body.balances.find((b: { asset: string }) => b.asset === 'USD');
      expect({ name, available: usd.available }).toEqual({ name, available: String(expected[name]) });
    }
    const tb = await op.get('/v1/trial-balance');
    expect(tb.body.rows.every((row: { openings: string }) => row.openings === '0')).toBe(true);

    expect(await second.stop()).toBe(0);
    const checked = await run(process.execPath, [ledgerd, 'check', '--data-dir', dir], { env: { ...process.env, LEDGERD_STORE_URL: standbyUrl } });
    expect(checked.stdout).toMatch(/: consistent\n$/);
    console.log(`failover: ${sent.size} sent, ${acked.size} acknowledged before the kill (${ledgerdFirst ? 'ledgerd' : 'PostgreSQL'} first)`);
  });
});
