/**
 * Liabilities trees (CONTRACT 12.2): per checkpoint and asset, a Merkle sum tree over
 * every customer account's three layers at the checkpoint's journal position, leaves
 * blinded by a salt per checkpoint and account (HMAC under the liabilities key), sorted
 * by leaf hash, in RFC 6962's shape.
 *
 * Balances at the checkpoint are the balances of the snapshot the checkpoint is taken
 * from: a round writes its balances and the head in one batch, so the snapshot whose
 * head is `entry_sequence` holds every account's layers once that entry applied (and a
 * `bal/` record exists exactly for the assets an account has had an entry in).
 *
 * What a proof needs is stored (`lt/<number>/<asset>/`): each account's index and layers,
 * the leaves' (hash, sum) in blocks of `liabilitiesBlockLeaves`, and every node above a
 * block; one proof is one read of the account, then one `getMany` of at most two blocks
 * and O(log n) nodes. The salt is not stored: it is recomputed from the key.
 *
 * The tree is built in slices of at most `liabilitiesSliceMs` with the event loop served
 * between them, so the decider (on this thread) keeps deciding while a large book's trees
 * are built: a slice bounded by time, not by a count of leaves, holds a decision round's
 * step no longer on a slow or loaded machine than on a fast one. From leaves packed in buffers
 * (packed-leaves.ts) so the garbage collector has no per-leaf objects to walk; its records are written in
 * bounded batches before the checkpoint's own record, which is written last: a crash
 * mid-build leaves records that the next attempt (the same number) overwrites.
 */
import { createHmac } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { assert } from '../assert.js';
import { liabilitiesBlockLeaves, liabilitiesSliceLeaves, liabilitiesSliceMs } from '../constants.js';
import { decodeAccount, decodeBalanceText } from '../model/codec.js';
import { check, recordJson } from '../model/decode.js';
import { keys, liabilitiesKeys, prefixEnd } from '../model/keys.js';
import type { BatchOp, ReadView } from '../store/port.js';
import { type Holding, PackedLeaves, type Pair } from './packed-leaves.js';
import { type LiabilitiesRoot, liabilitiesLeafHash, sumNode } from './verify-proofs.js';

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

function leafOf(scope: LiabilitiesScope, asset: string, h: Holding): LiabilitiesLeaf {
  return { account: h.account, asset, available: h.available.toString(), checkpoint: scope.number, encumbered: h.encumbered.toString(), reserved: h.reserved.toString(), salt: liabilitiesSalt(scope, h.account) };
}

const largestPowerOfTwoBelow = (n: number) => 2 ** Math.floor(Math.log2(n - 1));
const pairText = (p: Pair) => [p.hash.toString('hex'), p.sum.toString()];
const pairOf = (j: unknown, what: string): Pair => {
  const ok = Array.isArray(j) && j.length === 2 && typeof j[0] === 'string' && /^[0-9a-f]{64}$/.test(j[0]) && typeof j[1] === 'string' && /^(0|[1-9][0-9]*)$/.test(j[1]);
  assert(ok, `${what} holds a (hash, sum)`);
  return { hash: Buffer.from(j[0], 'hex'), sum: BigInt(j[1]) };
};

/** MTH-with-sums over pairs[lo .. lo+n) already in memory. */
function rangeSum(pairs: readonly Pair[], lo: number, n: number): Pair {
  if (n === 1) return pairs[lo]!;
  const k = largestPowerOfTwoBelow(n);
  return sumNode(rangeSum(pairs, lo, k), rangeSum(pairs, lo + k, n - k));
}

/** The build's hold on the event loop: `due` once it has held it `liabilitiesSliceMs` since it last let go (the clock decides when the build yields, never what it builds). */
class LoopTurns {
  private heldSinceMs = performance.now();

  get due(): boolean {
    return performance.now() - this.heldSinceMs >= liabilitiesSliceMs;
  }

  async letGo(): Promise<void> {
    await yieldToLoop();
    this.heldSinceMs = performance.now();
  }
}

/** Checks the clock every this many merged leaves (a comparison is far cheaper than reading it). */
const mergeCheckEvery = 256;

/**
 * The leaves' indexes in ascending order of their hashes: runs of `liabilitiesSliceLeaves`
 * sorted, then merged two at a time, the event loop served whenever a slice's time is up.
 */
