/**
 * ledgerd against a PostgreSQL double-entry ledger (sql-ledger.ts), side by side on the
 * same machine, with the same load (bench/http-load.ts: the closed loop bench/http.ts
 * uses, the same client count, the same 1-leg transfer bodies among the same number of
 * funded accounts): ledgerd over HTTP, then the same body through a minimal Fastify
 * front calling PostgreSQL's `transfer` function (front.ts), then, for reference, the
 * function called directly through `pg` (no HTTP). PostgreSQL 15 runs from Debian's
 * packages in a private cluster (test/support/postgres-cluster.ts) with fsync and
 * synchronous_commit on, as ledgerd fsyncs. Nothing is asserted.
 *
 * `--pinning pinned,unpinned` (the default: both, a table each): pinned, each server under
 * test (ledgerd's threads; PostgreSQL's processes and its HTTP front) runs on one core and
 * this load generator on the other (bench/pinning.ts). Each row prints the server's CPU
 * per transfer, all its processes counted.
 *
 *   npm run bench:versus-postgres -- [--pinning pinned,unpinned] [--connections 64] [--seconds 10] [--warmup-seconds 2] [--accounts 1000] [--pg-pool 64]
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startPostgresCluster } from '../../test/support/postgres-cluster.js';
import { benchAccount } from '../genesis.js';
import { benchFundingMinor, closedLoop, drive, loadFlags, type LoadOptions, loadOptions, measureCpu, type Run, runLedgerd, startServer, stopServer, transferPair } from '../http-load.js';
import { type Pinning, parsePinnings, pinnedSides, processTree, setAffinity, treeCpuMs, unpin, unpinned } from '../pinning.js';
import { percentile } from '../percentile.js';
import { checkBook, installFundedLedger, refusalCodes, transfer, transferBatch } from './sql-ledger.js';

const { values: args } = parseArgs({
  options: {
    ...loadFlags,
    /** PostgreSQL connections in each pool; default: the client count, at most `pgPoolDefaultMax`. */
    'pg-pool': { type: 'string' },
    pinning: { type: 'string', default: 'pinned,unpinned' },
  },
});
/** A sensible pool for a 2-core machine: past this, more backends only contend. */
const pgPoolDefaultMax = 64;
const loadOptionsRead = loadOptions(args);
const pgPool = Number(args['pg-pool'] ?? Math.min(loadOptionsRead.connections, pgPoolDefaultMax));
if (!Number.isSafeInteger(pgPool) || pgPool < 1) throw new Error(`bad --pg-pool: ${args['pg-pool']}`);
/** Settings read back from the running server, to print what was measured. */
const shownSettings = ['server_version', 'fsync', 'synchronous_commit', 'full_page_writes', 'wal_level', 'wal_sync_method', 'commit_delay', 'shared_buffers', 'max_connections'];

/** One server's run: its figures and its CPU per transfer (all its processes, µs). */
interface Measured {
  readonly run: Run;
  readonly cpuUsPerTransfer: number;
}

