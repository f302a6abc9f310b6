/**
 * What the store alone allows, with no kernel logic at all, fsync'd:
 * - `storeCeiling`: the same keys and value sizes one decided 1-leg transfer writes
 *   (its acknowledgement write, then its share of a decision write: two index
 *   entries carrying their postings, two balances, the operation, the `cmd/`
 *   deletion; per round one journal chunk, its time entry and one event chunk),
 *   batched as the kernel batches them.
 * - `rawPuts`: classic-level itself, puts of 300 bytes in batches of 1,000.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LevelStore } from '../src/store/level.js';
import type { BatchOp } from '../src/store/port.js';
import { seqHex } from '../src/model/keys.js';

export interface CeilingResult {
  readonly perSec: number;
  readonly cpuUs: number;
  /** What LevelDB's LOG says it flushed from memtables and rewrote in compactions, per item, in bytes. */
  readonly flushedBytes: number;
  readonly compactedBytes: number;
}

/** Store entries and their key+value bytes, per decided transfer, a layout writes. */
export interface LayoutSize {
  readonly entriesPerTransfer: number;
  readonly bytesPerTransfer: number;
}

/** LevelDB's own account of its writes, from the `LOG` it keeps in its directory: bytes flushed to level-0 tables and rewritten by compactions. */
export function levelLogBytes(dir: string): { flushed: number; compacted: number } {
  let flushed = 0;
  let compacted = 0;
  for (const line of readFileSync(join(dir, 'LOG'), 'utf8').split('\n')) {
    const table = /Level-0 table #\d+: (\d+) bytes/.exec(line);
    if (table) flushed += Number(table[1]);
    const merge = /Compacted \d+@\d+ \+ \d+@\d+ files => (\d+) bytes/.exec(line);
    if (merge) compacted += Number(merge[1]);
  }
  return { flushed, compacted };
}

/** Entries and key+value bytes in a batch, added to `into`. */
export function countBatch(ops: readonly { key: { length: number }; value?: { length: number } }[], into: { entries: number; bytes: number }): void {
  into.entries += ops.length;
  for (const op of ops) into.bytes += op.key.length + (op.value?.length ?? 0);
}

// Value sizes as the kernel writes them for a 1-leg transfer by the operator.
const operationText = 'o'.repeat(560);
const leafText = 'l'.repeat(470);
// An account index entry in store layout 4's compact form (475 B in layouts 2 and 3, a copy of the leaf).
const indexedText = 'p'.repeat(135);
const clientKeyText = 'c'.repeat(110);
const balanceText = '{"a":"1000000","r":"0","e":"0"}';

async function timed(run: (store: LevelStore) => Promise<void>, count: number): Promise<CeilingResult> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-ceiling-'));
  const store = await LevelStore.open(dir);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await run(store);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  await store.close();
  const log = levelLogBytes(dir);
  rmSync(dir, { recursive: true, force: true });
  return { perSec: count / seconds, cpuUs: (cpu.user + cpu.system) / count, flushedBytes: log.flushed / count, compactedBytes: log.compacted / count };
}

/** Decided 1-leg transfers per second the store allows for the kernel's layout. */
export async function storeCeiling(transfers: number, perWrite = 4096, accounts = 10_000): Promise<CeilingResult & LayoutSize> {
  const written = { entries: 0, bytes: 0 };
  const result = await timed(async (store) => {
    let seq = 0;
    for (let first = 0; first < transfers; first += perWrite) {
      const n = Math.min(perWrite, transfers - first);
      const acks: BatchOp[] = [];
      const decisions: BatchOp[] = [];
      const leaves: string[] = [];
      const firstSeq = seq + 1;
      for (let i = first; i < first + n; i++) {
        const from = `did:ledger:acct:b${(i * 7) % accounts}`;
        const to = `did:ledger:acct:b${(i * 7 + 1) % accounts}`;
        acks.push({ type: 'put', key: `cmd/${seqHex(i)}`, value: operationText }, { type: 'put', key: `ck/did:ledger:id:operator/b-1-${i}`, value: clientKeyText });
        for (const account of [from, to]) {
          seq++;
          leaves.push(leafText);
          decisions.push({ type: 'put', key: `aa/${account}/USD/${seqHex(seq)}`, value: indexedText }, { type: 'put', key: `bal/${account}/USD`, value: balanceText });
        }
        decisions.push({ type: 'put', key: `op/op_${seqHex(i)}`, value: operationText }, { type: 'del', key: `cmd/${seqHex(i)}` });
      }
      decisions.push({ type: 'put', key: `j/${seqHex(firstSeq)}`, value: leaves.join('\n') }, { type: 'put', key: `jt/${seqHex(Date.now())}/${seqHex(firstSeq)}`, value: '' });
      decisions.push({ type: 'put', key: `ev/${seqHex(first + 1)}`, value: operationText.repeat(n) });
      countBatch(acks, written);
      countBatch(decisions, written);
      await store.write(acks, true);
      await store.write(decisions, true);
    }
  }, transfers);
  return { ...result, entriesPerTransfer: written.entries / transfers, bytesPerTransfer: written.bytes / transfers };
}

/** Puts per second of classic-level itself: 300-byte values, fsync'd batches of 1,000. */
export function rawPuts(puts: number, perWrite = 1000): Promise<CeilingResult> {
  const value = 'v'.repeat(300);
  return timed(async (store) => {
    for (let first = 0; first < puts; first += perWrite) {
      const batch: BatchOp[] = [];
      for (let i = first; i < Math.min(puts, first + perWrite); i++) batch.push({ type: 'put', key: `k/${seqHex(i)}`, value });
      await store.write(batch, true);
    }
  }, puts);
}
