/**
 * Genesis import memory (issue 10): writes a genesis file of N funded customer
 * accounts (one identity, one account, one opening and one alias each, plus the
 * treasury's opening) to a temp dir, imports it the way `ledgerd init` does (streamed
 * from the file into a LevelDB book), and prints the import time, its CPU time (every
 * thread) and the peak RSS. `--spaces` also counts every write the import makes (puts and
 * deletes, overwrites included) by key space, entries and bytes of key and value per account
 * (a little CPU of its own: leave it out when timing).
 * Usage: node dist/bench/genesis-import.js --accounts 1000000 [--spaces]
 */
import { closeSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { importGenesisSource } from '../src/book/genesis.js';
import { LevelStore } from '../src/store/level.js';
import type { Store } from '../src/store/port.js';
import { openGenesisFile } from '../daemon/genesis-file.js';

const { values } = parseArgs({ options: { accounts: { type: 'string', default: '100000' }, every: { type: 'string', default: '0' }, spaces: { type: 'boolean', default: false } } });
const accounts = Number(values.accounts);
/** Seconds between lines of memory over time (0: none). */
const everyS = Number(values.every);

/** Written synchronously (not through libuv's pool), so the pool's threads are the store's: see threadCpuS. */
function writeGenesis(path: string): void {
  const fd = openSync(path, 'w');
  let pending: string[] = [];
  const write = (text: string) => {
    pending.push(text);
    if (pending.length === 4096) flush();
  };
  const flush = () => {
    writeSync(fd, pending.join(''));
    pending = [];
  };
  const section = (name: string, first: boolean, row: (i: number) => string, extra = '') => {
    write(`${first ? '{' : ','}"${name}":[`);
    for (let i = 0; i < accounts; i++) write((i === 0 ? '' : ',') + row(i));
    write(`${extra}]`);
  };
  const total = String(100 * accounts);
  write('{"assets":[{"id":"USD","kind":"fiat","precision":2}]');
  section('identities', false, (i) => `"did:ledger:id:g${i}"`);
  section('accounts', false, (i) => `{"account":"did:ledger:acct:g${i}","owner":"did:ledger:id:g${i}","kind":"customer"}`, `,{"account":"did:ledger:acct:treasury","owner":"did:ledger:id:operator","kind":"treasury","treasury_limits":{"USD":"${total}"}}`);
  section('openings', false, (i) => `{"account":"did:ledger:acct:g${i}","asset":"USD","amount":"100","direction":"credit"}`, `,{"account":"did:ledger:acct:treasury","asset":"USD","amount":"${total}","direction":"debit"}`);
  section('aliases', false, (i) => `{"source":"old","name":"c-${i}","account":"did:ledger:acct:g${i}"}`);
  write('}');
  flush();
  closeSync(fd);
}

/** Every write of the store's batches and writes, counted by key space (its text up to the first '/'): entries and UTF-8 bytes of key and value. */
function countWrites(store: Store): Map<string, { entries: number; bytes: number }> {
  const spaces = new Map<string, { entries: number; bytes: number }>();
  const count = (key: string, value: string) => {
    const space = key.slice(0, key.indexOf('/') + 1);
    let tally = spaces.get(space);
    if (tally === undefined) spaces.set(space, (tally = { entries: 0, bytes: 0 }));
    tally.entries++;
    tally.bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  };
  const write = store.write.bind(store);
  store.write = (ops, sync) => {
    for (const op of ops) count(op.key, op.type === 'put' ? op.value : '');
    return write(ops, sync);
  };
  const batch = store.batch?.bind(store);
  if (batch !== undefined)
    store.batch = () => {
      const inner = batch();
      return {
        put: (key, value) => (count(key, value), inner.put(key, value)),
        del: (key) => (count(key, ''), inner.del(key)),
        get length() {
          return inner.length;
        },
        write: (sync) => inner.write(sync),
      };
    };
  return spaces;
}

/** CPU seconds of each of the process's threads so far, by thread id, from Linux's per-thread counters; empty elsewhere. */
function threadCpuS(): Map<string, number> {
  const cpu = new Map<string, number>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      cpu.set(tid, (Number(fields[11]) + Number(fields[12])) / 100); // utime, stime in clock ticks (USER_HZ 100)
    }
  } catch {
    // Not Linux (or a thread gone between listing and reading): what was read.
  }
  return cpu;
}
/** The CPU seconds `threads` took between two readings. */
const cpuSince = (before: Map<string, number>, after: Map<string, number>, threads: Iterable<string>) => [...threads].reduce((sum, tid) => sum + (after.get(tid) ?? 0) - (before.get(tid) ?? 0), 0);

