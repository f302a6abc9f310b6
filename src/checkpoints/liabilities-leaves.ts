/**
 * What a liabilities tree's leaves and sums are (CONTRACT 12.2), shared by the main thread's
 * reads and proofs (liabilities.ts) and the tree worker's build (liabilities-build.ts): the
 * leaf object, its salt, and the sum over a range of pairs.
 */
import { createHmac } from 'node:crypto';
import type { Holding, Pair } from './packed-leaves.js';
import { sumNode } from './verify-proofs.js';

/** The leaf object of 12.2. */
export interface LiabilitiesLeaf {
  readonly account: string;
  readonly asset: string;
  readonly available: string;
  readonly checkpoint: number;
  readonly encumbered: string;
  readonly reserved: string;
  readonly salt: string;
}

/** Whose salts and which checkpoint: the key of `DIR/liabilities.key`, this deployment's instance, the checkpoint's number. */
export interface LiabilitiesScope {
  readonly key: Buffer;
  readonly instance: number;
  readonly number: number;
}

export function liabilitiesSalt(scope: LiabilitiesScope, account: string): string {
  return createHmac('sha256', scope.key).update(`ledger-liabilities-salt:v1:${scope.instance}:${scope.number}:${account}`, 'utf8').digest('hex');
}

export function leafOf(scope: LiabilitiesScope, asset: string, h: Holding): LiabilitiesLeaf {
  return { account: h.account, asset, available: h.available.toString(), checkpoint: scope.number, encumbered: h.encumbered.toString(), reserved: h.reserved.toString(), salt: liabilitiesSalt(scope, h.account) };
}

export const largestPowerOfTwoBelow = (n: number) => 2 ** Math.floor(Math.log2(n - 1));
export const pairText = (p: Pair) => [p.hash.toString('hex'), p.sum.toString()];

/** MTH-with-sums over pairs[lo .. lo+n) already in memory. */
export function rangeSum(pairs: readonly Pair[], lo: number, n: number): Pair {
  if (n === 1) return pairs[lo]!;
  const k = largestPowerOfTwoBelow(n);
  return sumNode(rangeSum(pairs, lo, k), rangeSum(pairs, lo + k, n - k));
}
