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
 * The main thread only reads the balances, in slices of at most `liabilitiesSliceMs` with
 * the event loop served between them, and writes the records; a worker thread
 * (tree-thread.ts, liabilities-build.ts) hashes, sorts and makes the records, so the
 * decider (on the main thread) keeps deciding while a large book's trees are built and
 * its garbage collector never sees the build's leaves. The records are written in bounded
 * batches before the checkpoint's own record, which is written last: a crash mid-build
 * leaves records that the next attempt (the same number) overwrites.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { assert } from '../assert.js';
import { liabilitiesBlockLeaves, liabilitiesSliceLeaves, liabilitiesSliceMs } from '../constants.js';
import { decodeAccount, decodeBalanceText } from '../model/codec.js';
import { check, recordJson } from '../model/decode.js';
import { keys, liabilitiesKeys, prefixEnd } from '../model/keys.js';
import type { BatchOp, ReadView } from '../store/port.js';
import { type LiabilitiesLeaf, type LiabilitiesScope, largestPowerOfTwoBelow, leafOf, rangeSum } from './liabilities-leaves.js';
import type { Pair } from './packed-leaves.js';
import { TreeThread } from './tree-thread.js';
import { type LiabilitiesRoot, liabilitiesLeafHash } from './verify-proofs.js';

const pairOf = (j: unknown, what: string): Pair => {
  const ok = Array.isArray(j) && j.length === 2 && typeof j[0] === 'string' && /^[0-9a-f]{64}$/.test(j[0]) && typeof j[1] === 'string' && /^(0|[1-9][0-9]*)$/.test(j[1]);
  assert(ok, `${what} holds a (hash, sum)`);
  return { hash: Buffer.from(j[0], 'hex'), sum: BigInt(j[1]) };
};

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

/** Sends every customer account's layers per asset in `view` to `tree`, read from `bal/` with the accounts' kinds, a slice at a time. */
async function sendHoldings(view: ReadView, tree: TreeThread): Promise<void> {
  const turns = new LoopTurns();
  let slice: [string, string][] = [];
  const take = async () => {
    const accounts = [...new Set(slice.map(([key]) => key.slice(keys.balancePrefix.length, key.lastIndexOf('/'))))];
    const texts = await view.getMany(accounts.map(keys.account));
    const customers = new Set(accounts.filter((account, i) => texts[i] !== undefined && decodeAccount(texts[i]!, keys.account(account)).kind === 'customer'));
    const byAsset = new Map<string, string[]>();
    for (const [key, value] of slice) {
      const account = key.slice(keys.balancePrefix.length, key.lastIndexOf('/'));
      if (!customers.has(account)) continue;
      const asset = key.slice(key.lastIndexOf('/') + 1);
      const b = decodeBalanceText(value);
      assert(b.available >= 0n && b.reserved >= 0n && b.encumbered >= 0n, `a customer account's layers are never below zero (${key})`);
      let lines = byAsset.get(asset);
      if (lines === undefined) byAsset.set(asset, (lines = []));
      lines.push(account, b.available.toString(), b.reserved.toString(), b.encumbered.toString());
    }
    for (const [asset, lines] of byAsset) tree.send(asset, lines);
    slice = [];
    if (turns.due) await turns.letGo();
  };
  for await (const entry of view.entries({ gte: keys.balancePrefix, lt: prefixEnd(keys.balancePrefix), limit: Number.MAX_SAFE_INTEGER })) {
    slice.push(entry);
    if (slice.length === liabilitiesSliceLeaves) await take();
  }
  await take();
}

/**
 * Builds checkpoint `scope.number`'s trees from the balances in `view` (the snapshot
 * its journal position was read from). Its records go to `write` in bounded batches;
 * resolves with the root object per asset (12.2), assets in no customer's hands left out.
 * `signal` abandons it (ledgerd closing): it fails at once.
 */
export async function buildLiabilities(view: ReadView, scope: LiabilitiesScope, write: (ops: BatchOp[]) => Promise<void>, signal: AbortSignal = new AbortController().signal): Promise<Record<string, LiabilitiesRoot>> {
  const tree = new TreeThread(scope, write, signal);
  try {
    await sendHoldings(view, tree);
    return await tree.finish();
  } finally {
    await tree.end();
  }
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
