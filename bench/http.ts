/**
 * HTTP benchmark: acknowledged transfers through the real `ledgerd` (a child process
 * on loopback, fsync'd commits), driven by many concurrent keep-alive connections.
 * Prints acknowledgements per second, acknowledgement latency p50/p99 and
 * submit-to-decided p99 (the decision learned through GET /v1/events), and, in the
 * same run on the same machine, the same figures for a bare Fastify route that does
 * nothing: the ceiling. Nothing is asserted.
 *
 *   npm run build && node dist/bench/http.js [--profile-dir DIR] [--connections 64] [--seconds 10] [--accounts 1000]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { Pool, request } from 'undici';
import { drawApiKey } from '../daemon/book.js';
import { builtInPrincipals } from '../src/authority.js';
import { principalCredentialWrites } from '../src/credentials.js';
import { importGenesis } from '../src/genesis.js';
import { benchAccount, fundedCustomersGenesis } from './genesis.js';
import { LevelStore } from '../src/store/level.js';
import { percentile } from './percentile.js';

const { values: args } = parseArgs({
  options: {
    connections: { type: 'string', default: '64' },
    seconds: { type: 'string', default: '10' },
    'warmup-seconds': { type: 'string', default: '2' },
    accounts: { type: 'string', default: '1000' },
    'ceiling-server': { type: 'boolean', default: false },
    /** Write a V8 CPU profile of ledgerd here (node --cpu-prof), to see where its time goes. */
    'profile-dir': { type: 'string' },
  },
});
const connections = Number(args.connections);
const seconds = Number(args.seconds);
const warmupSeconds = Number(args['warmup-seconds']);
const accounts = Number(args.accounts);
const repoRoot = new URL('../../', import.meta.url).pathname;
/** How long to wait, after the load, for every acknowledged transfer's decision event. */
const decisionWaitMs = 60_000;

