/**
 * LevelDB reads of a few keys are made on the calling thread (levelSyncReadKeysMax): no
 * round trip through libuv's pool, which below saturation cost more than the read
 * (docs/performance.md, Acknowledgements below saturation). Larger reads, and reads while
 * the store reopens after a failure, keep the asynchronous path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { levelSyncReadKeysMax } from '../../src/constants.js';
import { LevelStore } from '../../src/store/level.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function openStore(): Promise<LevelStore> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-level-reads-'));
  dirs.push(dir);
  const store = await LevelStore.open(dir);
  await store.write(Array.from({ length: 40 }, (_, i) => ({ type: 'put' as const, key: `k/${i}`, value: `v${i}` })), true);
  return store;
}

/** Whether `read` has settled after a few microtasks, before any I/O callback could run. */
async function settlesAtOnce(read: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void read.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 5; i++) await Promise.resolve();
  const atOnce = settled;
  await read.catch(() => undefined);
  return atOnce;
}

describe('LevelDB reads', () => {
  it('of a few keys answer without waiting for the thread pool, hits and misses alike', async () => {
    const store = await openStore();
    try {
      const keys = ['k/1', 'absent', 'k/2', 'k/1', 'k/39', 'nor/this', 'k/0', 'k/3'].slice(0, levelSyncReadKeysMax);
      const many = store.getMany(keys);
      expect(await settlesAtOnce(many)).toBe(true);
      expect(await many).toEqual(keys.map((k) => (k.startsWith('k/') ? `v${k.slice(2)}` : undefined)));
      const one = store.get('k/7');
      expect(await settlesAtOnce(one)).toBe(true);
      expect(await one).toBe('v7');
      expect(await store.get('absent')).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('of more keys give the same answers through the pool', async () => {
    const store = await openStore();
    try {
      const keys = Array.from({ length: levelSyncReadKeysMax + 5 }, (_, i) => (i % 3 === 0 ? `missing/${i}` : `k/${i}`));
      expect(await store.getMany(keys)).toEqual(keys.map((k) => (k.startsWith('k/') ? `v${k.slice(2)}` : undefined)));
    } finally {
      await store.close();
    }
  });

  it('after a reopen read as before, and on a closed store fail as a rejection, never a throw', async () => {
    const store = await openStore();
    await store.recover();
    expect(await store.getMany(['k/5', 'k/6'])).toEqual(['v5', 'v6']);
    await store.close();
    let reads: Promise<unknown>[] = [];
    expect(() => (reads = [store.getMany(['k/6']), store.get('k/6')])).not.toThrow();
    for (const read of reads) await expect(read).rejects.toMatchObject({ code: 'LEVEL_DATABASE_NOT_OPEN' });
  });
});
