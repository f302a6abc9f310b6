/**
 * A measured prototype of the kernel's second shape (issue 28), before building it: what
 * the store and the machine alone allow for compact records, beside today's layout, in
 * one run on the same machine. Nothing here is the kernel; it bounds what the kernel can
 * reach.
 *
 * - `decide`: a decider over typed arrays that allocates nothing per transfer: balances as
 *   128-bit unsigned integers in four 32-bit limbs (amounts go up to 2^128 - 1, CONTRACT 3),
 *   a client-key table by open addressing, and each decided transfer encoded into a fixed
 *   128-byte record in a preallocated round buffer. Prints CPU per transfer and the
 *   garbage collections the loop caused (none means nothing was allocated per transfer).
 * - `today`: the store entries and value sizes today's kernel writes per 1-leg transfer
 *   (bench/ceilings.ts), fsync'd per round.
 * - `records`: one 128-byte binary entry per transfer, plus per account touched per round
 *   its balance (48 bytes) and a history entry (the round's sequence numbers for it), one
 *   client-key chunk and one time entry per round, the round's intake entry written at
 *   acknowledgement and deleted at decision. fsync'd per round.
 * - `chunks`: as `records`, but a round's transfer records in one entry (as the journal
 *   is chunked per round today): reading one transfer reads its round's chunk.
 * - `folded`: as `chunks`, with each account's balance after the round kept in its history
 *   entry for the round: one entry per account touched per round.
 *
 *   npm run build && node dist/bench/shape-prototype.js [--transfers 400000] [--per-round 4096] [--accounts 10000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ClassicLevel } from 'classic-level';
import { type CeilingResult, countBatch, type LayoutSize, levelLogBytes, storeCeiling } from './ceilings.js';

const { values: args } = parseArgs({ options: { transfers: { type: 'string', default: '400000' }, 'per-round': { type: 'string', default: '4096' }, accounts: { type: 'string', default: '10000' } } });
const transfers = Number(args.transfers);
const perRound = Number(args['per-round']);
const accounts = Number(args.accounts);
for (const [name, value] of Object.entries({ transfers, perRound, accounts })) if (!Number.isSafeInteger(value) || value < 2) throw new Error(`bad ${name}`);

const recordBytes = 128;
const balanceBytes = 48; // available, reserved, encumbered: 16 bytes each
const limbs = 4;
/** Client-key table slots (a power of two, at least twice the keys it holds). */
const keySlots = 1 << Math.ceil(Math.log2(Math.max(2 * transfers, 1024)));

/** The decider's state for the prototype: every array allocated once. */
class TypedBook {
  readonly available = new Uint32Array(accounts * limbs);
  readonly keyTable = new Uint32Array(keySlots * 4); // a client key's digest: 4 words, 0 = empty
  readonly round = Buffer.alloc(perRound * recordBytes);
  readonly touched = new Int32Array(accounts).fill(-1); // the round a balance was last marked in
  readonly touchedList = new Int32Array(2 * perRound);
  touchedCount = 0;
  decided = 0;
  refused = 0;

  constructor() {
    // Opening balances: 2^64 minor units each (limb 2 = 1).
    for (let a = 0; a < accounts; a++) this.available[a * limbs + 2] = 1;
  }

  /** Inserts the digest (words w0..w3, never all zero); false when it was already there (a replay). */
  private rememberKey(w0: number, w1: number, w2: number, w3: number): boolean {
    let slot = (w0 ^ Math.imul(w1, 0x9e3779b1)) & (keySlots - 1);
    for (;;) {
      const at = slot * 4;
      const t = this.keyTable;
      if (t[at] === 0 && t[at + 1] === 0 && t[at + 2] === 0 && t[at + 3] === 0) {
        t[at] = w0;
        t[at + 1] = w1;
        t[at + 2] = w2;
        t[at + 3] = w3;
        return true;
      }
      if (t[at] === w0 && t[at + 1] === w1 && t[at + 2] === w2 && t[at + 3] === w3) return false;
      slot = (slot + 1) & (keySlots - 1);
    }
  }

  /** available[from] >= amount (limbs a0..a3, least significant first). */
  private covers(from: number, a0: number, a1: number, a2: number, a3: number): boolean {
    const b = this.available;
    const at = from * limbs;
    if (b[at + 3]! !== a3) return b[at + 3]! > a3;
    if (b[at + 2]! !== a2) return b[at + 2]! > a2;
    if (b[at + 1]! !== a1) return b[at + 1]! > a1;
    return b[at]! >= a0;
  }

  private subtract(account: number, a0: number, a1: number, a2: number, a3: number): void {
    const b = this.available;
    const at = account * limbs;
    const d0 = b[at]! - a0;
    const d1 = b[at + 1]! - a1 - (d0 < 0 ? 1 : 0);
    const d2 = b[at + 2]! - a2 - (d1 < 0 ? 1 : 0);
    const d3 = b[at + 3]! - a3 - (d2 < 0 ? 1 : 0);
    b[at] = d0 >>> 0; // two's complement of a negative difference: the limb after a borrow
    b[at + 1] = d1 >>> 0;
    b[at + 2] = d2 >>> 0;
    b[at + 3] = d3 >>> 0;
  }