async function pass(pinning: Pinning, batchSize: number | null): Promise<void> {
  const options = { ...loadOptionsRead, batchSize };
  const loadBefore = loadavg();
  const ledgerd = await runLedgerd(options, [], undefined, pinning);

  const cluster = await startPostgresCluster({ settings: { max_connections: String(pgPool + 10) } });
  // The postmaster's pid heads postmaster.pid; backends forked later inherit its core.
  const postmasterPid = Number(readFileSync(join(cluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  if (pinning.serverCpus !== null) for (const pid of processTree(postmasterPid)) setAffinity(pid, pinning.serverCpus);
  const pgEnv = { PGHOST: cluster.host, PGPORT: String(cluster.port), PGUSER: cluster.user, PGPASSWORD: cluster.password, PGDATABASE: cluster.database };
  const connection = { host: cluster.host, port: cluster.port, user: cluster.user, password: cluster.password, database: cluster.database };
  try {
    const admin = new pg.Client(connection);
    await admin.connect();
    await installFundedLedger(admin, Array.from({ length: options.accounts }, (_, i) => benchAccount(i)), benchFundingMinor);
    const settings = (await admin.query<{ name: string; setting: string }>('SELECT name, current_setting(name) AS setting FROM unnest($1::text[]) AS name', [shownSettings])).rows;

    const token = randomBytes(24).toString('hex');
    const front = await startServer([join(new URL('.', import.meta.url).pathname, 'front.js')], { ...process.env, ...pgEnv, PG_POOL_MAX: String(pgPool), FRONT_TOKEN: token }, pinning);
    const frontPid = front.child.pid!;
    const frontCpu = measureCpu(options, () => treeCpuMs(frontPid) + treeCpuMs(postmasterPid));
    const overHttp = await drive(front.url, token, options);
    const overHttpCpuMs = frontCpu.stop();
    await stopServer(front.child);

    const db = new pg.Pool({ ...connection, max: pgPool });
    db.on('error', () => {}); // an idle connection's error: the pool drops it; end() can race the server's shutdown
    const faults = new Map<string, number>();
    const directCpu = measureCpu(options, () => treeCpuMs(postmasterPid));
    const direct = await closedLoop(options, async (n) => {
      try {
        if (batchSize !== null) {
          const items = Array.from({ length: batchSize }, (_, i) => {
            const { from, to } = transferPair(n * batchSize + i, options.accounts);
            return { from: benchAccount(from), to: benchAccount(to), asset: 'USD', amountMinor: 1n, idempotencyKey: `direct:${n}:${i}` };
          });
          const outcomes = await transferBatch(db, items);
          return { ok: true, accepted: outcomes.filter((o) => !('refusal' in o)).length };
        }
        const { from, to } = transferPair(n, options.accounts);
        await transfer(db, benchAccount(from), benchAccount(to), 'USD', 1n, `direct:${n}`);
        return { ok: true };
      } catch (error) {
        const code = (error as { code?: string }).code ?? 'other';
        if (refusalCodes[code] === undefined) faults.set(code, (faults.get(code) ?? 0) + 1);
        return { ok: false };
      }
    });
    const directCpuMs = directCpu.stop();
    await db.end();

    const book = await checkBook(admin);
    await admin.end();
    const loadAfter = loadavg();
    const perTransfer = (cpuMs: number, run: Run) => (cpuMs * 1000) / Math.max(1, run.acks);
    report(
      options,
      pinning,
      { ...ledgerd, cpuUsPerTransfer: ledgerd.cpuUsPerAck },
      { run: overHttp, cpuUsPerTransfer: perTransfer(overHttpCpuMs, overHttp) },
      { run: direct, cpuUsPerTransfer: perTransfer(directCpuMs, direct) },
      settings,
      book,
      faults,
      [loadBefore, loadAfter],
    );
  } finally {
    await cluster.stop();
  }
}

async function main(): Promise<void> {
  for (const kind of parsePinnings(args.pinning)) {
    const pinning = kind === 'pinned' ? pinnedSides() : unpinned;
    for (const batchSize of loadOptionsRead.batchSize == null ? [null] : [null, loadOptionsRead.batchSize]) await pass(pinning, batchSize);
    if (kind === 'pinned') unpin();
  }
}

function report(
  options: LoadOptions,
  pinning: Pinning,
  ledgerd: Measured & { decidedMs: number[] },
  overHttp: Measured,
  direct: Measured,
  settings: { name: string; setting: string }[],
  book: Awaited<ReturnType<typeof checkBook>>,
  faults: Map<string, number>,
  loads: number[][],
): void {
  const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
  const rate = (run: Run) => run.acks / run.elapsedS;
  const row = (name: string, { run, cpuUsPerTransfer }: Measured, decided: string) => {
    const sorted = [...run.latenciesMs].sort((a, b) => a - b);
    console.log(`| ${name} | ${Math.round(rate(run))} | ${fmt(percentile(sorted, 50))} | ${fmt(percentile(sorted, 99))} | ${decided} | ${run.refused} | ${cpuUsPerTransfer.toFixed(0)} µs |`);
  };
  console.log(`\nVersus PostgreSQL, ${pinning.label}, ${options.batchSize === null ? 'one transfer per request' : `batches of ${options.batchSize} (ledgerd: POST /v1/batches; SQL: one transfer_batch call over arrays)`}: ${options.connections} clients, ${options.seconds} s measured after ${options.warmupSeconds} s warm-up, ${options.accounts} funded accounts, random 1-leg transfers; ${cpus().length} cores, Node ${process.version}`);
  console.log(`PostgreSQL: ${settings.map((s) => `${s.name}=${s.setting}`).join(', ')}; pool of ${pgPool} connections`);
  console.log(`load average (1/5/15 min) before ${loads[0]!.map((l) => l.toFixed(2)).join('/')}, after ${loads[1]!.map((l) => l.toFixed(2)).join('/')}`);
  console.log('| target | transfers/s | reply p50 | reply p99 | submit-to-decided p50 / p99 | refused | server CPU per transfer (all its processes) |');
  console.log('|---|---|---|---|---|---|---|');
  const decided = `${fmt(percentile(ledgerd.decidedMs, 50))} / ${fmt(percentile(ledgerd.decidedMs, 99))} (${ledgerd.decidedMs.length} of ${ledgerd.run.submittedAt.size} seen)`;
  row('ledgerd, HTTP (reply: durable, not yet decided)', ledgerd, decided);
  row('PostgreSQL, HTTP front (reply: decided)', overHttp, 'at reply');
  row('PostgreSQL, direct pg, no HTTP (reply: decided)', direct, 'at reply');
  console.log(`ledgerd / PostgreSQL over HTTP: ${(rate(ledgerd.run) / Math.max(1, rate(overHttp.run))).toFixed(2)}x transfers/s (aim: >= 10x); CPU per transfer ${(overHttp.cpuUsPerTransfer / Math.max(1e-9, ledgerd.cpuUsPerTransfer)).toFixed(2)}x ledgerd's`);
  console.log(`PostgreSQL book after both runs: ${book.transfers} transfers, balances sum to ${book.balancesMinor}, ${book.unbalancedTransfers} unbalanced transfers, ${book.driftedAccounts} accounts off their entries${faults.size === 0 ? '' : `; direct faults: ${[...faults].map(([c, n]) => `${c} x${n}`).join(', ')}`}`);
}

await main();
