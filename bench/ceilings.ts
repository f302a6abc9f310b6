/**
 * What the store alone allows, with no kernel logic at all, fsync'd:
 * - `storeCeiling`: the same keys and value sizes one decided 1-leg transfer writes
 *   (its acknowledgement write, then its share of a decision write: two index
 *   entries carrying their postings, two balances, the operation, the `cmd/`
 *   deletion; per round one journal chunk, its time entry and one event chunk),
 *   batched as the kernel batches them.
 * - `rawPuts`: classic-level itself, puts of 300 bytes in batches of 1,000.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LevelStore } from '../src/store/level.js';
import type { BatchOp } from '../src/store/port.js';
import { seqHex } from '../src/model/keys.js';

export interface CeilingResult {
  readonly perSec: number;
  readonly cpuUs: number;
}

// Value sizes as the kernel writes them for a 1-leg transfer by the operator.
const operationText = 'o'.repeat(560);
const leafText = 'l'.repeat(470);
const indexedText = 'p'.repeat(475);
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
  rmSync(dir, { recursive: true, force: true });
  return { perSec: count / seconds, cpuUs: (cpu.user + cpu.system) / count };
}

/** Decided 1-leg transfers per second the store allows for the kernel's layout. */
export function storeCeiling(transfers: number, perWrite = 4096, accounts = 10_000): Promise<CeilingResult> {
  return timed(async (store) => {
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
      await store.write(acks, true);
      await store.write(decisions, true);
    }
  }, transfers);
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