  /** Adds; false (nothing changed) if the balance would pass 2^128 - 1. */
  private add(account: number, a0: number, a1: number, a2: number, a3: number): boolean {
    const b = this.available;
    const at = account * limbs;
    const s0 = b[at]! + a0;
    const s1 = b[at + 1]! + a1 + (s0 > 0xffff_ffff ? 1 : 0);
    const s2 = b[at + 2]! + a2 + (s1 > 0xffff_ffff ? 1 : 0);
    const s3 = b[at + 3]! + a3 + (s2 > 0xffff_ffff ? 1 : 0);
    if (s3 > 0xffff_ffff) return false;
    b[at] = s0 >>> 0;
    b[at + 1] = s1 >>> 0;
    b[at + 2] = s2 >>> 0;
    b[at + 3] = s3 >>> 0;
    return true;
  }

  private touch(account: number, round: number): void {
    if (this.touched[account] === round) return;
    this.touched[account] = round;
    this.touchedList[this.touchedCount++] = account;
  }

  /** Decides the round's `count` transfers starting at `first`, encoding each accepted one into the round buffer. */
  decideRound(round: number, first: number, count: number, nowMs: number): number {
    this.touchedCount = 0;
    let written = 0;
    for (let n = first; n < first + count; n++) {
      const from = n % accounts;
      const to = (from + 1 + (n % (accounts - 1))) % accounts;
      const a0 = 1 + (n & 0xff); // amounts in minor units; the upper limbs are zero for the load, not for the code
      // The client key's digest is computed at intake (not the decider's work): here a function of n.
      if (!this.rememberKey(n + 1, (Math.imul(n, 0x85ebca6b) | 1) >>> 0, 7, 11)) {
        this.refused++;
        continue;
      }
      if (!this.covers(from, a0, 0, 0, 0) || !this.add(to, a0, 0, 0, 0)) {
        this.refused++;
        continue;
      }
      this.subtract(from, a0, 0, 0, 0);
      this.touch(from, round);
      this.touch(to, round);
      const r = this.round;
      const at = written * recordBytes;
      const seq = this.decided + 1;
      r.writeUInt32LE(seq >>> 0, at);
      r.writeUInt32LE(Math.floor(seq / 0x1_0000_0000), at + 4);
      r.writeUInt32LE(nowMs % 0x1_0000_0000, at + 8);
      r.writeUInt32LE(Math.floor(nowMs / 0x1_0000_0000), at + 12);
      r.writeUInt32LE(from, at + 16);
      r.writeUInt32LE(to, at + 20);
      r.writeUInt32LE(0, at + 24); // asset number
      r.writeUInt32LE(1, at + 28); // kind: 1-leg transfer
      r.writeUInt32LE(a0, at + 32);
      r.fill(0, at + 36, at + 48);
      r.writeUInt32LE(n + 1, at + 48); // client key digest (16 bytes)
      r.writeUInt32LE((Math.imul(n, 0x85ebca6b) | 1) >>> 0, at + 52);
      r.writeUInt32LE(7, at + 56);
      r.writeUInt32LE(11, at + 60);
      r.fill(0, at + 64, at + recordBytes); // principal, credential, reference, reserved
      this.decided++;
      written++;
    }
    return written;
  }
}

function gcCounter(): { count: () => number; stop: () => void } {
  let n = 0;
  const observer = new PerformanceObserver((list) => {
    n += list.getEntries().length;
  });
  observer.observe({ entryTypes: ['gc'] });
  return { count: () => n, stop: () => observer.disconnect() };
}

async function decideOnly(): Promise<{ perSec: number; cpuUs: number; gcs: number }> {
  const book = new TypedBook();
  book.decideRound(0, 0, perRound, Date.now()); // warm-up: let V8 optimise the loop
  const gc = gcCounter();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let round = 1;
  for (let first = perRound; first < transfers; first += perRound) book.decideRound(round++, first, Math.min(perRound, transfers - first), 1_764_000_000_000 + first);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await new Promise((resolve) => setImmediate(resolve)); // let the observer deliver
  gc.stop();
  const n = transfers - perRound;
  return { perSec: n / seconds, cpuUs: (cpu.user + cpu.system) / n, gcs: gc.count() };
}

type Db = ClassicLevel<Uint8Array, Uint8Array>;
type StoreRun = CeilingResult & LayoutSize;

function key(prefix: string, ...words: number[]): Buffer {
  const k = Buffer.alloc(prefix.length + 8 * words.length);
  k.write(prefix, 0, 'latin1');
  words.forEach((w, i) => k.writeBigUInt64BE(BigInt(w), prefix.length + 8 * i));
  return k;
}

