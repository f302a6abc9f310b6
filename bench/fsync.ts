/**
 * The disk's own durability latency, the floor under every durable acknowledgement:
 * small appends each followed by fdatasync, in a temp dir on the disk the benches keep
 * their books on, and small LevelDB batches written with `sync` (the store's floor:
 * its log append and fsync). bench/http prints them beside the ack latency.
 *
 *   node dist/bench/fsync.js                       # closed loop: one write after another
 *   taskset -c 0 node dist/bench/fsync.js --rate 400 --seconds 10   # open loop, on one core as ledgerd is pinned
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { LevelStore } from '../src/store/level.js';
import { percentile, timedPercentiles } from './percentile.js';

export interface SyncLatency {
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** fdatasync after each 1 KiB append, and a 2-entry LevelDB batch written with sync. */
export async function measureSyncLatency(samples = 300): Promise<{ fdatasync: SyncLatency; levelSyncWrite: SyncLatency }> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-fsync-'));
  try {
    const fd = openSync(join(dir, 'log'), 'a');
    const record = Buffer.alloc(1024, 0x61);
    let fdatasync: SyncLatency;
    try {
      fdatasync = await timedPercentiles(samples, () => {
        writeSync(fd, record);
        fdatasyncSync(fd);
      });
    } finally {
      closeSync(fd);
    }
    const store = await LevelStore.open(join(dir, 'level'));
    try {
      const value = 'v'.repeat(300);
      const levelSyncWrite = await timedPercentiles(samples, (i) =>
        store.write(
          [
            { type: 'put', key: `cmd/${i}`, value },
            { type: 'put', key: `ck/${i}`, value },
          ],
          true,
        ),
      );
      return { fdatasync, levelSyncWrite };
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The store alone below saturation: `ratePerSec` LevelDB batches of `entries` entries of
 * ~380 B (about what one acknowledged transfer's intake and decision write) each written
 * with sync on a fixed schedule (an open loop: a write due while the previous is in flight
 * waits for it, and is timed from when it was due), for `seconds`. Its latency and the CPU
 * each write costs this process (all threads: the write, its fsync and the wake-ups around
 * them), the floor under ledgerd's writes at that rate.
 */
export async function measureSyncWritesAt(ratePerSec: number, seconds: number, entries = 8): Promise<{ p50Ms: number; p99Ms: number; cpuUsPerWrite: number; writes: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-fsync-'));
  const store = await LevelStore.open(join(dir, 'level'));
  try {
    const value = 'v'.repeat(380);
    const latenciesMs: number[] = [];
    const cpu0 = process.cpuUsage();
    const startMs = performance.now();
    const count = Math.round(ratePerSec * seconds);
    for (let i = 0; i < count; i++) {
      const dueMs = startMs + (i * 1000) / ratePerSec;
      const waitMs = dueMs - performance.now();
      if (waitMs > 0) await sleep(waitMs);
      await store.write(Array.from({ length: entries }, (_, j) => ({ type: 'put' as const, key: `k/${i}/${j}`, value })), true);
      latenciesMs.push(performance.now() - Math.max(dueMs, startMs));
    }
    const cpu = process.cpuUsage(cpu0);
    latenciesMs.sort((a, b) => a - b);
    return { p50Ms: percentile(latenciesMs, 50), p99Ms: percentile(latenciesMs, 99), cpuUsPerWrite: (cpu.user + cpu.system) / count, writes: count };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values: args } = parseArgs({ options: { rate: { type: 'string' }, seconds: { type: 'string', default: '10' } } });
  const fmt = (l: SyncLatency) => `p50 ${l.p50Ms.toFixed(2)} ms, p99 ${l.p99Ms.toFixed(2)} ms`;
  if (args.rate !== undefined) {
    const rate = Number(args.rate);
    const seconds = Number(args.seconds);
    if (!(Number.isSafeInteger(rate) && rate >= 1 && Number.isSafeInteger(seconds) && seconds >= 1)) throw new Error('--rate and --seconds: whole numbers >= 1');
    const at = await measureSyncWritesAt(rate, seconds);
    console.log(`LevelDB sync writes of 8 entries, ${rate}/s offered for ${seconds} s: ${fmt(at)}, ${at.cpuUsPerWrite.toFixed(0)} µs of CPU per write (all threads)`);
  } else {
    const { fdatasync, levelSyncWrite } = await measureSyncLatency();
    console.log(`fdatasync of a 1 KiB append: ${fmt(fdatasync)}`);
    console.log(`LevelDB sync write of 2 entries: ${fmt(levelSyncWrite)}`);
  }
}
