/**
 * One asset's liabilities leaves while a tree is built, packed off the JS heap: each
 * leaf's account and layers as UTF-8 text in one growing buffer, its hash and sum in
 * fixed-width columns, and the sort order as indexes. A million leaves as objects (an
 * object, three bigints, a Buffer and a hex string each) were ~1 GiB that every major
 * garbage collection walked, pausing the decider for seconds; as buffers they are a few
 * allocations the collector does not look into. Objects exist only for the few leaves
 * being worked on.
 */
import { assert } from '../assert.js';

export interface Holding {
  readonly account: string;
  readonly available: bigint;
  readonly reserved: bigint;
  readonly encumbered: bigint;
}

export interface Pair {
  readonly hash: Buffer;
  readonly sum: bigint;
}

const hashBytes = 32;
/** A leaf's sum (three layers of at most 2^128 - 1) as three big-endian 64-bit words. */
const sumBytes = 24;
const word = (1n << 64n) - 1n;
const initialLeaves = 1024;

export class PackedLeaves {
  count = 0;
  private text = Buffer.allocUnsafe(initialLeaves * 64);
  private textUsed = 0;
  /** Where leaf i's text starts; `starts[count]` is where the next one will. */
  private starts = new Uint32Array(initialLeaves + 1);
  private hashes: Buffer | null = null;
  /** Each hash's first four bytes as a number: most comparisons end there. */
  private heads: Uint32Array | null = null;
  private sums: Buffer | null = null;

  push(h: Holding): void {
    const record = `${h.account}\n${h.available}\n${h.reserved}\n${h.encumbered}`;
    const bytes = Buffer.byteLength(record, 'utf8');
    if (this.textUsed + bytes > this.text.length) {
      assert(this.textUsed + bytes < 2 ** 32, "one asset's packed leaves fit 4 GiB");
      const grown = Buffer.allocUnsafe(Math.min(2 ** 32 - 1, Math.max(2 * this.text.length, this.textUsed + bytes)));
      this.text.copy(grown, 0, 0, this.textUsed);
      this.text = grown;
    }
    if (this.count + 2 > this.starts.length) {
      const grown = new Uint32Array(2 * this.starts.length);
      grown.set(this.starts);
      this.starts = grown;
    }
    this.text.write(record, this.textUsed, 'utf8');
    this.textUsed += bytes;
    this.count++;
    this.starts[this.count] = this.textUsed;
  }

  holding(i: number): Holding {
    const [account, available, reserved, encumbered] = this.text.toString('utf8', this.starts[i]!, this.starts[i + 1]!).split('\n');
    return { account: account!, available: BigInt(available!), reserved: BigInt(reserved!), encumbered: BigInt(encumbered!) };
  }

  /** Sets leaf i's (hash, sum); the columns are made at the first. */
  setPair(i: number, hash: Buffer, sum: bigint): void {
    this.hashes ??= Buffer.allocUnsafe(this.count * hashBytes);
    this.sums ??= Buffer.allocUnsafe(this.count * sumBytes);
    this.heads ??= new Uint32Array(this.count);
    assert(hash.length === hashBytes && sum >= 0n && sum >> 192n === 0n, 'a leaf pair is a 32-byte hash and a sum below 2^192');
    hash.copy(this.hashes, i * hashBytes);
    this.heads[i] = hash.readUInt32BE(0);
    this.sums.writeBigUInt64BE(sum >> 128n, i * sumBytes);
    this.sums.writeBigUInt64BE((sum >> 64n) & word, i * sumBytes + 8);
    this.sums.writeBigUInt64BE(sum & word, i * sumBytes + 16);
  }

  pair(i: number): Pair {
    const sums = this.sums!;
    const at = i * sumBytes;
    const sum = (sums.readBigUInt64BE(at) << 128n) | (sums.readBigUInt64BE(at + 8) << 64n) | sums.readBigUInt64BE(at + 16);
    return { hash: this.hashes!.subarray(i * hashBytes, (i + 1) * hashBytes), sum };
  }

  /** Orders leaves i and j by their hashes' bytes, as their lowercase hex orders (once every pair is set). */
  comparator(): (i: number, j: number) => number {
    const [hashes, heads] = [this.hashes!, this.heads!];
    return (i, j) => heads[i]! - heads[j]! || hashes.compare(hashes, j * hashBytes, (j + 1) * hashBytes, i * hashBytes, (i + 1) * hashBytes);
  }
}
