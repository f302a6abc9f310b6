/**
 * Fair service under a flood (issue 22; docs/daemon.md, "Floods" and "Reads under load"):
 * the real `ledgerd` (a child process on a fresh LevelDB book in a temp dir, daemon
 * defaults) and three customers: A floods, B is a well-behaved client, and the operator.
 * Prints, quiet and under the flood side by side:
 *
 * - transfers: B's one-at-a-time transfers (one every 50 ms at most), sent to acknowledged
 *   and sent to decided (from B's own event stream) p50/p99 and the share acknowledged,
 *   while A keeps `--flood-connections` connections sending transfers and resends at once
 *   when refused (ignoring Retry-After); and what A was answered, by status, code and
 *   description, with how many 503s carried ERR-DecisionUnavailable and Retry-After.
 * - reads: B's and the operator's reads (a page of movements) p50/p99, while A keeps
 *   `--read-connections` reads in flight; A's refusals by reason, as A was told them and as
 *   the daemon counts them (`ledgerd_read_refusals_total`).
 *
 * The flood runs in a process of its own (test/support/flood.ts), so its loops do not
 * time this process. Nothing is asserted; the machine's load average and Node's version are
 * printed with the figures, since a shared machine moves them.
 *
 *   npm run build && node dist/bench/fairness.js [--samples 40] [--flood-connections 200] [--read-connections 1000] [--backlog-max N] [--profile-dir DIR]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { drawApiKey } from '../daemon/book.js';
import { leveldbStoreDefault } from '../daemon/config.js';
import { type Flood, type FloodReport, startFlood } from '../test/support/flood.js';
import { benchAccount } from './genesis.js';
import { followDecisions, startServer, stopServer, writeBook } from './http-load.js';
import { percentile } from './percentile.js';

const { values: args } = parseArgs({
  options: {
    /** Transfers, and reads per reader, timed in each phase. */
    samples: { type: 'string', default: '40' },
    'flood-connections': { type: 'string', default: '200' },
    'read-connections': { type: 'string', default: '1000' },
    /** The daemon's backlogMax (default: the daemon's): small, A's transfers meet its share (1/8 of it) at once and are refused from then on. */
    'backlog-max': { type: 'string' },
    /** Write a V8 CPU profile of ledgerd here (node --cpu-prof), to see where its time goes under the floods. */
    'profile-dir': { type: 'string' },
  },
});
const count = (name: keyof typeof args, min: number, max: number): number => {
  const n = Number(args[name]);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new Error(`bad --${name}: ${args[name]} (${min}..${max})`);
  return n;
};
const samples = count('samples', 1, 10_000);
const floodConnections = count('flood-connections', 1, 5_000);
const readConnections = count('read-connections', 1, 5_000);
const backlogMax = args['backlog-max'] === undefined ? null : count('backlog-max', 2, 1_000_000);
const profile = args['profile-dir'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', args['profile-dir']];

const repoRoot = new URL('../../', import.meta.url).pathname;
/** A gap B keeps between its transfers, as a client sending one every 50 ms does. */
const transferGapMs = 50;
/** How long to wait, after B's last transfer, for the decisions of those acknowledged. */
const decisionWaitMs = 10_000;
/** A flood stops by itself after this long, whatever happens to the bench. */
const floodDurationMaxMs = 300_000;
/** A, B and the payee: customers b0, b1, b2. */
const [floodIndex, quietIndex, payeeIndex] = [0, 1, 2];
const movementsOf = (i: number) => `/v1/movements?account=${benchAccount(i)}&limit=10`;
const transferOf = (from: number, n: number) => ({ legs: [{ amount: '1', asset: 'USD', from: benchAccount(from), to: benchAccount(payeeIndex) }], reference: n });

interface Timed {
  /** Each answer's time (ms), by whether it was 2xx. */
  readonly okMs: number[];
  readonly refused: number;
  /** Sent to decided (ms), of those acknowledged whose decision was seen. */
  readonly decidedMs: number[];
}

const client = (url: string, token: string) => ({ pool: new Pool(url, { connections: 1 }), headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
type Client = ReturnType<typeof client>;

/** B's transfers, one at a time: each timed to its acknowledgement and (from B's stream) to its decision. */
async function transfersOneAtATime(who: Client, decidedAt: Map<string, number>, phase: string): Promise<Timed> {
  const okMs: number[] = [];
  const sentAt = new Map<string, number>();
  let refused = 0;
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    const res = await who.pool.request({ method: 'POST', path: '/v1/transfers', headers: { ...who.headers, 'client-key': `${phase}-${i}` }, body: JSON.stringify(transferOf(quietIndex, i)) });
    const text = await res.body.text();
    const took = performance.now() - t0;
    if (res.statusCode === 202) {
      okMs.push(took);
      sentAt.set((JSON.parse(text) as { operation_reference: string }).operation_reference, t0);
    } else refused++;
    if (took < transferGapMs) await sleep(transferGapMs - took);
  }
  const until = performance.now() + decisionWaitMs;
  while ([...sentAt.keys()].some((ref) => !decidedAt.has(ref)) && performance.now() < until) await sleep(20);
  const decidedMs = [...sentAt].flatMap(([ref, t0]) => (decidedAt.has(ref) ? [decidedAt.get(ref)! - t0] : []));
  return { okMs, refused, decidedMs };
}

/** `samples` reads one after another. */
async function readsOneAtATime(who: Client, path: string): Promise<Timed> {
  const okMs: number[] = [];
  let refused = 0;
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    const res = await who.pool.request({ method: 'GET', path, headers: who.headers });
    await res.body.text();
    if (res.statusCode === 200) okMs.push(performance.now() - t0);
    else refused++;
  }
  return { okMs, refused, decidedMs: [] };
}

/** Runs `measure` while `flood` is at full strength; always stops the flood. */
async function underFlood<T>(flood: Flood, measure: () => Promise<T>): Promise<{ measured: T; report: FloodReport }> {
  let measured: T;
  try {
    await flood.ready;
    measured = await measure();
  } catch (error) {
    await flood.stop().catch(() => {});
    throw error;
  }
  return { measured, report: await flood.stop() };
}

/** The daemon's read refusals by share and reason (ledgerd_read_refusals_total), scraped by the operator. */
async function readRefusals(op: Client): Promise<Map<string, number>> {
  const res = await op.pool.request({ method: 'GET', path: '/metrics', headers: op.headers });
  const text = await res.body.text();
  return new Map([...text.matchAll(/^ledgerd_read_refusals_total\{(.*)\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
}

const fmt = (ms: number) => (Number.isNaN(ms) ? 'n/a' : `${ms.toFixed(1)} ms`);
const p = (ms: readonly number[], q: number) => fmt(percentile([...ms].sort((a, b) => a - b), q));
const times = (loaded: readonly number[], quiet: readonly number[]) => {
  const [l, q] = [percentile([...loaded].sort((a, b) => a - b), 99), percentile([...quiet].sort((a, b) => a - b), 99)];
  return Number.isFinite(l / q) ? `${(l / q).toFixed(1)}x` : 'n/a';
};
const load = () => loadavg().map((n) => n.toFixed(2)).join(' ');

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-fairness-'));
  const [operatorKey, floodKey, quietKey] = [drawApiKey(), drawApiKey(), drawApiKey()];
  const loadBefore = load();
  const startedAt = new Date().toISOString();
  let ledgerd: Awaited<ReturnType<typeof startServer>> | null = null;
  try {
    await writeBook(dir, operatorKey, 3, leveldbStoreDefault, [floodKey, quietKey]);
    if (backlogMax !== null) writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ ...JSON.parse(readFileSync(join(dir, 'ledgerd.json'), 'utf8')), backlogMax }));
    ledgerd = await startServer([...profile, join(repoRoot, 'bin/ledgerd'), 'serve', '--data-dir', dir, '--listen', '127.0.0.1:0', '--log-level', 'warn']);
    const url = ledgerd.url;
    const [quiet, op] = [client(url, quietKey), client(url, operatorKey)];
    const events = followDecisions(url, quietKey);
    try {
      // Transfers: quiet, then under A's flood of transfers from an address of its own.
      const transfersQuiet = await transfersOneAtATime(quiet, events.decidedAt, 'quiet');
      const transferFlood = startFlood({ url, token: floodKey, method: 'POST', path: '/v1/transfers', body: transferOf(floodIndex, 0), connections: floodConnections, durationMaxMs: floodDurationMaxMs, localAddress: '127.0.0.2' }, repoRoot);
      const transfers = await underFlood(transferFlood, () => transfersOneAtATime(quiet, events.decidedAt, 'loaded'));
      // A's flood leaves a backlog behind; reads are measured once it is decided, so they time reads alone.
      await sleep(2_000);

      // Reads: B's and the operator's side by side, quiet, then under A's flood of reads.
      const readsQuiet = await Promise.all([readsOneAtATime(quiet, movementsOf(quietIndex)), readsOneAtATime(op, movementsOf(quietIndex))]);
      const refusalsBefore = await readRefusals(op);
      const readFlood = startFlood({ url, token: floodKey, method: 'GET', path: movementsOf(floodIndex), connections: readConnections, durationMaxMs: floodDurationMaxMs, localAddress: '127.0.0.3' }, repoRoot);
      const reads = await underFlood(readFlood, () => Promise.all([readsOneAtATime(quiet, movementsOf(quietIndex)), readsOneAtATime(op, movementsOf(quietIndex))]));
      const refusalsAfter = await readRefusals(op);

      console.log(`fairness bench, ${startedAt}: ledgerd on LevelDB (daemon defaults${backlogMax === null ? '' : `, backlogMax ${backlogMax}`}), ${samples} samples per phase, ${cpus().length} cores, Node ${process.version}`);
      console.log(`load average (1, 5, 15 min) before ${loadBefore}, after ${load()} (a shared machine: other work moves these figures)`);
      console.log(`\ntransfers: B one at a time (one every ${transferGapMs} ms at most) while A floods with ${floodConnections} connections resending at once on refusal`);
      console.log('| B\'s transfers | acknowledged | sent to acknowledged p50 / p99 | sent to decided p50 / p99 |');
      console.log('|---|---|---|---|');
      for (const [name, t] of [['quiet', transfersQuiet], ['under the flood', transfers.measured]] as const) {
        console.log(`| ${name} | ${t.okMs.length} of ${samples} | ${p(t.okMs, 50)} / ${p(t.okMs, 99)} | ${p(t.decidedMs, 50)} / ${p(t.decidedMs, 99)} (${t.decidedMs.length} seen) |`);
      }
      console.log(`B's p99 under the flood: acknowledged ${times(transfers.measured.okMs, transfersQuiet.okMs)}, decided ${times(transfers.measured.decidedMs, transfersQuiet.decidedMs)} its quiet p99`);
      printFlood('A (transfers)', transfers.report);

      console.log(`\nreads: a page of movements, one after another, while A keeps ${readConnections} reads in flight`);
      console.log('| reader | quiet p50 / p99 | under the flood p50 / p99 | p99 under the flood / quiet | refused under the flood |');
      console.log('|---|---|---|---|---|');
      for (const [i, name] of ['B', 'operator'].entries()) {
        const [q, l] = [readsQuiet[i]!, reads.measured[i]!];
        console.log(`| ${name} | ${p(q.okMs, 50)} / ${p(q.okMs, 99)} | ${p(l.okMs, 50)} / ${p(l.okMs, 99)} | ${times(l.okMs, q.okMs)} | ${l.refused} |`);
      }
      printFlood('A (reads)', reads.report);
      const counted = [...refusalsAfter].map(([labels, n]) => `${labels}: ${n - (refusalsBefore.get(labels) ?? 0)}`).join('; ');
      console.log(`  the daemon's count of read refusals over the read flood (ledgerd_read_refusals_total): ${counted}`);
    } finally {
      events.close();
      await Promise.all([quiet.pool.close(), op.pool.close()]);
    }
  } finally {
    if (ledgerd !== null) await stopServer(ledgerd.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

function printFlood(who: string, r: FloodReport): void {
  const refused = r.statuses['503'] ?? 0;
  console.log(`${who} was answered ${JSON.stringify(r.statuses)}; ${refused - r.badRefusals} of ${refused} 503s were ERR-DecisionUnavailable with Retry-After; ${r.tooSoon} refused at the edge as too soon; ${r.failures} without a reply${r.failures > 0 ? ` (${r.failureSamples.join(', ')})` : ''}`);
  for (const [why, n] of Object.entries(r.refusals).sort((a, b) => b[1] - a[1])) console.log(`  ${n} × ${why}`);
}

await main();
