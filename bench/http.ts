/**
 * HTTP benchmark: acknowledged transfers through the real `ledgerd` (a child process
 * on loopback, fsync'd commits), driven by many concurrent keep-alive connections, with
 * the book on LevelDB and on PostgreSQL (a private durable cluster), side by side.
 * Prints acknowledgements per second, acknowledgement latency p50/p99 and
 * submit-to-decided p99 (the decision learned through GET /v1/events), and, in the
 * same run on the same machine, the same figures for a bare Fastify route that does
 * nothing: the ceiling, and for the floor of a durable acknowledgement in ledgerd's stack
 * (bench/ack-floor.ts: ledgerd's schemas, bearer check and request digest, one fsync'd
 * group write, no book). Each ledgerd row also says how many store writes (fsync'd
 * batches) and how many sleeps of its threads (each a wake-up) an acknowledgement cost:
 * below saturation those, not the transfers, are what the CPU goes to. Nothing is asserted.
 *
 *   npm run build && node dist/bench/http.js [--pinning pinned,unpinned] [--stores leveldb,postgres] [--write-buffer-mib 4,64] [--rate N] [--batch N] [--profile-dir DIR] [--connections 64] [--seconds 10] [--accounts 1000]
 *
 * `--batch N` runs each ledgerd twice, side by side: one transfer per POST /v1/transfers, then
 * N per POST /v1/batches (acks/s counts transfers; ack latency is per request).
 *
 * `--rate N` offers N transfers/s on a fixed schedule (an open loop) instead of each
 * connection submitting again once answered: latency below saturation, where the closed
 * loop's p50 is only connections / throughput.
 *
 * `--pinning` runs the whole comparison once per pass, each its own table: `pinned` puts the
 * server (every thread of ledgerd, or the bare route's process) on one core and this load
 * generator on the other (bench/pinning.ts), so the figures measure the server, not how
 * two processes share two cores; `unpinned` lets both use every core. Each row prints the
 * server's CPU per acknowledgement: when one core of load generator cannot saturate the
 * bare route, compare CPU per request rather than throughput.
 *
 * `--write-buffer-mib` runs ledgerd on LevelDB once per size of LevelDB's write buffer
 * (`store.writeBufferBytes`), side by side; each LevelDB row says how much LevelDB
 * flushed and how much its compactions rewrote (write amplification), from its LOG.
 * Compaction lags the load: runs of 10 s show less of it than a long steady load
 * makes; give `--seconds 60` for steady-state figures.
 */
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { leveldbStoreDefault, postgresStoreOf, type StoreConfig } from '../daemon/config.js';
import { ackFloorServer, floorKeyVariable } from './ack-floor.js';
import { measureSyncLatency } from './fsync.js';
import { percentile } from './percentile.js';
import { drive, type LevelWrites, loadFlags, loadOptions, measureCpu, type Run, runLedgerd, startServer, stopServer } from './http-load.js';
import { BenchStores, parseStores } from './stores.js';
import { type Pinning, parsePinnings, pinnedSides, processCpuMs, treeCpuMs, unpin, unpinned } from './pinning.js';

const { values: args } = parseArgs({
  options: {
    ...loadFlags,
    'ceiling-server': { type: 'boolean', default: false },
    'floor-server': { type: 'boolean', default: false },
    /** Write a V8 CPU profile of ledgerd here (node --cpu-prof), to see where its time goes. */
    'profile-dir': { type: 'string' },
    stores: { type: 'string', default: 'leveldb,postgres' },
    pinning: { type: 'string', default: 'pinned,unpinned' },
    /** Sizes of LevelDB's write buffer to run ledgerd with, in MiB (default: the daemon's default alone). */
    'write-buffer-mib': { type: 'string' },
  },
});
const options = loadOptions(args);
/** LevelDB write buffers to run with, in MiB; null: the daemon's default. */
const writeBufferMiB: (number | null)[] =
  args['write-buffer-mib'] === undefined
    ? [null]
    : args['write-buffer-mib'].split(',').map((text) => {
        const mib = Number(text);
        if (!Number.isSafeInteger(mib) || mib < 1 || mib > 1024) throw new Error(`bad --write-buffer-mib: ${text}`);
        return mib;
      });
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