async function sortedOrder(leaves: PackedLeaves, turns: LoopTurns): Promise<Uint32Array> {
  const n = leaves.count;
  const compare = leaves.comparator();
  let order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  for (let lo = 0; lo < n; lo += liabilitiesSliceLeaves) {
    order.subarray(lo, Math.min(n, lo + liabilitiesSliceLeaves)).sort(compare);
    if (turns.due) await turns.letGo();
  }
  let other = new Uint32Array(n);
  for (let width = liabilitiesSliceLeaves; width < n; width *= 2) {
    let k = 0;
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(n, lo + width);
      const hi = Math.min(n, lo + 2 * width);
      let [x, y] = [lo, mid];
      while (x < mid || y < hi) {
        // Ties keep the left run's leaf first, as a stable sort does.
        other[k++] = y >= hi || (x < mid && compare(order[x]!, order[y]!) <= 0) ? order[x++]! : order[y++]!;
        if (k % mergeCheckEvery === 0 && turns.due) await turns.letGo();
      }
    }
    [order, other] = [other, order];
  }
  return order;
}

/** Every customer account's layers per asset in `view`, read from `bal/` with the accounts' kinds, a slice at a time. */
async function customerHoldings(view: ReadView, turns: LoopTurns): Promise<Map<string, PackedLeaves>> {
  const byAsset = new Map<string, PackedLeaves>();
  let slice: [string, string][] = [];
  const take = async () => {
    const accounts = [...new Set(slice.map(([key]) => key.slice(keys.balancePrefix.length, key.lastIndexOf('/'))))];
    const texts = await view.getMany(accounts.map(keys.account));
    const customers = new Set(accounts.filter((_, i) => texts[i] !== undefined && decodeAccount(texts[i]!).kind === 'customer'));
    for (const [key, value] of slice) {
      const account = key.slice(keys.balancePrefix.length, key.lastIndexOf('/'));
      if (!customers.has(account)) continue;
      const asset = key.slice(key.lastIndexOf('/') + 1);
      const b = decodeBalanceText(value);
      assert(b.available >= 0n && b.reserved >= 0n && b.encumbered >= 0n, `a customer account's layers are never below zero (${key})`);
      let leaves = byAsset.get(asset);
      if (leaves === undefined) byAsset.set(asset, (leaves = new PackedLeaves()));
      leaves.push({ account, ...b });
      if (turns.due) await turns.letGo();
    }
    slice = [];
  };
  for await (const entry of view.entries({ gte: keys.balancePrefix, lt: prefixEnd(keys.balancePrefix), limit: Number.MAX_SAFE_INTEGER })) {
    slice.push(entry);
    if (slice.length === liabilitiesSliceLeaves) await take();
  }
  await take();
  return byAsset;
}

/**
 * Builds checkpoint `scope.number`'s trees from the balances in `view` (the snapshot
 * its journal position was read from). Its records go to `write` in bounded batches;
 * resolves with the root object per asset (12.2), assets in no customer's hands left out.
 */
export async function buildLiabilities(view: ReadView, scope: LiabilitiesScope, write: (ops: BatchOp[]) => Promise<void>): Promise<Record<string, LiabilitiesRoot>> {
  const roots: Record<string, LiabilitiesRoot> = {};
  const turns = new LoopTurns();
  let ops: BatchOp[] = [];
  const put = async (key: string, value: unknown) => {
    ops.push({ type: 'put', key, value: JSON.stringify(value) });
    if (ops.length >= liabilitiesSliceLeaves) {
      await write(ops);
      ops = [];
    } else if (turns.due) await turns.letGo();
  };
  const holdings = await customerHoldings(view, turns);
  for (const asset of [...holdings.keys()].sort()) {
    const leaves = holdings.get(asset)!;
    const n = leaves.count;
    for (let i = 0; i < n; i++) {
      const holding = leaves.holding(i);
      leaves.setPair(i, liabilitiesLeafHash(leafOf(scope, asset, holding) as unknown as Record<string, unknown>), holding.available + holding.reserved + holding.encumbered);
      if (turns.due) await turns.letGo();
    }
    const order = await sortedOrder(leaves, turns);
    for (let index = 0; index < n; index++) {
      const h = leaves.holding(order[index]!);
      await put(liabilitiesKeys.account(scope.number, asset, h.account), { i: index, a: h.available.toString(), r: h.reserved.toString(), e: h.encumbered.toString() });
    }
    // The pairs of leaves lo .. lo+size in tree order (a block's at most: objects for those only).
    const pairsAt = (lo: number, size: number): Pair[] => Array.from({ length: size }, (_, k) => leaves.pair(order[lo + k]!));
    for (let block = 0; block * liabilitiesBlockLeaves < n; block++) {
      const lo = block * liabilitiesBlockLeaves;
      await put(liabilitiesKeys.block(scope.number, asset, block), pairsAt(lo, Math.min(liabilitiesBlockLeaves, n - lo)).map(pairText));
    }
    // The nodes above the blocks, each stored; a block's own nodes come from its leaves.
    const node = async (lo: number, size: number): Promise<Pair> => {
      if (size <= liabilitiesBlockLeaves) {
        if (turns.due) await turns.letGo();
        return rangeSum(pairsAt(lo, size), 0, size);
      }
      const k = largestPowerOfTwoBelow(size);
      const pair = sumNode(await node(lo, k), await node(lo + k, size - k));
      await put(liabilitiesKeys.node(scope.number, asset, lo, size), pairText(pair));
      return pair;
    };
    const top = await node(0, n);
    assert(top.sum < 2n ** 256n, 'a liabilities total is below 2^256');
    roots[asset] = { leaves: n, root: top.hash.toString('hex'), total: top.sum.toString() };
  }
  if (ops.length > 0) await write(ops);
  return roots;
}

