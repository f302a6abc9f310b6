/**
 * HTTP benchmark: acknowledged transfers through the real `ledgerd` (a child process
 * on loopback, fsync'd commits), driven by many concurrent keep-alive connections, with
 * the book on LevelDB and on PostgreSQL (a private durable cluster), side by side.
 * Prints acknowledgements per second, acknowledgement latency p50/p99 and
 * submit-to-decided p99 (the decision learned through GET /v1/events), and, in the
 * same run on the same machine, the same figures for a bare Fastify route that does
 * nothing: the ceiling. Nothing is asserted.
 *
 *   npm run build && node dist/bench/http.js [--stores leveldb,postgres] [--profile-dir DIR] [--connections 64] [--seconds 10] [--accounts 1000]
 */
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { leveldbStoreDefault } from '../daemon/config.js';
import { measureSyncLatency } from './fsync.js';
import { percentile } from './percentile.js';
import { drive, loadFlags, loadOptions, runLedgerd, startServer, stopServer } from './http-load.js';
import { BenchStores, parseStores } from './stores.js';

const { values: args } = parseArgs({
  options: {
    ...loadFlags,
    'ceiling-server': { type: 'boolean', default: false },
    /** Write a V8 CPU profile of ledgerd here (node --cpu-prof), to see where its time goes. */
    'profile-dir': { type: 'string' },
    stores: { type: 'string', default: 'leveldb,postgres' },
  },
});
const options = loadOptions(args);
const { connections, seconds, warmupSeconds, accounts } = options;

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

async function main(): Promise<void> {
  const profile = args['profile-dir'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', args['profile-dir']];
  const stores = new BenchStores();
  const rows = [];
  let operatorKey = '';
  for (const kind of parseStores(args.stores)) {
    const store = kind === 'leveldb' ? leveldbStoreDefault : ({ kind, ...(await stores.database()), leaseMs: stores.leaseMs } as const);
    const ledgerd = await runLedgerd(options, profile, store);
    operatorKey = ledgerd.operatorKey;
    rows.push({ name: `ledgerd POST /v1/transfers, ${kind}`, run: ledgerd.run, decidedMs: ledgerd.decidedMs as number[] | null, cpuUsPerAck: ledgerd.cpuUsPerAck as number | null, mainUsPerAck: ledgerd.mainThreadCpuUsPerAck as number | null });
  }
  await stores.stop();
  // The disk's durability floor, measured here and now: an acknowledgement waits for at least one.
  const disk = await measureSyncLatency();

  const bare = await startServer([new URL(import.meta.url).pathname, '--ceiling-server']);
  const ceiling = await drive(bare.url, operatorKey, options);
  await stopServer(bare.child);
  rows.push({ name: 'bare Fastify route (ceiling)', run: ceiling, decidedMs: null, cpuUsPerAck: null, mainUsPerAck: null });
  const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
  console.log(`HTTP bench: ${connections} connections, ${seconds} s measured after ${warmupSeconds} s warm-up, ${accounts} accounts, ${cpus().length} cores, Node ${process.version}`);
  console.log('| target | acks/s | ack p50 | ack p99 | submit-to-decided p99 | refused | server CPU per ack (all threads / main) |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const sorted = [...r.run.latenciesMs].sort((a, b) => a - b);
    const decided = r.decidedMs === null ? 'n/a' : `${fmt(percentile(r.decidedMs, 99))} (${r.decidedMs.length} of ${r.run.submittedAt.size} seen)`;
    console.log(`| ${r.name} | ${Math.round(r.run.acks / r.run.elapsedS)} | ${fmt(percentile(sorted, 50))} | ${fmt(percentile(sorted, 99))} | ${decided} | ${r.run.refused} | ${r.cpuUsPerAck === null || r.mainUsPerAck === null ? 'n/a' : `${r.cpuUsPerAck.toFixed(0)} / ${r.mainUsPerAck.toFixed(0)} µs`} |`);
  }
  console.log(`disk: fdatasync of a 1 KiB append p50 ${fmt(disk.fdatasync.p50Ms)}, p99 ${fmt(disk.fdatasync.p99Ms)}; LevelDB sync write of 2 entries p50 ${fmt(disk.levelSyncWrite.p50Ms)}, p99 ${fmt(disk.levelSyncWrite.p99Ms)}`);
  for (const r of rows.slice(0, -1)) {
    const ackP99Ms = percentile([...r.run.latenciesMs].sort((a, b) => a - b), 99);
    console.log(`${r.name} reaches ${((100 * r.run.acks) / Math.max(1, ceiling.acks)).toFixed(0)}% of the ceiling's throughput; its ack p99 is ${(ackP99Ms / disk.fdatasync.p99Ms).toFixed(1)}x the disk's fsync p99.`);
  }
}

if (args['ceiling-server']) await ceilingServer();
else await main();
