/**
 * A book of 10^7 postings against a small one (issue 10): query latency and ledgerd's
 * memory as the book grows. Builds (once, into `--dir`, reused after) a book of
 * `--postings` journal entries (bench/large-book-build.ts: a few hot accounts, many
 * cold ones, three assets), proves it valid (opened by the Kernel, trial balance zero,
 * `verifyTotals`), and a small book of `--small-postings` of the same shape in a temp
 * dir. Then, on each, a real `ledgerd serve` (log level warn, checkpoints only on
 * request: the synthetic book has none, and its first would hash every leaf), and
 * through HTTP as the operator:
 * - p50/p99 of statements (the whole history; the last 8 rounds) and movements pages
 *   of 25 (the first; a deep one, at half the journal, by cursor) on a hot and a
 *   cold account, each asked `--samples` times of either book in turn (both under the
 *   same load of the machine);
 * - ledgerd's VmRSS / VmHWM (and the anonymous and file-backed parts) from
 *   /proc/<pid>/status: at rest after opening, during `--load-seconds` of those
 *   queries, every other one a page of any customer, from 8 connections, and during
 *   as long a load of transfers from 32.
 * Prints both books side by side with the ratio, beside the configured cache; nothing is asserted.
 *
 *   npm run bench:large-book -- [--postings 10000000] [--small-postings 10000] [--dir /tmp/ledger-large-book-10000000] [--samples 200] [--load-seconds 10] [--cache-entries N] [--open-files-max N]
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { cacheEntriesDefault, levelOpenFilesMax } from '../src/constants.js';
import { type LargeBookManifest, buildLargeBook, defaultShape, proveBook, readManifest } from './large-book-build.js';
import { benchAccount } from './genesis.js';
import { closedLoop, drive, startServer, stopServer } from './http-load.js';
import { percentile } from './percentile.js';

const { values: args } = parseArgs({
  options: {
    postings: { type: 'string', default: '10000000' },
    'small-postings': { type: 'string', default: '10000' },
    dir: { type: 'string' },
    samples: { type: 'string', default: '200' },
    'load-seconds': { type: 'string', default: '10' },
    'cache-entries': { type: 'string', default: String(cacheEntriesDefault) },
    'open-files-max': { type: 'string', default: String(levelOpenFilesMax) },
  },
});
const postings = Number(args.postings);
const samples = Number(args.samples);
const loadSeconds = Number(args['load-seconds']);
const cacheEntries = Number(args['cache-entries']);
/** The store's `openFilesMax`: LevelDB's table files open, and mapped, at once. */
const openFilesMax = Number(args['open-files-max']);
const repoRoot = new URL('../../', import.meta.url).pathname;
/** The recent period a statement asks for, in rounds: about the same movements in either book. */
const recentRounds = 8;
const pageLimit = 25;

const seconds = (fromMs: number) => ((performance.now() - fromMs) / 1000).toFixed(1);

/** The book in `dir`, built unless a finished one is there; proven valid either way. */
async function book(dir: string, size: number): Promise<LargeBookManifest> {
  let manifest = await readManifest(dir);
  if (manifest === null) {
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    const started = performance.now();
    let reported = 0;
    manifest = await buildLargeBook(dir, defaultShape(size), Date.now(), (n) => {
      if (n - reported >= 1_000_000) {
        reported = n;
        console.log(`  ${n} postings written (${seconds(started)} s)`);
      }
    });
    console.log(`built a book of ${manifest.postingSeq} postings (${manifest.transfers} synthetic transfers, ${manifest.shape.customers} customers) in ${seconds(started)} s: ${dir}`);
  }
  const proving = performance.now();
  const proof = await proveBook(dir);
  console.log(`proved it: opened by the Kernel at view ${proof.postingSeq}, ${proof.accounts} accounts, trial balance ${proof.unbalanced === 0 ? 'zero' : `UNBALANCED in ${proof.unbalanced} assets`}, verifyTotals ${proof.totalsOk ? 'ok' : 'FAILED'} (${seconds(proving)} s)`);
  if (proof.unbalanced !== 0 || !proof.totalsOk || proof.postingSeq < manifest.postingSeq) throw new Error(`the book in ${dir} is not valid`);
  return manifest;
}

interface Memory {
  rssKiB: number;
  hwmKiB: number;
  anonKiB: number;
  fileKiB: number;
}

function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM'), anonKiB: field('RssAnon'), fileKiB: field('RssFile') };
}

/** The largest VmRSS (and its parts then) seen while `work` runs, sampled every 200 ms, and VmHWM after. */
async function peakMemory<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; peak: Memory }> {
  let peak = memoryOf(pid);
  const timer = setInterval(() => {
    const now = memoryOf(pid);
    if (now.rssKiB > peak.rssKiB) peak = now;
  }, 200);
  try {
    const result = await work();
    return { result, peak: { ...peak, hwmKiB: memoryOf(pid).hwmKiB } };
  } finally {
    clearInterval(timer);
  }
}

