/**
 * Consistency proofs (CONTRACT 12.1) from the stored subtrees, against a plain
 * recursive RFC 9162 PROOF written here, over journals laid out in chunks as the kernel
 * writes them and extended checkpoint by checkpoint; every proof checked by the
 * project's verifier and the independent one, and a single changed byte fails both.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Frontier, consistencyProof, extendFrontier } from '../../src/checkpoints/merkle.js';
import { consistencyHolds } from '../../src/checkpoints/verify-proofs.js';
import { keys } from '../../src/model/keys.js';
import { MemoryStore } from '../../src/store/memory.js';
import { verifyConsistency } from '../support/independent-audit.js';

const sha = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const leafOf = (i: number) => `{"seq":${i + 1},"x":"leaf ${i}"}`;

/** RFC 9162 MTH and PROOF, recursively, over leaf hashes (memoized by range). */
function rfc(leafHashes: readonly Buffer[]) {
  const memo = new Map<string, Buffer>();
  const split = (n: number) => {
    let k = 1;
    while (k * 2 < n) k *= 2;
    return k;
  };
  const mth = (lo: number, n: number): Buffer => {
    if (n === 1) return leafHashes[lo]!;
    const key = `${lo}/${n}`;
    let h = memo.get(key);
    if (h === undefined) {
      const k = split(n);
      h = sha(Buffer.from([1]), mth(lo, k), mth(lo + k, n - k));
      memo.set(key, h);
    }
    return h;
  };
  const subproof = (m: number, lo: number, n: number, b: boolean): Buffer[] => {
    if (m === n) return b ? [] : [mth(lo, n)];
    const k = split(n);
    return m <= k ? [...subproof(m, lo, k, b), mth(lo + k, n - k)] : [...subproof(m - k, lo + k, n - k, false), mth(lo, k)];
  };
  return { root: (n: number) => mth(0, n).toString('hex'), proof: (m: number, n: number) => (m === 0 ? [] : subproof(m, 0, n, true).map((h) => h.toString('hex'))) };
}

/** A journal of `n` leaves in chunks of varied sizes, with checkpoints at `sizes` (their subtrees stored). */
async function book(n: number, sizes: readonly number[]) {
  const store = new MemoryStore();
  const leaves = Array.from({ length: n }, (_, i) => leafOf(i));
  const writes = [];
  for (let first = 1, size = 1; first <= n; first += size, size = (size * 7) % 97 + 1) {
    writes.push({ type: 'put' as const, key: keys.journal(first), value: leaves.slice(first - 1, first - 1 + size).join('\n') });
  }
  await store.write(writes);
  const frontier = Frontier.empty();
  const roots: string[] = [];
  for (const size of sizes) {
    await store.write(await extendFrontier(frontier, store, size));
    roots.push(frontier.rootHex());
  }
  return { store, model: rfc(leaves.map((l) => sha(Buffer.from([0]), Buffer.from(l, 'utf8')))), roots };
}

function bothVerify(first: number, second: number, a: string, b: string, proof: string[]): boolean {
  const ours = consistencyHolds(first, second, a, b, proof);
  let theirs = true;
  try {
    verifyConsistency(first, second, a, b, proof);
  } catch {
    theirs = false;
  }
  expect(ours, `the two verifiers disagree on ${first} → ${second}`).toBe(theirs);
  return ours;
}

function flipByte(text: string, at: number): string {
  const i = at % text.length;
  return text.slice(0, i) + (text[i] === '0' ? '1' : '0') + text.slice(i + 1);
}

describe('consistency proofs', () => {
  it('match RFC 9162 for every pair of the first 20 checkpoints, verify with both verifiers, and fail on any changed byte', async () => {
    // Sizes around powers of two and the stored-subtree block (256 leaves).
    const sizes = [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 100, 255, 256, 257, 300, 511, 512, 513, 700, 1025];
    const { store, model, roots } = await book(1025, sizes);
    sizes.forEach((size, i) => expect(roots[i], `root at ${size}`).toBe(model.root(size)));
    for (let i = 0; i < sizes.length; i++) {
      for (let j = i; j < sizes.length; j++) {
        const [first, second] = [sizes[i]!, sizes[j]!];
        const proof = await consistencyProof(store, first, second);
        expect(proof, `${first} → ${second}`).toEqual(model.proof(first, second));
        expect(bothVerify(first, second, roots[i]!, roots[j]!, proof)).toBe(true);
        if (proof.length > 0) {
          const at = (first * 31 + second) % proof.length;
          const changed = proof.map((h, k) => (k === at ? flipByte(h, first + second) : h));
          expect(bothVerify(first, second, roots[i]!, roots[j]!, changed), `a changed proof ${first} → ${second}`).toBe(false);
          expect(bothVerify(first, second, roots[i]!, roots[j]!, proof.slice(1)), 'a shortened proof').toBe(false);
          expect(bothVerify(first, second, roots[i]!, roots[j]!, [...proof, proof[0]!]), 'a lengthened proof').toBe(false);
        }
        if (first < second) {
          expect(bothVerify(first, second, flipByte(roots[i]!, j), roots[j]!, proof), 'a changed first root').toBe(false);
          expect(bothVerify(first, second, roots[i]!, flipByte(roots[j]!, i), proof), 'a changed second root').toBe(false);
          if (i > 0) expect(bothVerify(sizes[i - 1]!, second, roots[i - 1]!, roots[j]!, proof), 'a wrong pair').toBe(false);
        }
      }
    }
  });

  it('match RFC 9162 for random pairs of checkpoints on a book of 10^5 entries, reading stored subtrees', async () => {
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const total = 100_000;
    const sizes = [...new Set(Array.from({ length: 40 }, () => 1 + random(total)).concat([total]))].sort((a, b) => a - b);
    const { store, model, roots } = await book(total, sizes);
    let reads = 0;
    const counting = { ...store, get: (key: string) => (reads++, store.get(key)), getMany: store.getMany.bind(store), entries: store.entries.bind(store) } as unknown as MemoryStore;
    for (let t = 0; t < 30; t++) {
      const i = random(sizes.length);
      const j = i + random(sizes.length - i);
      reads = 0;
      const proof = await consistencyProof(counting, sizes[i]!, sizes[j]!);
      expect(proof).toEqual(model.proof(sizes[i]!, sizes[j]!));
      expect(bothVerify(sizes[i]!, sizes[j]!, roots[i]!, roots[j]!, proof)).toBe(true);
      // O(log n) stored subtrees: two reads per level at most.
      expect(reads).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(total)));
    }
  });
});
