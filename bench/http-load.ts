/**
 * The HTTP benches' load and their ledgerd: a closed loop of concurrent clients, each
 * submitting one 1-leg transfer after another among `accounts` funded accounts; the
 * real `ledgerd` as a child process on a fresh book; its decisions timed from the
 * operator's event stream. Shared by bench/http.ts and bench/versus-postgres.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool, request } from 'undici';
import { writeFileSync } from 'node:fs';
import { bookIdentity, drawApiKey, placeOf } from '../daemon/book.js';
import { leveldbStoreDefault, type StoreConfig } from '../daemon/config.js';
import { builtInPrincipals } from '../src/auth/authority.js';
import { credentialWrites, principalCredentialWrites } from '../src/auth/credentials.js';
import type { CredentialId, IdentityId } from '../src/model/values.js';
import { importGenesis } from '../src/book/genesis.js';
import { benchAccount, fundedCustomersGenesis } from './genesis.js';
import { LevelStore } from '../src/store/level.js';
import { levelLogBytes } from './ceilings.js';
import { type Pinning, processCpuMs, processSleeps, treeCpuMs, unpinned } from './pinning.js';

export interface LoadOptions {
  readonly connections: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly accounts: number;
  /** Transfers offered per second on a fixed schedule (an open loop), or null: each client submits again as soon as answered. */
  readonly ratePerSec: number | null;
  /** Transfers per request through POST /v1/batches, or null (or absent): one POST /v1/transfers each. */
  readonly batchSize?: number | null;
}

/** The load's command-line flags, for `parseArgs`: defaults that finish in about a minute. */
export const loadFlags = {
  connections: { type: 'string', default: '64' },
  seconds: { type: 'string', default: '10' },
  'warmup-seconds': { type: 'string', default: '2' },
  accounts: { type: 'string', default: '1000' },
  /** Paced load: what latency is below saturation, where a closed loop only shows queueing (p50 = connections / throughput). */
  rate: { type: 'string' },
  /** Transfers per POST /v1/batches (1-1000); ledgerd rows run single requests and then batches of this size. */
  batch: { type: 'string' },
} as const;

/** The load, from the values `parseArgs` read for `loadFlags`. */
export function loadOptions(values: { connections: string; seconds: string; 'warmup-seconds': string; accounts: string; rate?: string; batch?: string }): LoadOptions {
  const counts = { connections: Number(values.connections), seconds: Number(values.seconds), warmupSeconds: Number(values['warmup-seconds']), accounts: Number(values.accounts) };
  for (const [name, value] of Object.entries(counts)) {
    if (!Number.isSafeInteger(value) || value < (name === 'warmupSeconds' ? 0 : name === 'accounts' ? 2 : 1)) throw new Error(`bad ${name}: ${value}`);
  }
  const ratePerSec = values.rate === undefined ? null : Number(values.rate);
  if (ratePerSec !== null && !(Number.isSafeInteger(ratePerSec) && ratePerSec >= 1)) throw new Error(`bad rate: ${values.rate}`);
  const batchSize = values.batch === undefined ? null : Number(values.batch);
  if (batchSize !== null && !(Number.isSafeInteger(batchSize) && batchSize >= 1 && batchSize <= 1000)) throw new Error(`bad batch: ${values.batch}`);
  return { ...counts, ratePerSec, batchSize };
}

/**
 * The daemon of the build this bench belongs to (not bin/ledgerd, which runs `dist/`): a bench
 * kept aside (`cp -r dist .old-dist`) runs the daemon it was built with, old against new.
 */
const ledgerdMain = new URL('../daemon/main.js', import.meta.url).pathname;
/** How long to wait, after the load, for every acknowledged transfer's decision event. */
const decisionWaitMs = 60_000;
/** Each customer account's opening balance: no transfer of the bench is ever short of funds. */
export const benchFundingMinor = 10n ** 15n;

/**
 * The bench's book in `dir` (on LevelDB), or in the database `store` names (its config written into `dir`);
 * `customerKeys[i]`, where given, is an API key of customer `did:ledger:id:b<i>`, to send as that principal.
 */