interface Query {
  readonly name: string;
  readonly path: string;
}

/** The queries measured, on the book's first hot account and its last cold one, in USD. */
async function queries(pool: Pool, headers: Record<string, string>, m: LargeBookManifest): Promise<Query[]> {
  const out: Query[] = [];
  const recentFromMs = m.lastRoundAtMs - (recentRounds - 1) * m.shape.roundMs;
  for (const [kind, account] of [['hot', m.hot[0]!], ['cold', m.cold[0]!]] as const) {
    const a = encodeURIComponent(account);
    out.push({ name: `${kind}: statement, whole history`, path: `/v1/statements?account=${a}&asset=USD&from=0&to=${m.lastRoundAtMs + 1}` });
    out.push({ name: `${kind}: statement, last ${recentRounds} rounds`, path: `/v1/statements?account=${a}&asset=USD&from=${recentFromMs}&to=${m.lastRoundAtMs + 1}` });
    const first = `/v1/movements?account=${a}&asset=USD&limit=${pageLimit}`;
    out.push({ name: `${kind}: movements, first page`, path: first });
    // A cursor is the next journal position and the filters' fingerprint: the first page's, moved deep.
    const res = await pool.request({ method: 'GET', path: first, headers });
    const next = ((await res.body.json()) as { next?: string | null }).next;
    if (typeof next === 'string') {
      const deepSeq = Math.floor(m.postingSeq * 0.5).toString(16).padStart(16, '0');
      out.push({ name: `${kind}: movements, page at 50% by cursor`, path: `${first}&cursor=${deepSeq}${next.slice(16)}` });
    }
  }
  return out;
}

interface Latency {
  p50: number;
  p99: number;
  /** What the query answered (status, and the movements it carried). */
  answer: string;
}

const answerOf = (status: number, text: string) => (status === 200 ? `${(JSON.parse(text) as { movements: unknown[] }).movements.length} movements` : `${status} ${(JSON.parse(text) as { error: string }).error}`);

/** A ledgerd serving one of the books, and the queries measured on it. */
interface Served {
  readonly label: string;
  readonly manifest: LargeBookManifest;
  readonly url: string;
  readonly child: ChildProcess;
  readonly readyMs: number;
  readonly pool: Pool;
  readonly headers: Record<string, string>;
  queries: Query[];
}

async function serve(label: string, dir: string, manifest: LargeBookManifest): Promise<Served> {
  // Checkpoints only on request: the synthetic book has none, and its first would hash every leaf (see docs/performance.md).
  writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ cacheEntries, store: { kind: 'leveldb', openFilesMax }, settlement: { checkpointIntervalMs: 0 } }));
  const opened = performance.now();
  const { url, child } = await startServer([join(repoRoot, 'bin/ledgerd'), 'serve', '--data-dir', dir, '--listen', '127.0.0.1:0', '--log-level', 'warn']);
  const served: Served = { label, manifest, url, child, readyMs: performance.now() - opened, pool: new Pool(url, { connections: 8 }), headers: { authorization: `Bearer ${manifest.operatorKey}` }, queries: [] };
  served.queries = await queries(served.pool, served.headers, manifest);
  return served;
}

async function timed(s: Served, path: string): Promise<{ ms: number; status: number; text: string }> {
  const t0 = performance.now();
  const res = await s.pool.request({ method: 'GET', path, headers: s.headers });
  const text = await res.body.text();
  return { ms: performance.now() - t0, status: res.statusCode, text };
}

/** Each query asked of both books in turn, one after the other (so both see the same load on the machine): p50/p99 per book. */
async function latencies(books: readonly Served[]): Promise<Map<string, Latency>[]> {
  const out = books.map(() => new Map<string, Latency>());
  for (const q of books[0]!.queries) {
    const paths = books.map((b) => b.queries.find((x) => x.name === q.name)?.path);
    if (paths.some((p) => p === undefined)) continue;
    const ms: number[][] = books.map(() => []);
    const answers: string[] = [];
    for (let i = 0; i < samples + 10; i++) {
      for (const [b, served] of books.entries()) {
        const r = await timed(served, paths[b]!);
        if (i === 0) answers[b] = answerOf(r.status, r.text);
        if (i >= 10) ms[b]!.push(r.ms);
      }
    }
    for (const [b, list] of ms.entries()) {
      list.sort((x, y) => x - y);
      out[b]!.set(q.name, { p50: percentile(list, 50), p99: percentile(list, 99), answer: answers[b]! });
    }
  }
  return out;
}

interface BookFigures {
  readonly label: string;
  readonly readyMs: number;
  readonly latencies: Map<string, Latency>;
  readonly rest: Memory;
  readonly queryLoad: Memory;
  readonly queriesPerS: number;
  readonly transferLoad: Memory;
  readonly acksPerS: number;
}

