/**
 * RFC 6962 / RFC 9162 Merkle trees over the journal (CONTRACT 9): SHA-256, leaf =
 * H(0x00 ‖ leaf bytes), node = H(0x01 ‖ left ‖ right); leaf seq i is index i − 1.
 *
 * A running **frontier** (the roots of the perfect subtrees that make up the first n
 * leaves, largest first) is extended leaf by leaf, so a checkpoint costs in proportion
 * to the entries added since the last. Every perfect subtree of at least
 * 2^merkleStoredLevelMin leaves completed on the way is kept (`mt/<level>/<index>`),
 * so that an inclusion proof reads at most one such block of leaves from the journal
 * and O(log n) stored nodes, whatever the book's size.
 */
import { createHash } from 'node:crypto';
import { assert } from '../assert.js';
import { merkleStoredLevelMin } from '../constants.js';
import { journalLeaves } from '../queries/journal.js';
import type { BatchOp, ReadView } from '../store/port.js';
import { merkleKeys } from '../model/keys.js';

/** The hash of the empty tree: SHA-256 of nothing. */
export const emptyRootHex = createHash('sha256').digest('hex');

export function leafHash(leafText: string): Buffer {
  return createHash('sha256').update(Buffer.from([0])).update(leafText, 'utf8').digest();
}

export function nodeHash(left: Buffer, right: Buffer): Buffer {
  return createHash('sha256').update(Buffer.from([1])).update(left).update(right).digest();
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
 * The RFC 9162 inclusion path of leaf `index` (0-based) in the tree of the first `size`
 * leaves, leaf upward, as hex. Reads the block of 2^merkleStoredLevelMin leaves around
 * the leaf from the journal and the stored subtrees for everything above it; every
 * subtree inside the tree of `size` leaves was stored when a checkpoint covered it.
 */
export async function inclusionProof(view: ReadView, index: number, size: number): Promise<string[]> {
  assert(Number.isSafeInteger(index) && index >= 0 && index < size, 'the leaf is in the tree');
  const blockLeaves = 2 ** merkleStoredLevelMin;
  const blockStart = Math.floor(index / blockLeaves) * blockLeaves;
  const blockEnd = Math.min(blockStart + blockLeaves, size);
  const hashes: Buffer[] = [];
  for await (const leaf of journalLeaves(view, blockStart + 1, blockEnd)) hashes.push(leafHash(leaf));
  const hashOf = async (lo: number, n: number): Promise<Buffer> => {
    if (lo >= blockStart && lo + n <= blockEnd) return rangeFromLeaves(hashes, lo - blockStart, n);
    if (n >= blockLeaves && Number.isInteger(Math.log2(n)) && lo % n === 0) {
      const text = await view.get(merkleKeys.node(Math.log2(n), lo / n));
      assert(text !== undefined, `the subtree of ${n} leaves from ${lo} was stored by a checkpoint`);
      return Buffer.from(text, 'hex');
    }
    // The tail of a right edge, short of a stored subtree: from its own leaves.
    if (n <= blockLeaves) {
      const tail: Buffer[] = [];
      for await (const leaf of journalLeaves(view, lo + 1, lo + n)) tail.push(leafHash(leaf));
      return rangeFromLeaves(tail, 0, n);
    }
    // A right edge that is not a perfect subtree: split as RFC 6962 does.
    const k = largestPowerOfTwoBelow(n);
    return nodeHash(await hashOf(lo, k), await hashOf(lo + k, n - k));
  };
  const path: Buffer[] = [];
  // PATH(m, D[lo:lo+n]) of RFC 9162, walked from the root down, then read leaf upward.
  let lo = 0;
  let n = size;
  let m = index;
  while (n > 1) {
    const k = largestPowerOfTwoBelow(n);
    if (m < k) {
      path.push(await hashOf(lo + k, n - k));
      n = k;
    } else {
      path.push(await hashOf(lo, k));
      lo += k;
      m -= k;
      n -= k;
    }
  }
  return path.reverse().map((h) => h.toString('hex'));
}

/** MTH over hashes[lo .. lo+n) of leaf hashes already in memory. */
function rangeFromLeaves(hashes: readonly Buffer[], lo: number, n: number): Buffer {
  if (n === 1) return hashes[lo]!;
  const k = largestPowerOfTwoBelow(n);
  return nodeHash(rangeFromLeaves(hashes, lo, k), rangeFromLeaves(hashes, lo + k, n - k));
}
