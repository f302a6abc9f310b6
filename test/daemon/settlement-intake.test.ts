/**
 * The daemon takes the layer in by itself (docs/settlement.md): a run of blocks carrying more
 * than one `settle` takes is taken in command after command, with no sync asked for.
 */
import { describe, expect, it } from 'vitest';
import { useDaemon } from './support.js';

const shared = useDaemon({ alice: 0n }, { settlement: { blockIntervalMs: 0, finalityDepth: 1 } });
const location = '77'.repeat(32);

describe('intake by itself', () => {
  it('credits 1 200 deposits carried in two blocks of one run (more than one settle takes)', async () => {
    const operator = shared.as('operator');
    const usd = async () => ((await operator.get('/v1/assets')).body as { id: string; binding: string }[]).find((a) => a.id === 'USD')!;
    await operator.post('/v1/ops/assets/USD/binding', { location });
    for (let i = 0; i < 50 && (await usd()).binding !== 'bound'; i++) {
      await operator.post('/v1/ops/layer/blocks', { count: 1 });
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await usd()).binding).toBe('bound');
    const ref = (await operator.get('/v1/accounts/did:ledger:acct:alice')).body.deposit_ref as string;
    for (let i = 0; i < 1200; i += 100) {
      const placed = await Promise.all(Array.from({ length: 100 }, (_, j) => operator.post('/v1/ops/layer/deposits', { asset: 'USD', amount: '1', account_ref: ref }, undefined, { 'client-key': `deposit-${i + j}` })));
      expect(placed.every((r) => r.status === 200)).toBe(true);
    }
    // One request: blocks of 1 000 and 200 deposits, then one to make both final.
    expect((await operator.post('/v1/ops/layer/blocks', { count: 3 })).status).toBe(200);
    let available = '0';
    for (let i = 0; i < 300 && available !== '1200'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      available = ((await operator.get('/v1/accounts/did:ledger:acct:alice/balances')).body.balances as { asset: string; available: string }[]).find((b) => b.asset === 'USD')?.available ?? '0';
    }
    expect(available).toBe('1200');
    const comparison = (await operator.post('/v1/ops/settlement/comparisons', {}, undefined, { 'client-key': 'intake-comparison' })).body.result.settlement.comparison;
    expect(comparison).toMatchObject({ differs: false, cut: 1200 });
  }, 60_000);
});
