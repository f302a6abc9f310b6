/**
 * The genesis import's filter of keys written (src/book/genesis-filter.ts): a key it does
 * not hold is never read, so it must hold every key added (a miss would let a repeated
 * account or alias through, or start a balance again from zero), and rarely one never added.
 */
import { describe, expect, it } from 'vitest';
import { KeyFilter } from '../../src/book/genesis-filter.js';

describe('the genesis key filter', () => {
  it('holds every key added, rarely one never added, and none once cleared', () => {
    const filter = new KeyFilter();
    const added = Array.from({ length: 50_000 }, (_, i) => `acct/did:ledger:acct:c${i}`);
    for (const key of added) filter.add(key);
    expect(added.filter((key) => !filter.mayHave(key))).toEqual([]);
    // Keys a character apart from those added, and keys of another space.
    const others = [...added.map((key) => `${key}x`), ...added.map((key) => key.replace('acct/', 'bal/'))];
    expect(others.filter((key) => filter.mayHave(key)).length).toBeLessThan(others.length / 1000);
    filter.clear();
    expect(added.filter((key) => filter.mayHave(key))).toEqual([]);
  });
});