/** Ledgerd's memory under a sustained load of the measured queries, then of transfers. */
async function underLoad(s: Served): Promise<Pick<BookFigures, 'queryLoad' | 'queriesPerS' | 'transferLoad' | 'acksPerS'>> {
  const pid = s.child.pid!;
  const queried = await peakMemory(pid, () =>
    closedLoop({ connections: 8, seconds: loadSeconds, warmupSeconds: 1, accounts: 2, ratePerSec: null }, async (n) => {
      // Every other query is the first page of any customer: what a load spread over the book touches.
      const path = n % 2 === 0 ? s.queries[(n / 2) % s.queries.length]!.path : `/v1/movements?account=${encodeURIComponent(benchAccount(Math.floor(Math.random() * s.manifest.shape.customers)))}&asset=USD&limit=${pageLimit}`;
      const r = await timed(s, path);
      return { ok: r.status === 200 };
    }),
  );
  const transferred = await peakMemory(pid, () => drive(s.url, s.manifest.operatorKey, { connections: 32, seconds: loadSeconds, warmupSeconds: 1, accounts: Math.min(1000, s.manifest.shape.customers), ratePerSec: null }));
  if (transferred.result.refused > 0) console.log(`  ${s.label}: ${transferred.result.refused} transfers refused`);
  return { queryLoad: queried.peak, queriesPerS: queried.result.acks / loadSeconds, transferLoad: transferred.peak, acksPerS: transferred.result.acks / loadSeconds };
}

async function measure(books: readonly Served[]): Promise<BookFigures[]> {
  await new Promise((r) => setTimeout(r, 3000));
  const rest = books.map((b) => memoryOf(b.child.pid!));
  const lat = await latencies(books);
  const figures: BookFigures[] = [];
  for (const [i, b] of books.entries()) figures.push({ label: b.label, readyMs: b.readyMs, latencies: lat[i]!, rest: rest[i]!, ...(await underLoad(b)) });
  return figures;
}

const mib = (kib: number) => (kib / 1024).toFixed(0);
const showMemory = (m: Memory) => `${mib(m.rssKiB)} / ${mib(m.hwmKiB)} (anon ${mib(m.anonKiB)}, file ${mib(m.fileKiB)})`;

function report(small: BookFigures, large: BookFigures): void {
  console.log(`\nload average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; cacheEntries ${cacheEntries}; store.openFilesMax ${openFilesMax}; ${samples} samples per query, asked of the two books in turn`);
  console.log(`| query | ${small.label} p50 / p99 ms | ${large.label} p50 / p99 ms | ratio of p50s | answered (small; large) |`);
  console.log('|---|---:|---:|---:|---|');
  for (const [name, s] of small.latencies) {
    const l = large.latencies.get(name);
    if (l === undefined) continue;
    console.log(`| ${name} | ${s.p50.toFixed(2)} / ${s.p99.toFixed(2)} | ${l.p50.toFixed(2)} / ${l.p99.toFixed(2)} | ${(l.p50 / s.p50).toFixed(2)} | ${s.answer}; ${l.answer} |`);
  }
  console.log(`\n| ledgerd memory, MiB: VmRSS / VmHWM (RssAnon, RssFile) | ${small.label} | ${large.label} |`);
  console.log('|---|---|---|');
  console.log(`| restart to listening | ${small.readyMs.toFixed(0)} ms | ${large.readyMs.toFixed(0)} ms |`);
  console.log(`| at rest after opening | ${showMemory(small.rest)} | ${showMemory(large.rest)} |`);
  console.log(`| queries, half of them on any customer, 8 connections (queries/s) | ${showMemory(small.queryLoad)} (${small.queriesPerS.toFixed(0)}/s) | ${showMemory(large.queryLoad)} (${large.queriesPerS.toFixed(0)}/s) |`);
  console.log(`| transfers, 32 connections (acks/s) | ${showMemory(small.transferLoad)} (${small.acksPerS.toFixed(0)}/s) | ${showMemory(large.transferLoad)} (${large.acksPerS.toFixed(0)}/s) |`);
}

async function main() {
  const largeDir = args.dir ?? join(tmpdir(), `ledger-large-book-${postings}`);
  const smallDir = mkdtempSync(join(tmpdir(), 'ledger-small-book-'));
  try {
    const large = await book(largeDir, postings);
    const small = await book(join(smallDir, 'data'), Number(args['small-postings']));
    const books = [await serve(`${small.postingSeq} postings`, join(smallDir, 'data'), small), await serve(`${large.postingSeq} postings`, largeDir, large)];
    try {
      const [smallFigures, largeFigures] = await measure(books);
      report(smallFigures!, largeFigures!);
    } finally {
      for (const b of books) {
        await b.pool.close();
        await stopServer(b.child);
      }
    }
  } finally {
    rmSync(smallDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
