/**
 * Checkpoints through the daemon (CONTRACT 9): taken by the operator as an anchoring
 * command, `pending` → `submitted` → `final` as blocks come, listed newest first,
 * `checkpoint` events, chained commitments, and a kernel_root recomputed here from the
 * journal on disk with a plain RFC 6962 hash.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LevelStore } from '../../src/store/level.js';
import { journalChunkLeaves } from '../../src/model/codec.js';
import { parseSeqHex } from '../../src/model/keys.js';
import { type Client, type Daemon, client, decided, ledgerd, refused, startDaemon, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();
const sha = (...parts: (Buffer | string)[]) => createHash('sha256').update(Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)))).digest();
function mth(leaves: readonly string[]): Buffer {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return sha(Buffer.from([0]), leaves[0]!);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}
const canonical = (v: unknown): string =>
  v === null || typeof v !== 'object' ? JSON.stringify(v) : Array.isArray(v) ? `[${v.map(canonical).join(',')}]` : `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;

let daemon: Daemon;
let dir: string;
let op: Client;
let alice: Client;
let keys: Awaited<ReturnType<typeof writeBook>>;

beforeAll(async () => {
  dir = newDir();
  keys = await writeBook(dir, { alice: 1_000n, bob: 0n });
  writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0, finalityDepth: 2, instance: 7 } }));
  daemon = await startDaemon({ dataDir: dir });
  op = client(() => daemon.url, keys.operator);
  alice = client(() => daemon.url, keys.customers.alice!);
});
afterAll(async () => {
  await daemon.stop();
});

async function transfer(amount: string): Promise<void> {
  const r = await alice.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount }] });
  expect((await decided(alice, r.body.operation_reference)).body.state).toBe('Completed');
}

/** The events of a stream until `count` checkpoint events came. */
async function checkpointEvents(count: number, during: () => Promise<void>): Promise<unknown[]> {
  const controller = new AbortController();
  const res = await request(`${daemon.url}/v1/events`, { headers: { authorization: `Bearer ${keys.customers.alice}` }, signal: controller.signal });
  const seen: unknown[] = [];
  let text = '';
  const reading = (async () => {
    try {
      for await (const chunk of res.body) {
        text += chunk.toString();
        const events = text.split('\n\n').filter((e) => e.includes('event: checkpoint'));
        if (events.length >= count) {
          for (const e of events) {
            expect(e).not.toMatch(/^id:/m);
            seen.push(JSON.parse(e.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')));
          }
          controller.abort();
          return;
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 100));
  await during();
  await reading;
  return seen;
}

describe('checkpoints', () => {
  it('are taken by the operator alone, pending, then submitted and final as blocks come, with an event at each change', async () => {
    expect(await refused(alice.post('/v1/ops/checkpoints', {}))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    let taken: any;
    const events = await checkpointEvents(3, async () => {
      taken = await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-1' });
      await op.post('/v1/ops/layer/blocks', { count: 1 });
      await op.post('/v1/ops/layer/blocks', { count: 2 });
    });
    expect(taken.status).toBe(200);
    expect(taken.body).toMatchObject({ client_key: 'cp-1', client_key_derived: false, terminal: true, class: 'terminal', state: 'Completed' });
    const checkpoint = taken.body.result.anchoring.checkpoint;
    expect(checkpoint).toMatchObject({ number: 1, status: 'pending', entry_sequence: expect.any(Number) });
    expect(taken.body.result.anchoring.comparison).toMatchObject({ anchors: [], cut: 0, differs: false, height: 0, rows: [] });
    expect(events.map((e: any) => [e.number, e.status])).toEqual([[1, 'pending'], [1, 'submitted'], [1, 'final']]);
    expect((await alice.get('/v1/checkpoints/1')).body).toEqual({ ...checkpoint, status: 'final' });
    // A repeat under the client key answers the same reply and takes no second checkpoint.
    const repeat = await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-1' });
    expect(repeat.body).toEqual(taken.body);
    expect(await refused(op.post('/v1/ops/checkpoints', { other: 1 }, undefined, { 'client-key': 'cp-1' }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect((await op.get('/v1/checkpoints')).body.items).toHaveLength(1);
  });

  it('chain by commitments, cover the journal head, and list newest first in pages', async () => {
    await transfer('5');
    const second = (await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-2' })).body.result.anchoring.checkpoint;
    await transfer('6');
    const third = (await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-3' })).body.result.anchoring.checkpoint;
    expect([second.number, third.number]).toEqual([2, 3]);
    expect(third.entry_sequence).toBeGreaterThan(second.entry_sequence);
    const first = (await op.get('/v1/checkpoints/1')).body;
    // CONTRACT 12.3: every checkpoint taken now is of version 2.
    const commitment = (c: any, previous: string) => sha(canonical({ instance: 7, number: c.number, entry_sequence: c.entry_sequence, kernel_root: c.kernel_root, previous, liabilities: c.liabilities, version: 2 })).toString('hex');
    expect(first.commitment).toBe(commitment(first, '0'.repeat(64)));
    expect(second.commitment).toBe(commitment(second, first.commitment));
    expect(third.commitment).toBe(commitment(third, second.commitment));
    const page = await alice.get('/v1/checkpoints?limit=2');
    expect(page.body.items.map((c: any) => c.number)).toEqual([3, 2]);
    expect(page.body.next).toBe(2);
    const rest = await alice.get(`/v1/checkpoints?limit=2&before=${page.body.next}`);
    expect(rest.body).toEqual({ items: [first] });
    for (const path of ['/v1/checkpoints?limit=0', '/v1/checkpoints?limit=x', '/v1/checkpoints?before=-1', '/v1/checkpoints?what=1', '/v1/checkpoints/x', '/v1/checkpoints/1?x=1']) {
      expect((await refused(alice.get(path))).error, path).toBe('ERR-MalformedCommand');
    }
    expect(await refused(alice.get('/v1/checkpoints?limit=1001'))).toEqual({ status: 400, error: 'ERR-QueryUnbounded' });
    expect(await refused(alice.get('/v1/checkpoints/99'))).toEqual({ status: 409, error: 'ERR-AnchorNotFinal' });
  });

  it('answers the clerk key, the same as DIR/clerk.pub', async () => {
    const clerk = (await alice.get('/v1/clerk')).body;
    expect(clerk).toEqual({ public_key: readFileSync(join(dir, 'clerk.pub'), 'utf8').trim(), algorithm: 'ed25519', instance: 7 });
    expect(clerk.public_key).toMatch(/^[0-9a-f]{64}$/);
  });

  it('has a kernel_root that the journal on disk hashes to, and resumes after a restart', async () => {
    await op.post('/v1/ops/layer/blocks', { count: 3 });
    const listed = (await op.get('/v1/checkpoints')).body.items as any[];
    expect(listed.map((c) => c.status)).toEqual(['final', 'final', 'final']);
    expect(await daemon.stop()).toBe(0);
    const store = await LevelStore.open(join(dir, 'book'), { createIfMissing: false });
    const leaves: string[] = [];
    try {
      for await (const [key, chunk] of store.entries({ gte: 'j/', lt: 'j0', limit: 1_000_000 })) leaves.push(...journalChunkLeaves(chunk, parseSeqHex(key.slice('j/'.length))));
    } finally {
      await store.close();
    }
    // ledgerd check recomputes every root and commitment, and names a checkpoint whose root was changed.
    const check = () => spawnSync(process.execPath, [ledgerd, 'check', '--data-dir', dir], { encoding: 'utf8' });
    expect(check().stdout).toMatch(/, 3 checkpoints: consistent\n$/);
    const planted = await LevelStore.open(join(dir, 'book'), { createIfMissing: false });
    const key = 'cp/0000000000000002';
    const record = (await planted.get(key))!;
    try {
      await planted.write([{ type: 'put', key, value: JSON.stringify({ ...JSON.parse(record), kernelRoot: 'ee'.repeat(32) }) }], true);
    } finally {
      await planted.close();
    }
    const damaged = check();
    expect(damaged.status).toBe(6);
    expect(damaged.stdout).toContain('checkpoint 2: kernel_root is not the root of journal entries');
    const restoring = await LevelStore.open(join(dir, 'book'), { createIfMissing: false });
    await restoring.write([{ type: 'put', key, value: record }], true);
    await restoring.close();
    for (const c of listed) {
      expect(leaves.slice(0, c.entry_sequence).map((l) => JSON.parse(l).seq)).toEqual(Array.from({ length: c.entry_sequence }, (_, i) => i + 1));
      expect(c.kernel_root, `checkpoint ${c.number}`).toBe(mth(leaves.slice(0, c.entry_sequence)).toString('hex'));
    }
    daemon = await startDaemon({ dataDir: dir });
    await transfer('7');
    const fourth = (await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-4' })).body.result.anchoring.checkpoint;
    expect(fourth.number).toBe(4);
    expect(fourth.commitment).toBe(sha(canonical({ instance: 7, number: 4, entry_sequence: fourth.entry_sequence, kernel_root: fourth.kernel_root, previous: listed[0].commitment, liabilities: fourth.liabilities, version: 2 })).toString('hex'));
  });
});

describe('automatic checkpoints', () => {
  it('are taken every checkpointIntervalMs when entries were added since the last, and reach final as blocks come by themselves', async () => {
    const auto = newDir();
    const autoKeys = await writeBook(auto, { carol: 10n });
    writeFileSync(join(auto, 'ledgerd.json'), JSON.stringify({ settlement: { blockIntervalMs: 20, checkpointIntervalMs: 50, finalityDepth: 1 } }));
    const d = await startDaemon({ dataDir: auto });
    try {
      const carol = client(() => d.url, autoKeys.customers.carol!);
      let items: any[] = [];
      for (let i = 0; i < 100 && !(items.length > 0 && items[0].status === 'final'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        items = (await carol.get('/v1/checkpoints')).body.items;
      }
      expect(items[0]).toMatchObject({ number: 1, status: 'final' });
      // Nothing added since: no second checkpoint.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await carol.get('/v1/checkpoints')).body.items).toHaveLength(1);
    } finally {
      expect(await d.stop()).toBe(0);
    }
  });
});