export async function writeBook(dir: string, operatorKey: string, accounts: number, store: StoreConfig, customerKeys: readonly string[] = []): Promise<void> {
  const genesis = fundedCustomersGenesis(accounts, benchFundingMinor);
  const nowMs = Date.now();
  const extras = [
    ...principalCredentialWrites(builtInPrincipals, { operator: operatorKey, identities: drawApiKey() }, nowMs),
    ...customerKeys.flatMap((key, i) =>
      credentialWrites({ id: `did:ledger:cred:b${i}` as CredentialId, identity: `did:ledger:id:b${i}` as IdentityId, scheme: 'api-key', verifier: null, scope: null, createdAtMs: nowMs, webauthnId: null, counter: 0 }, key),
    ),
  ];
  if (store.kind === 'postgres') {
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ store }));
    const building = await placeOf(dir, store).build('init');
    await importGenesis(building.store, genesis, Date.now(), extras);
    await building.place(await bookIdentity(dir));
    return;
  }
  // Written even when it says the defaults: what the run used is on record in its data dir.
  writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ store }));
  const level = await LevelStore.open(join(dir, 'book'));
  try {
    await importGenesis(level, genesis, Date.now(), extras);
  } finally {
    await level.close();
  }
}

/**
 * Starts a server process and resolves with its base URL once it prints its readiness
 * line (`<name> listening on <url>`, as ledgerd does).
 */
