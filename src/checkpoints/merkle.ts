/**
 * RFC 6962 / RFC 9162 Merkle trees over the journal (CONTRACT 9): SHA-256, leaf =
 * H(0x00 ‖ leaf bytes), node = H(0x01 ‖ left ‖ right); leaf seq i is index i − 1.
 *
 * A running **frontier** (the roots of the perfect subtrees that make up the first n
 * leaves, largest first) is extended leaf by leaf, so a checkpoint costs in proportion
 * to the entries added since the last. Every perfect subtree of at least
 * 2^merkleStoredLevelMin leaves completed on the way is kept (`mt/<level>/<index>`),
 * so that an inclusion or consistency proof reads at most two such blocks of leaves
 * from the journal and O(log n) stored nodes, whatever the book's size.
 */
import { createHash } from 'node:crypto';
import { assert } from '../assert.js';
import { merkleStoredLevelMin } from '../constants.js';
import { journalLeaves } from '../queries/journal.js';
import type { BatchOp, ReadView } from '../store/port.js';
import { merkleKeys } from '../model/keys.js';
import { sha256 } from '../sha256.js';

/** The hash of the empty tree: SHA-256 of nothing. */
export const emptyRootHex = createHash('sha256').digest('hex');

// One call per hash, no prefix buffer per call: a checkpoint hashes each new entry and about as many nodes.

export function leafHash(leafText: string): Buffer {
  // '\u0000' is the one byte 0x00 in UTF-8.
  return sha256(`\u0000${leafText}`);
}

/** 0x01 ‖ left ‖ right, filled for each node (the hash is synchronous). */
const nodeInput = Buffer.alloc(65, 1);
export function nodeHash(left: Buffer, right: Buffer): Buffer {
  assert(left.length === 32 && right.length === 32, 'a tree node joins two SHA-256 digests');
  left.copy(nodeInput, 1);
  right.copy(nodeInput, 33);
  return sha256(nodeInput);
}

/** One perfect subtree root on the frontier: 2^level leaves. */
interface Peak {
  readonly level: number;
  readonly hash: Buffer;
}

/**
 * The frontier of a tree of `size` leaves. Its peaks follow the binary digits of
 * `size`, largest first; appending a leaf merges equal peaks like a carry.
 */
export class Frontier {
  private readonly peaks: Peak[];
  private count: number;

  private constructor(size: number, peaks: Peak[]) {
    this.count = size;
    this.peaks = peaks;
  }

  static empty(): Frontier {
    return new Frontier(0, []);
  }

  /** A frontier as stored: the tree size and the peak hashes in hex, largest first. */
  static of(size: number, peaksHex: readonly string[]): Frontier {
    const levels: number[] = [];
    for (let level = 52; level >= 0; level--) if (Math.floor(size / 2 ** level) % 2 === 1) levels.push(level);
    assert(levels.length === peaksHex.length, 'a frontier has one peak per binary digit of its size');
    return new Frontier(size, levels.map((level, i) => ({ level, hash: Buffer.from(peaksHex[i]!, 'hex') })));
  }

  get size(): number {
    return this.count;
  }

  get peaksHex(): string[] {
    return this.peaks.map((p) => p.hash.toString('hex'));
  }

  /**
   * Appends one leaf. Each perfect subtree it completes at level ≥ merkleStoredLevelMin
   * is handed to `keep` (level, index among subtrees of that level, hash).
   */
  append(leafText: string, keep: (level: number, index: number, hash: Buffer) => void): void {
    let peak: Peak = { level: 0, hash: leafHash(leafText) };
    const end = this.count + 1;
    while (this.peaks.length > 0 && this.peaks[this.peaks.length - 1]!.level === peak.level) {
      const left = this.peaks.pop()!;
      peak = { level: peak.level + 1, hash: nodeHash(left.hash, peak.hash) };
      if (peak.level >= merkleStoredLevelMin) keep(peak.level, end / 2 ** peak.level - 1, peak.hash);
    }
    this.peaks.push(peak);
    this.count = end;
  }

  /** The tree hash (RFC 6962 MTH) of the leaves so far: the peaks folded from the right. */
  rootHex(): string {
    if (this.peaks.length === 0) return emptyRootHex;
    let root = this.peaks[this.peaks.length - 1]!.hash;
    for (let i = this.peaks.length - 2; i >= 0; i--) root = nodeHash(this.peaks[i]!.hash, root);
    return root.toString('hex');
  }
}

/**
 * Extends `frontier` by journal entries `frontier.size + 1` .. `toSeq` read from `view`,
 * and returns the writes of the subtrees completed on the way.
 */
export async function extendFrontier(frontier: Frontier, view: ReadView, toSeq: number): Promise<BatchOp[]> {
  const writes: BatchOp[] = [];
  const keep = (level: number, index: number, hash: Buffer) => writes.push({ type: 'put', key: merkleKeys.node(level, index), value: hash.toString('hex') });
  for await (const leaf of journalLeaves(view, frontier.size + 1, toSeq)) frontier.append(leaf, keep);
  assert(frontier.size === toSeq, 'the frontier reached the journal position asked');
  return writes;
}