/** RSS split as Linux counts it: anonymous memory (heaps, LevelDB's buffers) and mapped files (LevelDB's tables). */
function rssLine(): string {
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
  let split = '';
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    split = ` (anonymous ${mib(kib('RssAnon'))}, files ${mib(kib('RssFile'))})`;
  } catch {
    // Not Linux: the total only.
  }
  return `RSS ${mib(process.memoryUsage().rss)}${split}, JS heap used ${mib(process.memoryUsage().heapUsed)}`;
}

const dir = mkdtempSync(join(tmpdir(), 'ledger-genesis-bench-'));
try {
  const file = join(dir, 'genesis.json');
  writeGenesis(file);
  const rssBeforeMiB = process.memoryUsage().rss / 2 ** 20;
  // Threads by when Node started them (Linux gives ids in order): V8's helpers (garbage collection, compiling) first,
  // libuv's pool last (it runs LevelDB's reads and batch writes, and the file's reads); LevelDB's compaction thread starts at its first flush.
  const startThreads = [...threadCpuS().keys()].filter((tid) => tid !== String(process.pid)).sort((a, b) => Number(a) - Number(b));
  const poolThreads = startThreads.slice(-Number(process.env.UV_THREADPOOL_SIZE ?? 4));
  const v8Threads = startThreads.slice(0, -poolThreads.length);
  const store = await LevelStore.open(join(dir, 'book'));
  const spaces = values.spaces ? countWrites(store) : null;
  const startMs = performance.now();
  const cpuBefore = process.cpuUsage();
  const threadsBefore = threadCpuS();
  const genesis = await openGenesisFile(file);
  const sampler =
    everyS > 0
      ? setInterval(() => {
          const share = genesis.share();
          const cpu = process.cpuUsage(cpuBefore);
          console.log(`${((performance.now() - startMs) / 1000).toFixed(0)} s: ${share === null ? 'counting' : `${(100 * share).toFixed(1)}% of entries`}, CPU ${((cpu.user + cpu.system) / 1e6).toFixed(0)} s, ${rssLine()}`);
        }, everyS * 1000)
      : null;
  await importGenesisSource(store, genesis, Date.now());
  if (sampler !== null) clearInterval(sampler);
  await genesis.close();
  const elapsedMs = performance.now() - startMs;
  // CPU of every thread (LevelDB's too): on a shared machine, what the import costs whatever the wall clock waited for.
  const cpu = process.cpuUsage(cpuBefore);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const threadsAfter = threadCpuS();
  const mainS = cpuSince(threadsBefore, threadsAfter, [String(process.pid)]);
  const laterThreads = [...threadsAfter.keys()].filter((tid) => tid !== String(process.pid) && !startThreads.includes(tid));
  const split =
    threadsAfter.size === 0
      ? ''
      : `; main thread ${mainS.toFixed(1)} s, V8's helpers ${cpuSince(threadsBefore, threadsAfter, v8Threads).toFixed(1)} s, ` +
        `libuv's pool (LevelDB reads and writes, file reads) ${cpuSince(threadsBefore, threadsAfter, poolThreads).toFixed(1)} s, LevelDB's compaction ${cpuSince(threadsBefore, threadsAfter, laterThreads).toFixed(1)} s`;
  await store.close();
  if (everyS > 0) console.log(`at the end: ${rssLine()}`);
  // maxRSS is in KiB; the file was written before, with little memory, so the peak is the import's.
  const peakRssMiB = process.resourceUsage().maxRSS / 1024;
  console.log(
    `genesis import: ${accounts} accounts, file ${(statSync(file).size / 2 ** 20).toFixed(0)} MiB, ` +
      `${(elapsedMs / 1000).toFixed(1)} s (${Math.round(accounts / (elapsedMs / 1000))} accounts/s), ` +
      `CPU ${cpuS.toFixed(1)} s (${Math.round(accounts / cpuS)} accounts per CPU-second, ${((1e6 * cpuS) / accounts).toFixed(1)} µs per account${split}), load average ${loadavg()[0]!.toFixed(1)}, ` +
      `RSS before ${rssBeforeMiB.toFixed(0)} MiB, peak RSS ${peakRssMiB.toFixed(0)} MiB`,
  );
  if (spaces !== null) {
    const all = [...spaces.values()].reduce((sum, t) => ({ entries: sum.entries + t.entries, bytes: sum.bytes + t.bytes }), { entries: 0, bytes: 0 });
    const perAccount = (t: { entries: number; bytes: number }) => `${(t.entries / accounts).toFixed(3)} entries, ${(t.bytes / accounts).toFixed(1)} B`;
    for (const [space, t] of [...spaces].sort((a, b) => b[1].bytes - a[1].bytes)) console.log(`  ${space.padEnd(24)} ${perAccount(t)} per account`);
    console.log(`  written per account: ${perAccount(all)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
