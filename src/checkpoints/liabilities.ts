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
 * The tree is built in slices with the event loop served between them, so the decider
 * keeps deciding while a large book's trees are built; its records are written in
 * bounded batches before the checkpoint's own record, which is written last: a crash
 * mid-build leaves records that the next attempt (the same number) overwrites.
 */
import { createHmac } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { assert } from '../assert.js';
import { liabilitiesBlockLeaves, liabilitiesSliceLeaves } from '../constants.js';
import { decodeAccount, decodeBalanceText } from '../model/codec.js';
import { check, recordJson } from '../model/decode.js';
import { keys, liabilitiesKeys, prefixEnd } from '../model/keys.js';
import type { BatchOp, ReadView } from '../store/port.js';
import { type LiabilitiesRoot, liabilitiesLeafHash, sumNode } from './verify-proofs.js';

interface Pair {
  readonly hash: Buffer;
  readonly sum: bigint;
}

interface Holding {
  readonly account: string;
  readonly available: bigint;
  readonly reserved: bigint;
  readonly encumbered: bigint;
}

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

const byHex = (a: { hex: string }, b: { hex: string }) => (a.hex < b.hex ? -1 : a.hex > b.hex ? 1 : 0);

/**
 * `items` in ascending order of `hex` (lowercase hex orders as its bytes do, and compares
 * several times cheaper than Buffer.compare): runs of `liabilitiesSliceLeaves` sorted, then
 * merged two at a time, the event loop served between each step, so no step holds it
 * longer than one linear merge.
 */
async function sortedByHex<T extends { hex: string }>(items: readonly T[]): Promise<T[]> {
  let runs: T[][] = [];
  for (let i = 0; i < items.length; i += liabilitiesSliceLeaves) {
    runs.push(items.slice(i, i + liabilitiesSliceLeaves).sort(byHex));
    await yieldToLoop();
  }
  while (runs.length > 1) {
    const merged: T[][] = [];
    for (let i = 0; i < runs.length; i += 2) {
      const [a, b] = [runs[i]!, runs[i + 1]];
      if (b === undefined) {
        merged.push(a);
        continue;
      }
      const out: T[] = new Array<T>(a.length + b.length);
      let [x, y, k] = [0, 0, 0];
      while (x < a.length && y < b.length) out[k++] = byHex(a[x]!, b[y]!) <= 0 ? a[x++]! : b[y++]!;
      while (x < a.length) out[k++] = a[x++]!;
      while (y < b.length) out[k++] = b[y++]!;
      merged.push(out);
      await yieldToLoop();
    }
    runs = merged;
  }
  return runs[0] ?? [];
}

/** Every customer account's layers per asset in `view`, read from `bal/` with the accounts' kinds, a slice at a time. */
async function customerHoldings(view: ReadView): Promise<Map<string, Holding[]>> {
  const byAsset = new Map<string, Holding[]>();
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
      let list = byAsset.get(asset);
      if (list === undefined) byAsset.set(asset, (list = []));
      list.push({ account, ...b });
    }
    slice = [];
    await yieldToLoop();
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
  let ops: BatchOp[] = [];
  const put = async (key: string, value: unknown) => {
    ops.push({ type: 'put', key, value: JSON.stringify(value) });
    if (ops.length >= liabilitiesSliceLeaves) {
      await write(ops);
      ops = [];
    }
  };
  const holdings = await customerHoldings(view);
  for (const asset of [...holdings.keys()].sort()) {
    const leaves: { holding: Holding; pair: Pair; hex: string }[] = [];
    for (const [i, holding] of holdings.get(asset)!.entries()) {
      const hash = liabilitiesLeafHash(leafOf(scope, asset, holding) as unknown as Record<string, unknown>);
      leaves.push({ holding, pair: { hash, sum: holding.available + holding.reserved + holding.encumbered }, hex: hash.toString('hex') });
      if (i % liabilitiesSliceLeaves === liabilitiesSliceLeaves - 1) await yieldToLoop();
    }
    const sorted = await sortedByHex(leaves);
    const pairs = sorted.map((l) => l.pair);
    for (const [index, { holding: h }] of sorted.entries()) {
      await put(liabilitiesKeys.account(scope.number, asset, h.account), { i: index, a: h.available.toString(), r: h.reserved.toString(), e: h.encumbered.toString() });
    }
    for (let block = 0; block * liabilitiesBlockLeaves < pairs.length; block++) {
      await put(liabilitiesKeys.block(scope.number, asset, block), pairs.slice(block * liabilitiesBlockLeaves, (block + 1) * liabilitiesBlockLeaves).map(pairText));
    }
    // The nodes above the blocks, each stored; a block's own nodes come from its leaves.
    let blocksDone = 0;
    const node = async (lo: number, n: number): Promise<Pair> => {
      if (n <= liabilitiesBlockLeaves) {
        if (++blocksDone % (liabilitiesSliceLeaves / liabilitiesBlockLeaves) === 0) await yieldToLoop();
        return rangeSum(pairs, lo, n);
      }
      const k = largestPowerOfTwoBelow(n);
      const pair = sumNode(await node(lo, k), await node(lo + k, n - k));
      await put(liabilitiesKeys.node(scope.number, asset, lo, n), pairText(pair));
      return pair;
    };
    const top = await node(0, pairs.length);
    assert(top.sum < 2n ** 256n, 'a liabilities total is below 2^256');
    roots[asset] = { leaves: pairs.length, root: top.hash.toString('hex'), total: top.sum.toString() };
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
