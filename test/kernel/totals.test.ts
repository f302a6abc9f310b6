/**
 * The per-asset totals (src/book/totals.ts): kept by every round in its batch, read on
 * opening instead of a pass over every balance, and the source of the trial balance;
 * `verifyTotals` (the full pass, for `ledgerd check`) agrees with them.
 */
import { describe, expect, it } from 'vitest';
import { Kernel } from '../../src/book/kernel.js';
import { sequentialIds } from '../../src/model/ids.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { Range } from '../../src/store/port.js';
import { verifyTotals } from '../../src/book/totals.js';
import { TestClock, acct, actorOf, customersGenesis, openBook, submission, sym, transfer } from '../support/book.js';
import { keys, storeLayout } from '../../src/model/keys.js';

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const aliceActor = actorOf('did:ledger:id:alice');

/** A store that records the ranges it is asked to iterate. */
class RecordingStore extends MemoryStore {
  readonly ranges: Range[] = [];
  override entries(range: Range) {
    this.ranges.push(range);
    return super.entries(range);
  }
}

async function bookWithHold() {
  const clock = new TestClock();
  const store = new RecordingStore();
  const { kernel } = await openBook({ store, clock, genesis: customersGenesis({ alice: 1_000n, bob: 0n }) });
  await kernel.submit(submission(aliceActor, transfer(alice, bob, 100n)));
  await kernel.submit(submission(aliceActor, { type: 'reserve', payer: acct(alice), asset: sym('USD'), amountMinor: 300n, deadlineMs: Number.MAX_SAFE_INTEGER }));
  await kernel.idle();
  return { kernel, store, clock };
}

describe('per-asset totals', () => {
  it('are kept layer by layer as rounds write, and the full pass agrees with them', async () => {
    const { kernel, store } = await bookWithHold();
    const report = await verifyTotals(store);
    expect(report.ok).toBe(true);
    const usd = report.assets.find((f) => f.asset === 'USD')!;
    // The hold moved 300 from available to reserved: the layers' totals say so, and still sum to zero.
    expect(usd.stored).toEqual(usd.summed);
    expect(usd.stored!.reserved).toBe(300n);
    expect(usd.stored!.available + usd.stored!.reserved + usd.stored!.encumbered).toBe(0n);
    await kernel.close();
  });

  it('opening reads them and makes no pass over the balances; the trial balance makes none either', async () => {
    const { kernel, store, clock } = await bookWithHold();
    await kernel.close();
    store.ranges.length = 0;
    const reopened = await Kernel.open({ store, clock: clock.read, ids: sequentialIds });
    const view = await reopened.openView();
    const tb = await view.trialBalance(null);
    expect(tb.unbalanced).toEqual([]);
    expect(tb.rows.map((r) => r.openingsMinor)).toEqual(tb.rows.map(() => 0n));
    await view.close();
    expect(store.ranges.filter((r) => (r.gte ?? r.gt ?? '').startsWith(keys.balancePrefix))).toEqual([]);
    await reopened.close();
  });

  it('answer the trial balance: a stored total that does not balance is reported, and the full pass finds it', async () => {
    const { kernel, store } = await bookWithHold();
    await store.write([{ type: 'put', key: keys.tb('USD'), value: JSON.stringify({ a: '-300', r: '301', e: '0' }) }], true);
    const view = await kernel.openView();
    const tb = await view.trialBalance(sym('USD'));
    expect(tb.rows).toEqual([{ asset: 'USD', openingsMinor: 1n, layers: { available: -300n, reserved: 301n, encumbered: 0n } }]);
    expect(tb.unbalanced).toHaveLength(1);
    await view.close();
    expect((await verifyTotals(store)).ok).toBe(false);
    await kernel.close();
    // A book whose totals do not balance is not opened.
    await expect(Kernel.open({ store, clock: new TestClock().read, ids: sequentialIds })).rejects.toThrow(/trial balance is zero in USD/);
  });

  it('the full pass finds a balance that disagrees with its totals', async () => {
    const { kernel, store } = await bookWithHold();
    await store.write([{ type: 'put', key: keys.balance(bob, 'USD'), value: JSON.stringify({ a: '101', r: '0', e: '0' }) }], true);
    const report = await verifyTotals(store);
    expect(report.ok).toBe(false);
    const usd = report.assets.find((f) => f.asset === 'USD')!;
    expect(usd.summed.available - usd.stored!.available).toBe(1n);
    await kernel.close();
  });

  it('a book written in an older layout (no totals, a journal entry per posting) is not opened', async () => {
    const { kernel, store, clock } = await bookWithHold();
    await kernel.close();
    await store.write([{ type: 'del', key: keys.layout }], true);
    await expect(Kernel.open({ store, clock: clock.read, ids: sequentialIds })).rejects.toThrow(`store layout 1; this ledgerd reads layout ${storeLayout}`);
  });
});