/** A holder's proof (12.4): its leaf, index and sum path leaf upward; undefined when the account has no leaf in the tree. */
export async function liabilitiesProof(view: ReadView, scope: LiabilitiesScope, asset: string, root: LiabilitiesRoot, account: string): Promise<{ leaf: LiabilitiesLeaf; index: number; path: { hash: string; sum: string }[] } | undefined> {
  const accountKey = liabilitiesKeys.account(scope.number, asset, account);
  const text = await view.get(accountKey);
  if (text === undefined) return undefined;
  const j = recordJson(text, accountKey);
  const index = check.integer(j, 'i', accountKey);
  const held = { account, available: check.decimal(j, 'a', accountKey), reserved: check.decimal(j, 'r', accountKey), encumbered: check.decimal(j, 'e', accountKey) };
  assert(index < root.leaves, `${accountKey} is inside its tree`);
  // PATH(index, D[n]) of RFC 9162, walked from the root down: the siblings' ranges.
  const siblings: [number, number][] = [];
  let lo = 0;
  let n = root.leaves;
  let m = index;
  while (n > 1) {
    const k = largestPowerOfTwoBelow(n);
    if (m < k) {
      siblings.push([lo + k, n - k]);
      n = k;
    } else {
      siblings.push([lo, k]);
      lo += k;
      m -= k;
      n -= k;
    }
  }
  const blockOf = (at: number) => Math.floor(at / liabilitiesBlockLeaves);
  const blocks = [...new Set([blockOf(index), ...siblings.filter(([, size]) => size <= liabilitiesBlockLeaves).map(([start]) => blockOf(start))])];
  const nodes = siblings.filter(([, size]) => size > liabilitiesBlockLeaves);
  const texts = await view.getMany([...blocks.map((b) => liabilitiesKeys.block(scope.number, asset, b)), ...nodes.map(([start, size]) => liabilitiesKeys.node(scope.number, asset, start, size))]);
  const blockPairs = new Map<number, Pair[]>();
  blocks.forEach((b, i) => {
    const what = liabilitiesKeys.block(scope.number, asset, b);
    assert(texts[i] !== undefined, `${what} was stored with its tree`);
    blockPairs.set(b, (JSON.parse(texts[i]!) as unknown[]).map((p) => pairOf(p, what)));
  });
  const nodePairs = new Map<string, Pair>();
  nodes.forEach(([start, size], i) => {
    const what = liabilitiesKeys.node(scope.number, asset, start, size);
    const stored = texts[blocks.length + i];
    assert(stored !== undefined, `${what} was stored with its tree`);
    nodePairs.set(`${start}/${size}`, pairOf(JSON.parse(stored), what));
  });
  const leaf = leafOf(scope, asset, held);
  // A leaf whose hash is not the stored one: the salts' key is not the one the tree was built under.
  if (!blockPairs.get(blockOf(index))![index % liabilitiesBlockLeaves]!.hash.equals(liabilitiesLeafHash(leaf as unknown as Record<string, unknown>))) return undefined;
  const pairAt = ([start, size]: [number, number]): Pair => {
    if (size > liabilitiesBlockLeaves) return nodePairs.get(`${start}/${size}`)!;
    const b = blockOf(start);
    return rangeSum(blockPairs.get(b)!, start - b * liabilitiesBlockLeaves, size);
  };
  const path = siblings.reverse().map((s) => {
    const p = pairAt(s);
    return { hash: p.hash.toString('hex'), sum: p.sum.toString() };
  });
  return { leaf, index, path };
}
