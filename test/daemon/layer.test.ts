/**
 * The embedded settlement layer through the daemon (CONTRACT 9): blocks on request by
 * the operator alone, bounded counts, blocks by themselves at blockIntervalMs, and a
 * restart that resumes the layer where it stood.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bookRecords, client, refused, startDaemon, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();

describe('POST /v1/ops/layer/blocks', () => {
  it('makes blocks for the operator only, within bounds, and a restart resumes the layer where it stood', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 100n });
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ settlement: { blockIntervalMs: 0, finalityDepth: 3 } }));
    let daemon = await startDaemon({ dataDir: dir });
    try {
      const op = client(() => daemon.url, keys.operator);
      const alice = client(() => daemon.url, keys.customers.alice!);
      const first = await op.post('/v1/ops/layer/blocks', { count: 5 });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ height: 5, final_height: 2, serving: true });
      expect(await refused(alice.post('/v1/ops/layer/blocks', { count: 1 }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
      for (const body of [{ count: 0 }, { count: 1001 }, { count: 1.5 }, { count: '2' }, {}, { count: 1, extra: true }]) {
        expect(await refused(op.post('/v1/ops/layer/blocks', body)), JSON.stringify(body)).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
      }
      expect((await op.post('/v1/ops/layer/blocks', { count: 1000 })).body.height).toBe(1005);
      expect(await daemon.stop()).toBe(0);
      daemon = await startDaemon({ dataDir: dir });
      expect((await op.post('/v1/ops/layer/blocks', { count: 1 })).body).toEqual({ height: 1006, final_height: 1003, serving: true });
    } finally {
      await daemon.stop();
    }
  });

  it('keeps an idle book the same size however many empty blocks it makes', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 100n });
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ settlement: { blockIntervalMs: 0 } }));
    // 1 000 blocks, then 1 000 more: heights of four digits either way, so even the counters keep their length.
    const run = async () => {
      const daemon = await startDaemon({ dataDir: dir });
      try {
        expect((await client(() => daemon.url, keys.operator).post('/v1/ops/layer/blocks', { count: 1000 })).status).toBe(200);
      } finally {
        expect(await daemon.stop()).toBe(0);
      }
      return bookRecords(dir);
    };
    const idle = await run();
    expect(await run()).toEqual(idle);
  });

  it('makes blocks by itself every blockIntervalMs', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, {});
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ settlement: { blockIntervalMs: 20 } }));
    const daemon = await startDaemon({ dataDir: dir });
    try {
      const op = client(() => daemon.url, keys.operator);
      await new Promise((resolve) => setTimeout(resolve, 400));
      const { height } = (await op.post('/v1/ops/layer/blocks', { count: 1 })).body as { height: number };
      expect(height).toBeGreaterThan(3);
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  });

  it('refuses a settlement section it does not know at start', async () => {
    const dir = newDir();
    await writeBook(dir, {});
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ settlement: { blockIntervalMs: -1 } }));
    await expect(startDaemon({ dataDir: dir })).rejects.toThrow(/settlement.blockIntervalMs must be an integer/);
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ settlement: { blocks: 1 } }));
    await expect(startDaemon({ dataDir: dir })).rejects.toThrow(/settlement: unknown setting blocks/);
  });
});
