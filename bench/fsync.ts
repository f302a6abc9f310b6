/**
 * The disk's own durability latency, the floor under every durable acknowledgement:
 * small appends each followed by fdatasync, in a temp dir on the disk the benches keep
 * their books on, and small LevelDB batches written with `sync` (the store's floor:
 * its log append and fsync). bench/http prints them beside the ack latency.
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LevelStore } from '../src/store/level.js';
import { timedPercentiles } from './percentile.js';

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

if (import.meta.url === `file://${process.argv[1]}`) {
  const { fdatasync, levelSyncWrite } = await measureSyncLatency();
  const fmt = (l: SyncLatency) => `p50 ${l.p50Ms.toFixed(2)} ms, p99 ${l.p99Ms.toFixed(2)} ms`;
  console.log(`fdatasync of a 1 KiB append: ${fmt(fdatasync)}`);
  console.log(`LevelDB sync write of 2 entries: ${fmt(levelSyncWrite)}`);
}