interface Row {
  readonly name: string;
  /** The requests it took: `POST /v1/transfers`, or `POST /v1/batches of N`. */
  readonly route: string;
  readonly run: Run;
  readonly decidedPerSec: number | null;
  readonly decidedMs: number[] | null;
  readonly cpuUsPerAck: number;
  readonly mainUsPerAck: number;
  readonly levelWrites: LevelWrites | null;
  /** ledgerd's store writes (fsync'd) and its threads' sleeps per ack; null for the bare route. */
  readonly perAck: { readonly storeWrites: number; readonly sleeps: number } | null;
}

/** Every ledgerd variant, then the bare route, under one pinning. */
async function pass(pinning: Pinning, stores: BenchStores, profile: string[]): Promise<Row[]> {
  const rows: Row[] = [];
  let operatorKey = '';
  for (const kind of parseStores(args.stores)) {
    const variants: { store: StoreConfig; label: string }[] =
      kind === 'postgres'
        ? [{ store: postgresStoreOf({ ...(await stores.database()), leaseMs: stores.leaseMs }), label: kind }]
        : writeBufferMiB.map((mib) => ({ store: mib === null ? leveldbStoreDefault : { ...leveldbStoreDefault, writeBufferBytes: mib * 2 ** 20 }, label: mib === null ? kind : `${kind}, write buffer ${mib} MiB` }));
    for (const { store, label } of variants) {
      for (const batchSize of options.batchSize === null ? [null] : [null, options.batchSize]) {
        const ledgerd = await runLedgerd({ ...options, batchSize }, profile, store, pinning);
        operatorKey = ledgerd.operatorKey;
        const route = routeOf(batchSize);
        rows.push({ name: `ledgerd ${route}, ${label}`, route, run: ledgerd.run, decidedPerSec: ledgerd.decidedPerSec, decidedMs: ledgerd.decidedMs, cpuUsPerAck: ledgerd.cpuUsPerAck, mainUsPerAck: ledgerd.mainThreadCpuUsPerAck, levelWrites: ledgerd.levelWrites, perAck: { storeWrites: ledgerd.storeWritesPerAck, sleeps: ledgerd.sleepsPerAck } });
      }
    }
  }
  for (const batchSize of options.batchSize === null ? [null] : [null, options.batchSize]) {
    rows.push(await serverRow('durable-ack floor (bench/ack-floor.ts)', '--floor-server', { ...process.env, [floorKeyVariable]: operatorKey }, operatorKey, pinning, batchSize));
  }
  rows.push(await serverRow('bare Fastify route (ceiling)', '--ceiling-server', process.env, operatorKey, pinning, null));
  return rows;
}

const routeOf = (batchSize: number | null | undefined) => (batchSize === null ? 'POST /v1/transfers' : `POST /v1/batches of ${batchSize}`);

/** A row for a server of this file's own (the floor or the bare route), driven like ledgerd. */
async function serverRow(name: string, flag: string, env: NodeJS.ProcessEnv, operatorKey: string, pinning: Pinning, batchSize: number | null | undefined): Promise<Row> {
  const server = await startServer([new URL(import.meta.url).pathname, flag], env, pinning);
  const pid = server.child.pid!;
  const cpu = measureCpu(options, () => treeCpuMs(pid));
  const mainCpu = measureCpu(options, () => processCpuMs(pid, { mainThreadOnly: true }));
  const run = await drive(server.url, operatorKey, { ...options, batchSize });
  const perAck = (ms: number) => (ms * 1000) / Math.max(1, run.acks);
  const route = routeOf(batchSize);
  const row = { name: batchSize === null ? name : `${name}, ${route}`, route, run, decidedPerSec: null, decidedMs: null, cpuUsPerAck: perAck(cpu.stop()), mainUsPerAck: perAck(mainCpu.stop()), levelWrites: null, perAck: null };
  await stopServer(server.child);
  return row;
}

