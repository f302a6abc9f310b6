/**
 * What open read slots cost on LevelDB in memory (docs/daemon.md, "Reads under load"): K
 * snapshots held open at once, each with an iterator part way through a range as a
 * running query has. Reports the RSS and heap they hold against none open. (What they
 * hold back from compaction is what is written while they are open: see the docs.)
 *
 *   npm run build && node --expose-gc dist/bench/snapshots.js [--entries 100000] [--open 0,8,32,64]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LevelStore } from '../src/store/level.js';
import type { Snapshot } from '../src/store/port.js';

const { values: args } = parseArgs({ options: { entries: { type: 'string', default: '100000' }, open: { type: 'string', default: '0,8,32,64' } } });
const entries = Number(args.entries);
const openCounts = args.open.split(',').map(Number);
/** 200 characters that do not compress (LevelDB compresses blocks), as hashes and ids in a book mostly do not. */
const valueText = () => randomBytes(100).toString('hex');
const batchEntries = 1_000;
const key = (i: number) => `k${String(i).padStart(9, '0')}`;

async function fill(store: LevelStore): Promise<void> {
  for (let i = 0; i < entries; i += batchEntries) {
    const ops = [];
    for (let j = i; j < Math.min(entries, i + batchEntries); j++) ops.push({ type: 'put' as const, key: key(j), value: valueText() });
    await store.write(ops, false);
  }
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

for (const open of openCounts) {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-snapshots-'));
  const store = await LevelStore.open(dir, { createIfMissing: true });
  try {
    await fill(store);
    globalThis.gc?.();
    const before = process.memoryUsage();
    // Each open read: a snapshot and an iterator that has read a page (a query part way through).
    const held: { snapshot: Snapshot; iterator: AsyncIterator<[string, string]> }[] = [];
    for (let n = 0; n < open; n++) {
      const snapshot = store.snapshot();
      const iterator = snapshot.entries({ gte: key(Math.floor((n * entries) / Math.max(1, open))), limit: 1_000 })[Symbol.asyncIterator]();
      for (let i = 0; i < 100; i++) await iterator.next();
      held.push({ snapshot, iterator });
    }
    globalThis.gc?.();
    const withReads = process.memoryUsage();
    for (const { snapshot, iterator } of held) {
      await iterator.return?.();
      await snapshot.close();
    }
    console.log(`${open} open reads over ${entries} entries: RSS +${mib(withReads.rss - before.rss)}, heap +${mib(withReads.heapUsed - before.heapUsed)}`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
