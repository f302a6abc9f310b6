/**
 * The liabilities build keeps its leaves packed (src/checkpoints/packed-leaves.ts): the
 * sort by leaf hash runs over several slices that are then merged, and each leaf's sum is
 * held in fixed-width bytes. On a book of more leaves than three slices, with layers near
 * 2^128 (so sums pass 2^128), the root and total equal those of an independent build
 * from the balances (test/support/independent-audit.ts), and every holder's record names
 * the leaf's place in that order.
 */
import { describe, expect, it } from 'vitest';
import { liabilitiesSalt } from '../../src/checkpoints/liabilities-leaves.js';
import { buildLiabilities } from '../../src/checkpoints/liabilities.js';
import { liabilitiesSliceLeaves } from '../../src/constants.js';
import { encodeAccount, encodeBalance } from '../../src/model/codec.js';
import { keys, liabilitiesKeys } from '../../src/model/keys.js';
import type { AccountId, IdentityId } from '../../src/model/values.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';
import { liabilitiesRootOf } from '../support/independent-audit.js';

const top = (1n << 128n) - 1n;

describe('liabilities trees from packed leaves', () => {
  it('give the independent root and total over several sorted slices, with sums past 2^128', async () => {
    const customers = 3 * liabilitiesSliceLeaves + 77;
    const store = new MemoryStore();
    const writes: BatchOp[] = [];
    const layers = new Map<string, { available: bigint; reserved: bigint; encumbered: bigint }>();
    for (let i = 0; i < customers + 10; i++) {
      const id = `did:ledger:acct:p${i}` as AccountId;
      // The last ten are treasury accounts: no leaf.
      const kind = i < customers ? 'customer' : 'treasury';
      writes.push({ type: 'put', key: keys.account(id), value: encodeAccount({ id, owner: `did:ledger:id:p${i}` as IdentityId, kind, custody: 'delegated', status: 'active', openedAtMs: 1, epoch: 0, treasuryLimits: {} }) });
      const b = { available: i % 3 === 0 ? top - BigInt(i) : BigInt(i), reserved: i % 5 === 0 ? top : 0n, encumbered: BigInt(i % 7) };
      writes.push({ type: 'put', key: keys.balance(id, 'USD'), value: JSON.stringify(encodeBalance(b)) });
      if (kind === 'customer') layers.set(id, b);
    }
    await store.write(writes);
    const scope = { key: Buffer.alloc(32, 5), instance: 2, number: 9 };
    const records = new MemoryStore();
    const roots = await buildLiabilities(store, scope, (ops) => records.write(ops));

    const leaves = [...layers].map(([account, b]) => ({
      account, asset: 'USD', available: b.available.toString(), checkpoint: scope.number, encumbered: b.encumbered.toString(), reserved: b.reserved.toString(), salt: liabilitiesSalt(scope, account),
    }));
    expect(roots).toEqual({ USD: liabilitiesRootOf(leaves) });
    expect(BigInt(roots.USD!.total)).toBeGreaterThan(top);
    // Each record's index is a distinct place in the tree, and its layers are the account's.
    const seen = new Set<number>();
    for (const [account, b] of layers) {
      const record = JSON.parse((await records.get(liabilitiesKeys.account(scope.number, 'USD', account)))!);
      expect({ a: record.a, r: record.r, e: record.e }).toEqual({ a: b.available.toString(), r: b.reserved.toString(), e: b.encumbered.toString() });
      seen.add(record.i);
    }
    expect(seen.size).toBe(customers);
    expect(Math.max(...seen)).toBe(customers - 1);
  });
});