function report(pinning: Pinning, rows: Row[], disk: Awaited<ReturnType<typeof measureSyncLatency>>): void {
  const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
  console.log(`\n${pinning.label}`);
  console.log('| target | acks/s | decided/s | ack p50 | ack p99 | submit-to-decided p99 | refused | server CPU per ack (all threads / main) |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const sorted = [...r.run.latenciesMs].sort((a, b) => a - b);
    const decided = r.decidedMs === null ? 'n/a' : `${fmt(percentile(r.decidedMs, 99))} (${r.decidedMs.length} of ${r.run.submittedAt.size} seen)`;
    console.log(`| ${r.name} | ${Math.round(r.run.acks / r.run.elapsedS)} | ${r.decidedPerSec === null ? 'n/a' : Math.round(r.decidedPerSec)} | ${fmt(percentile(sorted, 50))} | ${fmt(percentile(sorted, 99))} | ${decided} | ${r.run.refused} | ${r.cpuUsPerAck.toFixed(0)} / ${r.mainUsPerAck.toFixed(0)} µs |`);
  }
  const ceiling = rows.at(-1)!;
  for (const r of rows.slice(0, -1)) {
    const ackP99Ms = percentile([...r.run.latenciesMs].sort((a, b) => a - b), 99);
    const floor = rows.find((row) => row.name.startsWith('durable-ack floor') && row.route === r.route);
    const aboveFloor = floor === undefined || floor === r ? '' : ` (${(r.cpuUsPerAck / Math.max(1e-9, floor.cpuUsPerAck)).toFixed(1)}x the durable-ack floor's)`;
    console.log(
      `${r.name}: ${((100 * r.run.acks) / Math.max(1, ceiling.run.acks)).toFixed(0)}% of the ceiling's throughput; CPU per ack ${(r.cpuUsPerAck / Math.max(1e-9, ceiling.cpuUsPerAck)).toFixed(1)}x the bare route's per request (aim: <= 2x)${aboveFloor}; ack p99 ${(ackP99Ms / disk.fdatasync.p99Ms).toFixed(1)}x the disk's fsync p99.`,
    );
    if (r.perAck !== null) console.log(`  per ack: ${r.perAck.storeWrites.toFixed(2)} store writes (atomic batches, fsync'd), ${r.perAck.sleeps.toFixed(1)} sleeps of ledgerd's threads (voluntary context switches: each a wake-up).`);
    const w = r.levelWrites;
    if (w !== null) {
      // Per transfer acknowledged over the whole run (warm-up included), as LevelDB's LOG covers it.
      const perTransfer = (mib: number) => `${((mib * 2 ** 20) / Math.max(1, r.run.allAcks)).toFixed(0)} B`;
      console.log(
        `  LevelDB flushed ${w.flushedMiB.toFixed(0)} MiB of memtables and its compactions rewrote ${w.compactedMiB.toFixed(0)} MiB (${(w.compactedMiB / Math.max(1e-9, w.flushedMiB)).toFixed(1)}x) over the whole run: ${perTransfer(w.flushedMiB)} flushed + ${perTransfer(w.compactedMiB)} rewritten per transfer (what was still in the memtable at the end is not counted).`,
      );
    }
  }
}

async function main(): Promise<void> {
  const profile = args['profile-dir'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', args['profile-dir']];
  const stores = new BenchStores();
  const passes: { pinning: Pinning; rows: Row[] }[] = [];
  for (const kind of parsePinnings(args.pinning)) {
    const pinning = kind === 'pinned' ? pinnedSides() : unpinned;
    passes.push({ pinning, rows: await pass(pinning, stores, profile) });
    if (kind === 'pinned') unpin();
  }
  await stores.stop();
  // The disk's durability floor, measured here and now: an acknowledgement waits for at least one.
  const disk = await measureSyncLatency();
  console.log(`HTTP bench: ${connections} connections, ${options.ratePerSec === null ? 'each submitting again once answered' : `${options.ratePerSec} transfers/s offered on a fixed schedule`}, ${seconds} s measured after ${warmupSeconds} s warm-up, ${accounts} accounts, ${cpus().length} cores, Node ${process.version}`);
  for (const { pinning, rows } of passes) report(pinning, rows, disk);
  console.log(`disk: fdatasync of a 1 KiB append p50 ${disk.fdatasync.p50Ms.toFixed(2)} ms, p99 ${disk.fdatasync.p99Ms.toFixed(2)} ms; LevelDB sync write of 2 entries p50 ${disk.levelSyncWrite.p50Ms.toFixed(2)} ms, p99 ${disk.levelSyncWrite.p99Ms.toFixed(2)} ms`);
}

if (args['ceiling-server']) await ceilingServer();
else if (args['floor-server']) await ackFloorServer();
else await main();