/**
 * How the compact shape lays out a round: `perTransfer`, one entry per transfer record and,
 * per account touched, its balance and its history entry; `chunked`, the round's records in
 * one entry; `folded`, chunked and the account's balance after the round kept in its history
 * entry (the newest history entry is the balance: one entry per account touched).
 */
type CompactLayout = 'perTransfer' | 'chunked' | 'folded';

/** Decides and writes every round of the compact shape in `layout`. */
async function compactShape(layout: CompactLayout): Promise<StoreRun> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-shape-'));
  const db: Db = new ClassicLevel(dir, { keyEncoding: 'view', valueEncoding: 'view', writeBufferSize: 4 * 2 ** 20 });
  await db.open();
  const book = new TypedBook();
  const totals = { entries: 0, bytes: 0 };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  try {
    let round = 0;
    for (let first = 0; first < transfers; first += perRound, round++) {
      const count = Math.min(perRound, transfers - first);
      // Acknowledgement: the round's intake, one entry (~96 bytes a command).
      const intakeKey = key('i/', round);
      const intakeOps = [{ type: 'put' as const, key: intakeKey, value: Buffer.alloc(count * 96) }];
      countBatch(intakeOps, totals);
      await db.batch(intakeOps, { sync: true });
      const firstSeq = book.decided + 1;
      const accepted = book.decideRound(round, first, count, 1_764_000_000_000 + round);
      const ops: { type: 'put' | 'del'; key: Buffer; value?: Uint8Array }[] = [];
      const records = book.round.subarray(0, accepted * recordBytes);
      if (layout !== 'perTransfer') ops.push({ type: 'put', key: key('t/', firstSeq), value: Buffer.from(records) });
      else for (let i = 0; i < accepted; i++) ops.push({ type: 'put', key: key('t/', firstSeq + i), value: Buffer.from(records.subarray(i * recordBytes, (i + 1) * recordBytes)) });
      for (let i = 0; i < book.touchedCount; i++) {
        const account = book.touchedList[i]!;
        const balance = Buffer.alloc(balanceBytes);
        Buffer.from(book.available.buffer, account * limbs * 4, limbs * 4).copy(balance, 0);
        // The account's history this round: its transfers' sequence numbers, 8 bytes each (an account
        // takes part in about one transfer a round in this load).
        const history = Buffer.alloc(16);
        if (layout === 'folded') ops.push({ type: 'put', key: key('h/', account, round), value: Buffer.concat([balance, history]) });
        else ops.push({ type: 'put', key: key('b/', account), value: balance }, { type: 'put', key: key('h/', account, round), value: history });
      }
      ops.push({ type: 'put', key: key('k/', round), value: Buffer.alloc(accepted * 24) }); // client-key digests -> seq
      ops.push({ type: 'put', key: key('jt/', 1_764_000_000_000 + round, firstSeq), value: Buffer.alloc(0) });
      ops.push({ type: 'del', key: intakeKey });
      countBatch(ops, totals);
      const chain = db.batch();
      for (const op of ops) {
        if (op.type === 'put') chain.put(op.key, op.value!);
        else chain.del(op.key);
      }
      await chain.write({ sync: true });
    }
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    await db.close();
    const log = levelLogBytes(dir);
    return { perSec: transfers / seconds, cpuUs: (cpu.user + cpu.system) / transfers, entriesPerTransfer: totals.entries / transfers, bytesPerTransfer: totals.bytes / transfers, flushedBytes: log.flushed / transfers, compactedBytes: log.compacted / transfers };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`Shape prototype: ${transfers} 1-leg transfers among ${accounts} accounts, rounds of ${perRound}, fsync'd writes, Node ${process.version}`);
  const decided = await decideOnly();
  console.log(`decide (typed arrays, 128-byte records): ${Math.round(decided.perSec)} transfers/s, ${decided.cpuUs.toFixed(2)} CPU µs each, ${decided.gcs} garbage collections over ${transfers - perRound} transfers`);
  const today = await storeCeiling(transfers, perRound, accounts);
  console.log('| layout | transfers/s (fsync\'d, store only) | CPU µs per transfer | entries per transfer | key+value bytes per transfer | LevelDB flushed / compacted per transfer |');
  console.log('|---|---|---|---|---|---|');
  const row = (name: string, r: StoreRun) =>
    console.log(`| ${name} | ${Math.round(r.perSec)} | ${r.cpuUs.toFixed(1)} | ${r.entriesPerTransfer.toFixed(2)} | ${Math.round(r.bytesPerTransfer)} | ${Math.round(r.flushedBytes)} B / ${Math.round(r.compactedBytes)} B |`);
  row("today's (bench/ceilings.ts, no decisions)", today);
  const names: Record<CompactLayout, string> = { perTransfer: 'one entry per transfer record', chunked: 'records chunked per round', folded: 'chunked, balance folded into the history entry' };
  for (const layout of ['perTransfer', 'chunked', 'folded'] as const) row(`compact: ${names[layout]} (decisions included)`, await compactShape(layout));
}

await main();
