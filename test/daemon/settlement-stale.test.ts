/**
 * A stale layer status (CONTRACT 9): with `settlement.statusFreshMs` the embedded layer's
 * status holds only that long after its last block, so a layer that makes no block goes
 * stale. Settlement commands are then refused with 503 ERR-SettlementLayerUnavailable and
 * Retry-After; transfers and reads go on; the next block makes it fresh again.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Client, type Reply, client, decided, startDaemon, until, useDaemon, useTempDirs, writeBook } from './support.js';

const location = 'ab'.repeat(32);
const away = { account: 'cd'.repeat(32) };
const statusFreshMs = 3_000;
const key = () => ({ 'client-key': `k-${Math.random().toString(36).slice(2)}` });
const blocks = (op: Client, count: number) => op.post('/v1/ops/layer/blocks', { count });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a stale settlement layer status', () => {
  const newDir = useTempDirs();
  const shared = useDaemon({ alice: 1000n, bob: 0n }, { settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0, finalityDepth: 1, statusFreshMs } });

  it('refuses settlement commands with 503 and Retry-After while stale, keeps the book working, and is fresh again at the next block', async () => {
    const operator = shared.as('operator');
    const alice = shared.as('alice');
    // A layer that made no block yet has declared nothing: stale until its first block.
    expect((await operator.post('/v1/ops/assets/USD/binding', { location }, undefined, key())).status).toBe(503);
    await blocks(operator, 1);
    const bind = await operator.post('/v1/ops/assets/USD/binding', { location }, undefined, key());
    expect((await decided(operator, bind.body.operation_reference)).body.state).toBe('Completed');
    for (let i = 0; i < 20 && ((await operator.get('/v1/assets')).body as { id: string; binding: string }[]).find((a) => a.id === 'USD')!.binding !== 'bound'; i++) {
      await blocks(operator, 1);
      await sleep(30);
    }

    // Its status is declared at its last block and holds statusFreshMs.
    const before = Date.now();
    await blocks(operator, 1);
    const fresh = (await operator.get('/v1/ops/settlement/status')).body;
    expect(fresh).toMatchObject({ serving: true });
    expect(fresh.declared_at).toBeGreaterThanOrEqual(before);
    expect(fresh.fresh_until - fresh.declared_at).toBe(statusFreshMs);

    await sleep(fresh.fresh_until - Date.now() + 50);
    const stale = (await operator.get('/v1/ops/settlement/status')).body;
    expect(stale).toMatchObject({ serving: true, fresh_until: fresh.fresh_until });
    expect(Date.now()).toBeGreaterThanOrEqual(stale.fresh_until);

    const unavailable = (r: Reply) => {
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 503, error: 'ERR-SettlementLayerUnavailable' });
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    };
    unavailable(await alice.post('/v1/withdrawals', { account: 'did:ledger:acct:alice', amount: '1', asset: 'USD', destination: away }, undefined, key()));
    unavailable(await operator.post('/v1/ops/assets/EUR/binding', { location: 'ef'.repeat(32) }, undefined, key()));
    unavailable(await operator.post('/v1/ops/checkpoints', {}, undefined, key()));
    unavailable(await operator.post('/v1/ops/settlement/rescans', { from: 1, to: 10 }));
    unavailable(await operator.post('/v1/ops/settlement/observations', { coordinate: { digest: '00'.repeat(32), instance: 1, seq: 1 } }));
    // Refused at submission: nothing was stored.
    expect(((await operator.get('/v1/assets')).body as { id: string; binding: string }[]).find((a) => a.id === 'EUR')).toMatchObject({ binding: 'book_only', location: null });
    expect((await operator.get('/v1/checkpoints')).body.items).toEqual([]);

    // The rest of the book works.
    const t = await alice.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '5' }] }, undefined, key());
    expect((await decided(alice, t.body.operation_reference)).body.state).toBe('Completed');
    const balances = await alice.get('/v1/accounts/did:ledger:acct:alice/balances');
    expect(balances.status).toBe(200);
    expect((balances.body.balances as { asset: string; available: string }[]).find((b) => b.asset === 'USD')!.available).toBe('995');

    // The next block declares it again.
    await blocks(operator, 1);
    const w = await alice.post('/v1/withdrawals', { account: 'did:ledger:acct:alice', amount: '1', asset: 'USD', destination: away }, undefined, key());
    expect(w.status).toBe(202);
    expect((await decided(alice, w.body.operation_reference)).body.state).toBe('Instructed');
  });

  it('takes no automatic checkpoint while the status is stale, and takes it once a block declares the layer again', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { carol: 10n });
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ settlement: { blockIntervalMs: 0, checkpointIntervalMs: 50, finalityDepth: 1, statusFreshMs } }));
    const d = await startDaemon({ dataDir: dir });
    try {
      const operator = client(() => d.url, keys.operator);
      // No block yet: stale, though serving and with entries to cover.
      await sleep(500);
      expect((await operator.get('/v1/checkpoints')).body.items).toEqual([]);
      await blocks(operator, 1);
      const items = await until(async () => (await operator.get('/v1/checkpoints')).body.items as unknown[], (i) => i.length > 0);
      expect(items[0]).toMatchObject({ number: 1, status: 'pending' });
    } finally {
      expect(await d.stop()).toBe(0);
    }
  });

  it('refuses a statusFreshMs out of bounds at start', async () => {
    const dir = newDir();
    await writeBook(dir, {});
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ settlement: { statusFreshMs: -1 } }));
    await expect(startDaemon({ dataDir: dir })).rejects.toThrow(/settlement.statusFreshMs must be an integer/);
  });
});
