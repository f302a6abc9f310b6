/**
 * The running frontier and inclusion proofs against a plain recursive RFC 6962 tree
 * hash (written here from the RFC, nothing of src/ in it), over journals laid out in
 * chunks as the kernel writes them, for every tree size around the stored-subtree
 * boundaries.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Frontier, extendFrontier, inclusionProof } from '../../src/checkpoints/merkle.js';
import { rootFromInclusionPath as rootFromPath } from '../../src/disclosures/verify.js';
import { merkleStoredLevelMin } from '../../src/constants.js';
import { MemoryStore } from '../../src/store/memory.js';
import { keys } from '../../src/model/keys.js';

const sha = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const leafOf = (i: number) => `{"seq":${i + 1},"x":"leaf ${i}"}`;
function mth(leaves: readonly string[]): Buffer {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return sha(Buffer.from([0]), Buffer.from(leaves[0]!, 'utf8'));
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}
/** RFC 9162 PATH(m, D[n]), leaf upward. */
function path(m: number, leaves: readonly string[]): string[] {
  if (leaves.length <= 1) return [];
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return m < k ? [...path(m, leaves.slice(0, k)), mth(leaves.slice(k)).toString('hex')] : [...path(m - k, leaves.slice(k)), mth(leaves.slice(0, k)).toString('hex')];
}

/** A journal of `n` leaves in chunks of varied sizes (as rounds write them). */
async function journal(n: number): Promise<{ store: MemoryStore; leaves: string[] }> {
  const store = new MemoryStore();
  const leaves = Array.from({ length: n }, (_, i) => leafOf(i));
  const writes = [];
  for (let first = 1, size = 1; first <= n; first += size, size = (size * 7) % 97 + 1) {
    writes.push({ type: 'put' as const, key: keys.journal(first), value: leaves.slice(first - 1, first - 1 + size).join('\n') });
  }
  await store.write(writes, false);
  return { store, leaves };
}

describe('the Merkle frontier', () => {
  const block = 2 ** merkleStoredLevelMin;
  const total = 3 * block + 37;

  it('gives the RFC 6962 root at every size when extended in steps, and stores the subtrees it completes', async () => {
    const { store, leaves } = await journal(total);
    const frontier = Frontier.empty();
    expect(frontier.rootHex()).toBe(mth([]).toString('hex'));
    for (const to of [1, 2, 3, 5, 100, block - 1, block, block + 1, 2 * block, 3 * block + 1, total]) {
      await store.write(await extendFrontier(frontier, store, to), false);
      expect(frontier.rootHex(), `size ${to}`).toBe(mth(leaves.slice(0, to)).toString('hex'));
      // Stored and restored, it goes on the same.
      const again = Frontier.of(frontier.size, frontier.peaksHex);
      expect(again.rootHex()).toBe(frontier.rootHex());
    }
    expect(await store.get(`mt/08/${'0'.repeat(15)}2`)).toBe(mth(leaves.slice(2 * block, 3 * block)).toString('hex'));
    expect(await store.get(`mt/09/${'0'.repeat(16)}`)).toBe(mth(leaves.slice(0, 2 * block)).toString('hex'));
  });

  it('proves inclusion of any leaf in any tree size it covered, as RFC 9162 does, and the proof leads back to the root', async () => {
    const { store, leaves } = await journal(total);
    const frontier = Frontier.empty();
    await store.write(await extendFrontier(frontier, store, total), false);
    for (const size of [1, 2, 7, block, block + 1, 2 * block + 3, total]) {
      const root = mth(leaves.slice(0, size)).toString('hex');
      for (const index of new Set([0, 1, size >> 1, size - 2, size - 1].filter((i) => i >= 0 && i < size))) {
        const proof = await inclusionProof(store, index, size);
        expect(proof, `leaf ${index} of ${size}`).toEqual(path(index, leaves.slice(0, size)));
        expect(rootFromPath(leaves[index]!, index, size, proof)).toBe(root);
        expect(rootFromPath(leaves[index]! + ' ', index, size, proof)).not.toBe(root);
        if (proof.length > 0) expect(rootFromPath(leaves[index]!, index, size, proof.slice(1))).not.toBe(root);
        expect(rootFromPath(leaves[index]!, index + 1, size, proof)).not.toBe(root);
      }
    }
  });
});
