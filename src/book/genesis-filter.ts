/**
 * The keys a genesis import has written in one key space, as a Bloom filter of fixed size
 * (genesisKeyFilterBits): "not written" is certain, so the import reads the store only for
 * a key the filter may hold (a repeated entry, an account's second opening in an asset,
 * or a false positive, ~0.4% at genesisEntriesMax keys). Each such read was one of the
 * import's three store reads per account; the store starts empty, so nearly all were misses.
 */
import { genesisKeyFilterBits, genesisKeyFilterProbes } from '../constants.js';

/**
 * A key's probes all fall in one block of 512 bits (a 64-byte cache line): one cache miss
 * per lookup instead of one per probe, which over 16 MiB was most of the filter's time.
 */
const blockWords = 16;
const blockMask = (genesisKeyFilterBits >>> 9) - 1;
const blockBits = Math.log2(genesisKeyFilterBits >>> 9);

export class KeyFilter {
  private readonly words = new Int32Array(genesisKeyFilterBits >>> 5);
  private h1 = 0;
  private h2 = 0;
  /** The key h1 and h2 are of: an entry's key is looked up, then added, one after the other. */
  private hashed: string | null = null;

  clear(): void {
    this.words.fill(0);
  }

  /** Two 32-bit hashes of the key's UTF-16 units (FNV-1a, and a multiplicative one made odd), probes h1 + i·h2. */
  private hash(key: string): void {
    if (key === this.hashed) return;
    this.hashed = key;
    let h1 = 0x811c9dc5;
    let h2 = 0x27d4eb2f;
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 + c, 0x5bd1e995) ^ (h2 >>> 15);
    }
    this.h1 = h1;
    this.h2 = (h2 ^ (h2 >>> 13)) | 1;
  }

  add(key: string): void {
    this.probe(key, true);
  }

  /** False only for a key never added since the last clear. */
  mayHave(key: string): boolean {
    return this.probe(key, false);
  }

  /** The key's bits: set when `set`; else whether all are (false at the first clear one). Its block is h1's low bits; its probes h2 + i·g in the block, g odd from h1's other bits (so they differ). */
  private probe(key: string, set: boolean): boolean {
    this.hash(key);
    const { words } = this;
    const base = (this.h1 & blockMask) * blockWords;
    const step = (this.h1 >>> blockBits) | 1;
    let bit = this.h2;
    for (let i = 0; i < genesisKeyFilterProbes; i++, bit = (bit + step) | 0) {
      const at = base + ((bit & 511) >>> 5);
      if (set) words[at]! |= 1 << (bit & 31);
      else if ((words[at]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}
