/**
 * The heavy half of a liabilities tree's build (liabilities.ts reads the balances): each
 * leaf's salt and hash, the sort by leaf hash, and the records a proof reads (each
 * account's index and layers, the blocks of leaves, the nodes above them), then the
 * roots. It runs on the tree worker (tree-worker.ts), off the decider's thread, so it
 * never lets go of its own loop except to wait until its records are written.
 */
import { assert } from '../assert.js';
import { liabilitiesBlockLeaves } from '../constants.js';
import { liabilitiesKeys } from '../model/keys.js';
import { type LiabilitiesScope, largestPowerOfTwoBelow, leafOf, pairText, rangeSum } from './liabilities-leaves.js';
import type { PackedLeaves, Pair } from './packed-leaves.js';
import { type LiabilitiesRoot, liabilitiesLeafHash, sumNode } from './verify-proofs.js';

/** Checkpoint `scope.number`'s trees over each asset's leaves; every record goes to `put` (key, stored text), assets in sorted order. */
export async function buildTrees(scope: LiabilitiesScope, holdings: ReadonlyMap<string, PackedLeaves>, put: (key: string, value: string) => Promise<void>): Promise<Record<string, LiabilitiesRoot>> {
  const roots: Record<string, LiabilitiesRoot> = {};
  const putJson = (key: string, value: unknown) => put(key, JSON.stringify(value));
  for (const asset of [...holdings.keys()].sort()) {
    const leaves = holdings.get(asset)!;
    const n = leaves.count;
    for (let i = 0; i < n; i++) {
      const holding = leaves.holding(i);
      leaves.setPair(i, liabilitiesLeafHash(leafOf(scope, asset, holding) as unknown as Record<string, unknown>), holding.available + holding.reserved + holding.encumbered);
    }
    // Distinct accounts make distinct leaves, so no two hashes tie and the order is the hashes' alone.
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort(leaves.comparator());
    for (let index = 0; index < n; index++) {
      const h = leaves.holding(order[index]!);
      await putJson(liabilitiesKeys.account(scope.number, asset, h.account), { i: index, a: h.available.toString(), r: h.reserved.toString(), e: h.encumbered.toString() });
    }
    // The pairs of leaves lo .. lo+size in tree order (a block's at most: objects for those only).
    const pairsAt = (lo: number, size: number): Pair[] => Array.from({ length: size }, (_, k) => leaves.pair(order[lo + k]!));
    for (let block = 0; block * liabilitiesBlockLeaves < n; block++) {
      const lo = block * liabilitiesBlockLeaves;
      await putJson(liabilitiesKeys.block(scope.number, asset, block), pairsAt(lo, Math.min(liabilitiesBlockLeaves, n - lo)).map(pairText));
    }
    // The nodes above the blocks, each stored; a block's own nodes come from its leaves.
    const node = async (lo: number, size: number): Promise<Pair> => {
      if (size <= liabilitiesBlockLeaves) return rangeSum(pairsAt(lo, size), 0, size);
      const k = largestPowerOfTwoBelow(size);
      const pair = sumNode(await node(lo, k), await node(lo + k, size - k));
      await putJson(liabilitiesKeys.node(scope.number, asset, lo, size), pairText(pair));
      return pair;
    };
    const top = await node(0, n);
    assert(top.sum < 2n ** 256n, 'a liabilities total is below 2^256');
    roots[asset] = { leaves: n, root: top.hash.toString('hex'), total: top.sum.toString() };
  }
  return roots;
}
