import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/memory.js';
import type { Range, Snapshot } from '../../src/store/port.js';
import type { AccountId } from '../../src/model/values.js';
import { acct, customersGenesis, openBook, operator, submission, transfer } from '../support/book.js';

/** A store whose snapshots count the index entries (`aa/`) their iterators hand out. */
class CountingStore extends MemoryStore {
  indexEntriesRead = 0;
  override snapshot(): Snapshot {
    const snap = super.snapshot();
    const entries = (range: Range): AsyncIterable<[string, string]> => {
      const counted = async function* (this: CountingStore) {
        for await (const entry of snap.entries(range)) {
          if (entry[0].startsWith('aa/')) this.indexEntriesRead++;
          yield entry;
        }
      };
      return counted.call(this);
    };
    return { ...snap, entries };
  }
}

// A movements page seeks to where it starts and reads what it shows: its cost must not
// grow with the account's history past the page.
describe('movements pages read what they show', () => {
  it('a page of 5 of an account with 301 postings reads 6 index entries (the page and the next for its cursor)', async () => {
    const store = new CountingStore();
    const { kernel } = await openBook({ store, genesis: customersGenesis({ alice: 1_000_000n, bob: 0n }) });
    for (let i = 0; i < 300; i++) void kernel.submit(submission(operator, transfer('did:ledger:acct:alice', 'did:ledger:acct:bob', 1n), { clientKey: `t-${i}` }));
    await kernel.idle();
    const view = await kernel.openView();
    try {
      const query = { account: acct('did:ledger:acct:alice') as AccountId, identity: null, limit: 5, fromMs: null, toMs: null, asset: null, direction: null, cursor: null };
      store.indexEntriesRead = 0;
      const first = await view.movements(operator, query);
      expect(first.movements).toHaveLength(5);
      expect(first.next).not.toBeNull();
      expect(store.indexEntriesRead).toBe(6);
      store.indexEntriesRead = 0;
      const second = await view.movements(operator, { ...query, cursor: first.next });
      expect(second.movements[0]!.seq).toBeGreaterThan(first.movements[4]!.seq);
      expect(store.indexEntriesRead).toBe(6);
    } finally {
      await view.close();
      await kernel.close();
    }
  });
});