export function startServer(args: string[], env: NodeJS.ProcessEnv = process.env, pinning: Pinning = unpinned): Promise<{ url: string; child: ChildProcess }> {
  // taskset execs node in place: the child's pid is the server's.
  const [command, ...prefix] = [...pinning.serverArgvPrefix, process.execPath];
  const child = spawn(command!, [...prefix, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^\S+ listening on (http:\/\/\S+)$/.exec(line);
      if (m) resolve({ url: m[1]!, child });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

/**
 * A server's CPU time (ms) over the measured window (from the end of the warm-up), read
 * with `read` (e.g. `treeCpuMs(pid)`); `stop()` when the load ends.
 */
export function measureCpu(options: LoadOptions, read: () => number): { stop: () => number } {
  let atStartMs: number | null = null;
  const measuring = setTimeout(() => {
    atStartMs = read();
  }, options.warmupSeconds * 1000);
  return {
    stop: () => {
      clearTimeout(measuring);
      return read() - (atStartMs ?? read());
    },
  };
}

/**
 * ledgerd's count of store writes (each one atomic batch, fsync'd on LevelDB), from its
 * metrics; NaN when they cannot be read.
 */
async function storeWritesOf(url: string, token: string): Promise<number> {
  try {
    const res = await request(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    const count = /^ledgerd_store_write_seconds_count (\d+)$/m.exec(await res.body.text());
    return count === null ? Number.NaN : Number(count[1]);
  } catch {
    return Number.NaN;
  }
}

/** Like `measureCpu`, for a count read asynchronously (over HTTP). */
function measureAsync(options: LoadOptions, read: () => Promise<number>): { stop: () => Promise<number> } {
  let atStart: Promise<number> | null = null;
  const measuring = setTimeout(() => {
    atStart = read();
  }, options.warmupSeconds * 1000);
  return {
    stop: async () => {
      clearTimeout(measuring);
      const end = await read();
      return end - (await (atStart ?? read()));
    },
  };
}

export function stopServer(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

const refPrefix = 'data: {"operation_reference":"';
/** How long to wait before following the stream again after it was cut. */
const streamRetryMs = 100;

/**
 * Decision times, by operation reference, from the operator's event stream. A stream the
 * server cuts (a slow reader at batch rates) is followed again from the last event seen
 * (`Last-Event-ID`), so no decision goes unseen.
 */
export function followDecisions(url: string, token: string): { decidedAt: Map<string, number>; close: () => void } {
  const decidedAt = new Map<string, number>();
  let lastId: string | null = null;
  let closed = false;
  let current: { destroy: () => void } | null = null;
  const follow = async (): Promise<void> => {
    while (!closed) {
      try {
        const res = await request(`${url}/v1/events`, { headers: { authorization: `Bearer ${token}`, ...(lastId === null ? {} : { 'last-event-id': lastId }) } });
        current = res.body;
        let buffer = '';
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          const now = performance.now();
          buffer += chunk.toString('utf8');
          let end: number;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            // Read the reference and id without parsing the event, so the load generator
            // takes as little CPU as it can.
            if (block.startsWith('id: ')) lastId = block.slice(4, block.indexOf('\n'));
            const at = block.indexOf(refPrefix);
            if (at !== -1) decidedAt.set(block.slice(at + refPrefix.length, block.indexOf('"', at + refPrefix.length)), now);
          }
        }
      } catch {
        // cut or refused: follow again below
      }
      if (!closed) await sleep(streamRetryMs);
    }
  };
  void follow();
  return {
    decidedAt,
    close: () => {
      closed = true;
      current?.destroy();
    },
  };
}

export interface Run {
  readonly acks: number;
  /** Acknowledged over the whole run, warm-up included. */
  readonly allAcks: number;
  readonly refused: number;
  readonly elapsedS: number;
  readonly latenciesMs: number[];
  /** Submission time of each acknowledged operation (ledgerd only). */
  readonly submittedAt: Map<string, number>;
}

/** The accounts (indexes) of the bench's `n`th transfer: spread over every ordered pair. */
export function transferPair(n: number, accounts: number): { from: number; to: number } {
  const from = n % accounts;
  return { from, to: (from + 1 + (n % (accounts - 1))) % accounts };
}

/**
 * What one submission gave: refused, or accepted (with ledgerd's operation reference, or a
 * batch's acknowledged ones and how many of its items were accepted).
 */
export type Outcome = { readonly ok: false } | { readonly ok: true; readonly reference?: string; readonly references?: readonly string[]; readonly accepted?: number };

/**
 * `connections` clients, each submitting transfer after transfer (`submit(n)`) for the
 * warm-up and then the measured seconds; only the measured window counts. With a rate,
 * the transfers are due on a fixed schedule instead (an open loop bounded by the clients).
 */
export async function closedLoop(options: LoadOptions, submit: (n: number) => Promise<Outcome>): Promise<Run> {
  const startMs = performance.now();
  const measureFromMs = startMs + options.warmupSeconds * 1000;
  const endMs = measureFromMs + options.seconds * 1000;
  let acks = 0;
  let allAcks = 0;
  let refused = 0;
  let counter = 0;
  const latenciesMs: number[] = [];
  const submittedAt = new Map<string, number>();
  // Paced: the nth transfer is due at startMs + n / rate. A client free before then waits
  // and is timed from when it sends (a timer's lateness is the generator's, not the
  // server's); one late because every client was busy is timed from when it was due, so
  // queueing is counted.
  const rate = options.ratePerSec;
  const worker = async () => {
    while (performance.now() < endMs) {
      const n = ++counter;
      const dueMs = rate === null ? performance.now() : startMs + (n * 1000) / rate;
      if (dueMs >= endMs) break;
      const waitMs = dueMs - performance.now();
      if (waitMs > 0) await sleep(waitMs);
      const t0 = waitMs > 0 ? performance.now() : dueMs;
      const outcome = await submit(n);
      const t1 = performance.now();
      if (outcome.ok) allAcks += outcome.accepted ?? 1;
      if (t0 < measureFromMs) continue;
      if (!outcome.ok) {
        refused++;
        continue;
      }
      acks += outcome.accepted ?? 1;
      latenciesMs.push(t1 - t0);
      for (const reference of outcome.references ?? (outcome.reference ? [outcome.reference] : [])) submittedAt.set(reference, t0);
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  return { acks, allAcks, refused, elapsedS: options.seconds, latenciesMs, submittedAt };
}

/** The closed loop over HTTP: keep-alive connections, each posting one transfer after another. */
export async function drive(url: string, token: string, options: LoadOptions): Promise<Run> {
  const pool = new Pool(url, { connections: options.connections, pipelining: 1 });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  try {
    const transferBody = (n: number) => {
      const { from, to } = transferPair(n, options.accounts);
      return { legs: [{ amount: '1', asset: 'USD', from: benchAccount(from), to: benchAccount(to) }], reference: n };
    };
    const size = options.batchSize ?? null;
    return await closedLoop(options, async (n) => {
      if (size !== null) {
        const commands = Array.from({ length: size }, (_, i) => ({ command: 'transfer', body: transferBody(n * size + i) }));
        const res = await pool.request({ method: 'POST', path: '/v1/batches', headers, body: JSON.stringify({ commands }) });
        const text = await res.body.text();
        if (res.statusCode < 200 || res.statusCode > 299) return { ok: false };
        // An item refused at submission carries `error`; the others were taken (ledgerd's with their reference).
        const items = (JSON.parse(text) as { items: { operation_reference?: string; error?: string }[] }).items;
        const taken = items.filter((item) => item.error === undefined);
        return { ok: true, accepted: taken.length, references: taken.flatMap((item) => (item.operation_reference === undefined ? [] : [item.operation_reference])) };
      }
      const res = await pool.request({ method: 'POST', path: '/v1/transfers', headers, body: JSON.stringify(transferBody(n)) });
      const text = await res.body.text();
      if (res.statusCode < 200 || res.statusCode > 299) return { ok: false };
      return { ok: true, reference: (JSON.parse(text) as { operation_reference?: string }).operation_reference };
    });
  } finally {
    await pool.close();
  }
}

/** What LevelDB's log says it wrote: memtables flushed to level-0 tables, and tables rewritten by compactions (MiB). */
export interface LevelWrites {
  readonly flushedMiB: number;
  readonly compactedMiB: number;
}

/** LevelDB's own account of its writes (its LOG in the book's directory), in MiB. */
function levelWrites(bookDir: string): LevelWrites {
  const log = levelLogBytes(bookDir);
  return { flushedMiB: log.flushed / 2 ** 20, compactedMiB: log.compacted / 2 ** 20 };
}

/**
 * The real ledgerd on a fresh book of `accounts` funded customers (durable fsync'd
 * commits, log level warn; on LevelDB, or on the PostgreSQL database `store` names), driven by `drive` as the operator; then, for every
 * acknowledged transfer, submit-to-decided (sorted ms) from its event on the stream.
 */
export async function runLedgerd(
  options: LoadOptions,
  nodeArgs: string[] = [],
  store: StoreConfig = leveldbStoreDefault,
  pinning: Pinning = unpinned,
): Promise<{
  run: Run;
  decidedMs: number[];
  decidedPerSec: number;
  operatorKey: string;
  cpuUsPerAck: number;
  mainThreadCpuUsPerAck: number;
  /** Store writes (atomic batches, fsync'd) and sleeps of ledgerd's threads (voluntary context switches), per acknowledged transfer. */
  storeWritesPerAck: number;
  sleepsPerAck: number;
  levelWrites: LevelWrites | null;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-http-'));
  try {
    const operatorKey = drawApiKey();
    await writeBook(dir, operatorKey, options.accounts, store);
    const ledgerd = await startServer([...nodeArgs, ledgerdMain, 'serve', '--data-dir', dir, '--listen', '127.0.0.1:0', '--log-level', 'warn'], process.env, pinning);
    const events = followDecisions(ledgerd.url, operatorKey);
    const pid = ledgerd.child.pid!;
    const cpu = measureCpu(options, () => treeCpuMs(pid));
    const mainCpu = measureCpu(options, () => processCpuMs(pid, { mainThreadOnly: true }));
    const sleeps = measureCpu(options, () => processSleeps(pid));
    const storeWrites = measureAsync(options, () => storeWritesOf(ledgerd.url, operatorKey));
    const run = await drive(ledgerd.url, operatorKey, options);
    const cpuMs = cpu.stop();
    const mainCpuMs = mainCpu.stop();
    const sleepCount = sleeps.stop();
    const writeCount = await storeWrites.stop();
    const waitUntil = performance.now() + decisionWaitMs;
    while ([...run.submittedAt.keys()].some((ref) => !events.decidedAt.has(ref)) && performance.now() < waitUntil) await new Promise((r) => setTimeout(r, 100));
    const decidedMs = [...run.submittedAt].flatMap(([ref, t]) => (events.decidedAt.has(ref) ? [events.decidedAt.get(ref)! - t] : [])).sort((a, b) => a - b);
    // Decided per second: the measured window's transfers over the span from the first's submission to the last's decision.
    const submitted = [...run.submittedAt.values()];
    const decidedTimes = [...run.submittedAt.keys()].flatMap((ref) => (events.decidedAt.has(ref) ? [events.decidedAt.get(ref)!] : []));
    const spanMs = decidedTimes.length === 0 ? 0 : decidedTimes.reduce((a, b) => Math.max(a, b)) - submitted.reduce((a, b) => Math.min(a, b));
    const decidedPerSec = spanMs > 0 ? (decidedTimes.length * 1000) / spanMs : 0;
    events.close();
    await stopServer(ledgerd.child);
    return {
      run,
      decidedMs,
      decidedPerSec,
      operatorKey,
      cpuUsPerAck: (cpuMs * 1000) / Math.max(1, run.acks),
      mainThreadCpuUsPerAck: (mainCpuMs * 1000) / Math.max(1, run.acks),
      storeWritesPerAck: writeCount / Math.max(1, run.acks),
      sleepsPerAck: sleepCount / Math.max(1, run.acks),
      levelWrites: store.kind === 'leveldb' ? levelWrites(join(dir, 'book')) : null,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