/** The ceiling: a bare Fastify route that does nothing, in its own process like ledgerd. */
async function ceilingServer(): Promise<void> {
  const app = Fastify({ logger: false });
  app.post('/v1/transfers', async (_request, reply) => {
    reply.code(202);
    return { ok: true };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  process.stdout.write(`ledgerd listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

async function writeBook(dir: string, operatorKey: string): Promise<void> {
  const genesis = fundedCustomersGenesis(accounts, 10n ** 15n);
  const store = await LevelStore.open(join(dir, 'book'));
  try {
    await importGenesis(store, genesis, Date.now(), principalCredentialWrites(builtInPrincipals, { operator: operatorKey, identities: drawApiKey() }, Date.now()));
  } finally {
    await store.close();
  }
}

/** Starts a server process and resolves with its base URL once it prints the readiness line. */
function startServer(args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^ledgerd listening on (http:\/\/\S+)$/.exec(line);
      if (m) resolve({ url: m[1]!, child });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

function stopServer(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

const refPrefix = 'data: {"operation_reference":"';

/** Decision times, by operation reference, from the operator's event stream. */
async function followDecisions(url: string, token: string): Promise<{ decidedAt: Map<string, number>; close: () => void }> {
  const decidedAt = new Map<string, number>();
  const res = await request(`${url}/v1/events`, { headers: { authorization: `Bearer ${token}` } });
  let buffer = '';
  res.body.on('data', (chunk: Buffer) => {
    const now = performance.now();
    buffer += chunk.toString('utf8');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      // The operation view starts with its reference: read it without parsing the event,
      // so the load generator takes as little of the shared CPU as it can.
      const at = block.indexOf(refPrefix);
      if (at !== -1) decidedAt.set(block.slice(at + refPrefix.length, block.indexOf('"', at + refPrefix.length)), now);
    }
  });
  res.body.on('error', () => {});
  return { decidedAt, close: () => res.body.destroy() };
}

interface Run {
  readonly acks: number;
  readonly refused: number;
  readonly elapsedS: number;
  readonly latenciesMs: number[];
  /** Submission time of each acknowledged operation (ledgerd only). */
  readonly submittedAt: Map<string, number>;
}

/** `connections` keep-alive connections, each posting one transfer after another. */
async function drive(url: string, token: string): Promise<Run> {
  const pool = new Pool(url, { connections, pipelining: 1 });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const startMs = performance.now();
  const measureFromMs = startMs + warmupSeconds * 1000;
  const endMs = measureFromMs + seconds * 1000;
  let acks = 0;
  let refused = 0;
  let counter = 0;
  const latenciesMs: number[] = [];
  const submittedAt = new Map<string, number>();
  const worker = async () => {
    while (performance.now() < endMs) {
      const n = ++counter;
      const from = n % accounts;
      const to = (from + 1 + (n % (accounts - 1))) % accounts;
      const body = JSON.stringify({ legs: [{ amount: '1', asset: 'USD', from: benchAccount(from), to: benchAccount(to) }], reference: n });
      const t0 = performance.now();
      const res = await pool.request({ method: 'POST', path: '/v1/transfers', headers, body });
      const text = await res.body.text();
      const t1 = performance.now();
      if (t0 < measureFromMs) continue;
      if (res.statusCode !== 202 && res.statusCode !== 200) {
        refused++;
        continue;
      }
      acks++;
      latenciesMs.push(t1 - t0);
      const ref = (JSON.parse(text) as { operation_reference?: string }).operation_reference;
      if (ref) submittedAt.set(ref, t0);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  await pool.close();
  return { acks, refused, elapsedS: seconds, latenciesMs, submittedAt };
}


async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-http-'));
  const operatorKey = drawApiKey();
  await writeBook(dir, operatorKey);
  const profile = args['profile-dir'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', args['profile-dir']];
  const ledgerd = await startServer([...profile, join(repoRoot, 'bin/ledgerd'), 'serve', '--data-dir', dir, '--listen', '127.0.0.1:0', '--log-level', 'warn']);
  const events = await followDecisions(ledgerd.url, operatorKey);
  const run = await drive(ledgerd.url, operatorKey);
  const waitUntil = performance.now() + decisionWaitMs;
  while ([...run.submittedAt.keys()].some((ref) => !events.decidedAt.has(ref)) && performance.now() < waitUntil) await new Promise((r) => setTimeout(r, 100));
  const decidedMs = [...run.submittedAt].flatMap(([ref, t]) => (events.decidedAt.has(ref) ? [events.decidedAt.get(ref)! - t] : [])).sort((a, b) => a - b);
  events.close();
  await stopServer(ledgerd.child);
  rmSync(dir, { recursive: true, force: true });

  const bare = await startServer([new URL(import.meta.url).pathname, '--ceiling-server']);
  const ceiling = await drive(bare.url, operatorKey);
  await stopServer(bare.child);

  const rows = [
    { name: 'ledgerd POST /v1/transfers', run, decidedMs },
    { name: 'bare Fastify route (ceiling)', run: ceiling, decidedMs: null },
  ];
  const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
  console.log(`HTTP bench: ${connections} connections, ${seconds} s measured after ${warmupSeconds} s warm-up, ${accounts} accounts, ${cpus().length} cores, Node ${process.version}`);
  console.log('| target | acks/s | ack p50 | ack p99 | submit-to-decided p99 | refused |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    const sorted = [...r.run.latenciesMs].sort((a, b) => a - b);
    const decided = r.decidedMs === null ? 'n/a' : `${fmt(percentile(r.decidedMs, 99))} (${r.decidedMs.length} of ${r.run.submittedAt.size} seen)`;
    console.log(`| ${r.name} | ${Math.round(r.run.acks / r.run.elapsedS)} | ${fmt(percentile(sorted, 50))} | ${fmt(percentile(sorted, 99))} | ${decided} | ${r.run.refused} |`);
  }
  console.log(`ledgerd reaches ${((100 * run.acks) / Math.max(1, ceiling.acks)).toFixed(0)}% of the ceiling's throughput.`);
}

if (args['ceiling-server']) await ceilingServer();
else await main();