const largestPowerOfTwoBelow = (n: number) => 2 ** Math.floor(Math.log2(n - 1));

/**
 * The hash of any subtree D[lo:lo+n] of the tree of the first `size` leaves, from the
 * stored subtrees (every perfect one of at least 2^merkleStoredLevelMin leaves inside
 * the tree of `size` was stored when a checkpoint covered it) and, below them, from at
 * most 2^merkleStoredLevelMin leaves of the journal per block, each block read once.
 * A proof's O(log n) subtrees thus cost O(log n) stored reads and at most two blocks.
 */
class Subtrees {
  private readonly blockLeaves = 2 ** merkleStoredLevelMin;
  private readonly blocks = new Map<number, Buffer[]>();

  constructor(
    private readonly view: ReadView,
    private readonly size: number,
  ) {}

  async hash(lo: number, n: number): Promise<Buffer> {
    assert(n >= 1 && lo + n <= this.size, 'a subtree of the tree');
    const block = Math.floor(lo / this.blockLeaves);
    if (n <= this.blockLeaves && Math.floor((lo + n - 1) / this.blockLeaves) === block) {
      const start = block * this.blockLeaves;
      return rangeFromLeaves(await this.block(block), lo - start, n);
    }
    if (Number.isInteger(Math.log2(n)) && lo % n === 0) {
      const text = await this.view.get(merkleKeys.node(Math.log2(n), lo / n));
      assert(text !== undefined, `the subtree of ${n} leaves from ${lo} was stored by a checkpoint`);
      return Buffer.from(text, 'hex');
    }
    // A right edge that is not a perfect subtree: split as RFC 6962 does.
    const k = largestPowerOfTwoBelow(n);
    return nodeHash(await this.hash(lo, k), await this.hash(lo + k, n - k));
  }

  /** The leaf hashes of one block of the journal, cut at the tree's size. */
  private async block(block: number): Promise<Buffer[]> {
    const known = this.blocks.get(block);
    if (known !== undefined) return known;
    const start = block * this.blockLeaves;
    const hashes: Buffer[] = [];
    for await (const leaf of journalLeaves(this.view, start + 1, Math.min(start + this.blockLeaves, this.size))) hashes.push(leafHash(leaf));
    this.blocks.set(block, hashes);
    return hashes;
  }
}

/**
 * The RFC 9162 inclusion path of leaf `index` (0-based) in the tree of the first `size`
 * leaves, leaf upward, as hex.
 */
export async function inclusionProof(view: ReadView, index: number, size: number): Promise<string[]> {
  assert(Number.isSafeInteger(index) && index >= 0 && index < size, 'the leaf is in the tree');
  const subtrees = new Subtrees(view, size);
  const path: Buffer[] = [];
  // PATH(m, D[lo:lo+n]) of RFC 9162, walked from the root down, then read leaf upward.
  let lo = 0;
  let n = size;
  let m = index;
  while (n > 1) {
    const k = largestPowerOfTwoBelow(n);
    if (m < k) {
      path.push(await subtrees.hash(lo + k, n - k));
      n = k;
    } else {
      path.push(await subtrees.hash(lo, k));
      lo += k;
      m -= k;
      n -= k;
    }
  }
  return path.reverse().map((h) => h.toString('hex'));
}

/**
 * RFC 9162 2.1.4.1 PROOF(first, D[second]): the consistency proof between the trees of
 * the first `first` and `second` leaves, as hex in the RFC's order. Empty when `first`
 * is 0 or equals `second`.
 */
export async function consistencyProof(view: ReadView, first: number, second: number): Promise<string[]> {
  assert(Number.isSafeInteger(first) && Number.isSafeInteger(second) && first >= 0 && first <= second, 'the first tree is a prefix of the second');
  if (first === 0 || first === second) return [];
  const subtrees = new Subtrees(view, second);
  // SUBPROOF(m, D[lo:lo+n], b) walked from the root down: each level adds the sibling
  // it does not descend into; the RFC lists them deepest first.
  const siblings: Buffer[] = [];
  let lo = 0;
  let n = second;
  let m = first;
  let whole = true;
  while (m !== n) {
    const k = largestPowerOfTwoBelow(n);
    if (m <= k) {
      siblings.push(await subtrees.hash(lo + k, n - k));
      n = k;
    } else {
      siblings.push(await subtrees.hash(lo, k));
      lo += k;
      m -= k;
      n -= k;
      whole = false;
    }
  }
  const proof = whole ? [] : [await subtrees.hash(lo, m)];
  return [...proof, ...siblings.reverse()].map((h) => h.toString('hex'));
}

/** MTH over hashes[lo .. lo+n) of leaf hashes already in memory. */
function rangeFromLeaves(hashes: readonly Buffer[], lo: number, n: number): Buffer {
  if (n === 1) return hashes[lo]!;
  const k = largestPowerOfTwoBelow(n);
  return nodeHash(rangeFromLeaves(hashes, lo, k), rangeFromLeaves(hashes, lo + k, n - k));
}
