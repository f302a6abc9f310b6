/**
 * How long classic-level's calls hold the calling (main) thread before they return
 * their promise: a read takes an implicit snapshot there (LevelDB's mutex, which its
 * writer and compaction take too), and every call queues work on libuv's pool. Timed
 * alone, then while fsync'd batches the size of a decision round are written the
 * whole time, as ledgerd's decider does under load. Whatever a call holds the thread
 * for, every HTTP request waiting on that thread waits too.
 *
 *   npm run build && node dist/bench/level-stalls.js [--seconds 5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ClassicLevel } from 'classic-level';
import { percentile } from './percentile.js';

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '5' } } });
const seconds = Number(args.seconds);
/** Entries in a background write: a decision round of ~60 1-leg transfers. */
const roundEntries = 600;
const valueText = 'v'.repeat(300);

function summary(samplesMs: number[]): string {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const meanUs = (1000 * sorted.reduce((a, b) => a + b, 0)) / Math.max(1, sorted.length);
  const us = (ms: number) => `${(1000 * ms).toFixed(0)} µs`;
  return `n=${sorted.length}, mean ${meanUs.toFixed(0)} µs, p50 ${us(percentile(sorted, 50))}, p99 ${us(percentile(sorted, 99))}, max ${us(sorted[sorted.length - 1] ?? NaN)}`;
}

async function measure(db: ClassicLevel<string, string>, withWrites: boolean): Promise<void> {
  let stop = false;
  const background = (async () => {
    let n = 0;
    while (withWrites && !stop) {
      const batch = db.batch();
      for (let i = 0; i < roundEntries; i++) batch.put(`w${n++ % 50_000}`, valueText);
      await batch.write({ sync: true });
    }
  })();
  const keys = Array.from({ length: 20 }, (_, i) => `k${i * 37}`);
  const getManyMs: number[] = [];
  const writeMs: number[] = [];
  const untilMs = performance.now() + seconds * 1000;
  while (performance.now() < untilMs) {
    const t0 = performance.now();
    const read = db.getMany(keys);
    getManyMs.push(performance.now() - t0);
    await read;
    const batch = db.batch();
    batch.put('z', 'y');
    const t1 = performance.now();
    const written = batch.write({ sync: false });
    writeMs.push(performance.now() - t1);
    await written;
  }
  stop = true;
  await background;
  const when = withWrites ? `while fsync'd writes of ${roundEntries} entries run` : 'alone';
  console.log(`getMany of 20 keys, the caller's thread held ${when}: ${summary(getManyMs)}`);
  console.log(`batch.write of 1 entry, the caller's thread held ${when}: ${summary(writeMs)}`);
}

const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-stalls-'));
try {
  const db = new ClassicLevel<string, string>(join(dir, 'db'), { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open();
  const fill = db.batch();
  for (let i = 0; i < 10_000; i++) fill.put(`k${i}`, valueText);
  await fill.write();
  await measure(db, false);
  await measure(db, true);
  await db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
