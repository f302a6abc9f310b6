/**
 * The ceiling of the kernel's write layout: the same keys and value sizes one
 * decided 1-leg transfer writes (its acknowledgement write, then its share of a
 * decision write), batched as the kernel batches them, fsync'd, with no kernel logic
 * at all. Run beside bench/kernel to see what the store alone allows.
 *
 *   npm run build && node dist/bench/store-ceiling.js [--transfers 200000] [--per-write 4096]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { seqHex } from '../src/codec.js';
import { LevelStore } from '../src/store/level.js';
import type { BatchOp } from '../src/store/port.js';

const { values: args } = parseArgs({ options: { transfers: { type: 'string', default: '200000' }, 'per-write': { type: 'string', default: '4096' }, accounts: { type: 'string', default: '10000' } } });
const transfers = Number(args.transfers);
const perWrite = Number(args['per-write']);
const accounts = Number(args.accounts);

// Value sizes as the kernel writes them for a 1-leg transfer by the operator.
const operationText = 'o'.repeat(560);
const postingText = 'p'.repeat(520);
const clientKeyText = 'c'.repeat(110);
const balanceText = '{"a":"1000000","r":"0","e":"0"}';

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-ceiling-'));
  const store = await LevelStore.open(dir);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let seq = 0;
  for (let first = 0; first < transfers; first += perWrite) {
    const n = Math.min(perWrite, transfers - first);
    const acks: BatchOp[] = [];
    const decisions: BatchOp[] = [];
    for (let i = first; i < first + n; i++) {
      const from = `did:ledger:acct:b${(i * 7) % accounts}`;
      const to = `did:ledger:acct:b${(i * 7 + 1) % accounts}`;
      acks.push({ type: 'put', key: `cmd/${seqHex(i)}`, value: operationText }, { type: 'put', key: `ck/did:ledger:id:operator/b-1-${i}`, value: clientKeyText });
      for (const account of [from, to]) {
        seq++;
        decisions.push({ type: 'put', key: `j/${seqHex(seq)}`, value: postingText }, { type: 'put', key: `aa/${account}/USD/${seqHex(seq)}`, value: '' }, { type: 'put', key: `bal/${account}/USD`, value: balanceText });
      }
      decisions.push({ type: 'put', key: `op/op_${seqHex(i)}`, value: operationText }, { type: 'del', key: `cmd/${seqHex(i)}` });
    }
    decisions.push({ type: 'put', key: `ev/${seqHex(first + 1)}`, value: operationText.repeat(n) });
    await store.write(acks, true);
    await store.write(decisions, true);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  console.log(`store ceiling: ${transfers} transfers' writes in ${seconds.toFixed(1)} s: ${(transfers / seconds).toFixed(0)} transfers/s, ${((cpu.user + cpu.system) / transfers).toFixed(0)} CPU us per transfer`);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
