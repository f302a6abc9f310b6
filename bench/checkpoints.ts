/**
 * Checkpoint cost (issue 12): writes a LevelDB journal of synthetic but full-size leaves
 * (the canonical leaf of a one-leg transfer, ~430 bytes) in chunks as rounds write them,
 * then
 *  1. takes a checkpoint, appends `--entries` new entries and times the next checkpoint
 *     (its cost is in proportion to the entries added since the last) with the RSS growth;
 *  2. in a book of `--proof-entries` entries covered by a checkpoint, times inclusion
 *     proofs of random leaves (each reads at most one block of 256 leaves and the stored
 *     subtrees above it).
 *  3. in a book of each of `--accounts` customer accounts (comma-separated counts), times
 *     the checkpoint whose liabilities tree (CONTRACT 12.2) covers them all, its CPU time, the
 *     event loop's longest pause meanwhile (what the decider would wait) and the longest
 *     garbage collection among them (apart from the scheduler's share of a loaded machine), and one holder's proof
 *     (CONTRACT 12.4) of random accounts, each verified.
 * Usage: node dist/bench/checkpoints.js --entries 1000000 --proof-entries 10000000 [--accounts 100000,1000000] [--only liabilities] [--dir PATH]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Checkpoints } from '../src/checkpoints/checkpoints.js';
import { inclusionProof } from '../src/checkpoints/merkle.js';
import { journalChunkEntriesMax } from '../src/constants.js';
import { rootFromInclusionPath } from '../src/disclosures/verify.js';
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import { liabilitiesChecks, reportOf } from '../src/checkpoints/verify-proofs.js';
import { checkpointView } from '../src/checkpoints/views.js';
import { encodeAccount, encodeBalance, encodeHead } from '../src/model/codec.js';
import type { AccountId, IdentityId } from '../src/model/values.js';
import { EmbeddedLayer } from '../src/settlement/embedded.js';
import { LevelStore } from '../src/store/level.js';
import type { BatchOp } from '../src/store/port.js';
import { keys } from '../src/model/keys.js';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '1000000' },
    'proof-entries': { type: 'string', default: '10000000' },
    accounts: { type: 'string', default: '100000,1000000' },
    only: { type: 'string' },
    dir: { type: 'string' },
    proofs: { type: 'string', default: '20' },
  },
});
const entries = Number(values.entries);
const proofEntries = Number(values['proof-entries']);

const leaf = (seq: number) =>
  `{"account":"did:ledger:acct:c${seq % 10_000}","after":{"available":"${1_000_000 + seq}","encumbered":"0","reserved":"0"},"amount":"125","asset":"USD","at":${1_790_000_000_000 + seq},` +
  `"authorities":[{"credential":"did:ledger:cred:c${seq % 10_000}","grant":null,"kind":"owner","on_behalf_of":null,"principal":"did:ledger:id:c${seq % 10_000}"}],"balance":"available",` +
  `"counterparty":"did:ledger:acct:c${(seq + 1) % 10_000}","direction":"${seq % 2 === 0 ? 'debit' : 'credit'}","kind":"transfer","operation":"op${seq.toString(16).padStart(12, '0')}","seq":${seq},"status":"completed"}`;

/** Appends journal entries from+1..to in chunks of journalChunkEntriesMax, several chunks a write, and moves the head. */
async function appendJournal(store: LevelStore, from: number, to: number): Promise<void> {
  let batch: BatchOp[] = [];
  for (let first = from + 1; first <= to; first += journalChunkEntriesMax) {
    const last = Math.min(to, first + journalChunkEntriesMax - 1);
    const lines: string[] = [];
    for (let s = first; s <= last; s++) lines.push(leaf(s));
    batch.push({ type: 'put', key: keys.journal(first), value: lines.join('\n') });
    if (batch.length >= 16 || last === to) {
      await store.write(batch, false);
      batch = [];
    }
  }
  await store.write([{ type: 'put', key: keys.head, value: encodeHead({ decidedCseq: 0, postingSeq: to, eventSeq: 0, lastAtMs: 0, accounts: 0 }) }], true);
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

async function timedCheckpoint(checkpoints: Checkpoints): Promise<{ ms: number; rssGrowthMiB: string }> {
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
  const start = performance.now();
  await checkpoints.take(Date.now());
  const ms = performance.now() - start;
  clearInterval(sampler);
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  return { ms, rssGrowthMiB: mib(rssPeak - rssBefore) };
}

async function open(dir: string) {
  const store = await LevelStore.open(join(dir, 'book'));
  const layer = await EmbeddedLayer.open({ store, instance: 1, finalityDepth: 2 });
  return { store, layer, checkpoints: await Checkpoints.open(store, layer) };
}

/** A book of `count` customer accounts, each holding USD, and a short journal. */
async function accountsBook(store: LevelStore, count: number): Promise<void> {
  await appendJournal(store, 0, 10);
  let batch: BatchOp[] = [];
  for (let i = 0; i < count; i++) {
    const id = `did:ledger:acct:c${i}` as AccountId;
    const account = { id, owner: `did:ledger:id:c${i}` as IdentityId, kind: 'customer' as const, custody: 'delegated' as const, status: 'active' as const, openedAtMs: 1, epoch: 0, treasuryLimits: {} };
    batch.push({ type: 'put', key: keys.account(id), value: encodeAccount(account) });
    batch.push({ type: 'put', key: keys.balance(id, 'USD'), value: JSON.stringify(encodeBalance({ available: BigInt(1 + ((i * 7919) % 100_000)), reserved: BigInt(i % 7), encumbered: BigInt(i % 3) })) });
    if (batch.length >= 10_000) {
      await store.write(batch, false);
      batch = [];
    }
  }
  await store.write(batch, true);
}

async function liabilitiesAt(root: string, count: number): Promise<void> {
  const { store, layer, checkpoints } = await open(root);
  await accountsBook(store, count);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  // Garbage collections apart: on a shared machine the loop's pauses also hold the scheduler's, which these do not.
  let gcMaxMs = 0;
  let gcTotalMs = 0;
  const gcs = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcMaxMs = Math.max(gcMaxMs, entry.duration);
      gcTotalMs += entry.duration;
    }
  });
  gcs.observe({ entryTypes: ['gc'] });
  loop.enable();
  const cpuBefore = process.cpuUsage();
  const { ms, rssGrowthMiB } = await timedCheckpoint(checkpoints);
  const cpu = process.cpuUsage(cpuBefore);
  loop.disable();
  await new Promise((r) => setImmediate(r));
  gcs.disconnect();
  const c = checkpoints.latest!;
  const usd = c.liabilities!.USD!;
  console.log(
    `liabilities tree of ${count} accounts: checkpoint ${(ms / 1000).toFixed(1)} s (${Math.round(count / (ms / 1000))} leaves/s, CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s), ` +
      `longest event-loop pause ${(loop.max / 1e6).toFixed(0)} ms, longest GC pause ${gcMaxMs.toFixed(0)} ms (all GC ${(gcTotalMs / 1000).toFixed(1)} s), RSS growth ${rssGrowthMiB} MiB; ${usd.leaves} leaves, total ${usd.total}`,
  );
  // A proof needs a final checkpoint: the anchor into a block, then that block final.
  await checkpoints.ingest();
  await layer.produceBlocks(3, Date.now());
  await checkpoints.ingest();
  const times: number[] = [];
  for (let i = 0; i < Number(values.proofs); i++) {
    const account = `did:ledger:acct:c${Math.floor(Math.random() * count)}`;
    const start = performance.now();
    const proof = await checkpoints.liabilities(c.number, 'USD', account);
    times.push(performance.now() - start);
    const reply = JSON.parse(JSON.stringify({ account, asset: 'USD', instance: proof.instance, checkpoint: checkpointView(proof.checkpoint), leaf: proof.leaf, index: proof.index, path: proof.path }));
    const verified = reportOf(liabilitiesChecks(reply, { account, asset: 'USD', instance: 1, anchored: reply.checkpoint }));
    if (!verified.passed) throw new Error(`the proof of ${account} does not verify: ${verified.report}`);
  }
  times.sort((a, b) => a - b);
  console.log(`liabilities proof among ${count} accounts: median ${times[times.length >> 1]!.toFixed(1)} ms, max ${times[times.length - 1]!.toFixed(1)} ms over ${times.length} random accounts (each verified)`);
  await store.close();
}

const root = values.dir ?? mkdtempSync(join(tmpdir(), 'ledger-checkpoints-bench-'));
try {
  for (const count of values.only === undefined || values.only === 'liabilities' ? values.accounts!.split(',').map(Number) : []) await liabilitiesAt(join(root, `l${count}`), count);
  if (values.only === undefined || values.only === 'journal') {
    const { store, checkpoints } = await open(join(root, 'a'));
    const base = 100_000;
    await appendJournal(store, 0, base);
    await checkpoints.take(Date.now());
    await appendJournal(store, base, base + entries);
    const { ms, rssGrowthMiB } = await timedCheckpoint(checkpoints);
    console.log(`checkpoint after ${entries} new entries (book of ${base + entries}): ${(ms / 1000).toFixed(2)} s (${Math.round(entries / (ms / 1000))} entries/s), RSS growth ${rssGrowthMiB} MiB, peak RSS ${mib(process.resourceUsage().maxRSS * 1024)} MiB`);
    await store.close();
  }
  if (values.only === undefined || values.only === 'journal') {
    const { store, checkpoints } = await open(join(root, 'b'));
    const buildStart = performance.now();
    await appendJournal(store, 0, proofEntries);
    const writtenMs = performance.now() - buildStart;
    const { ms } = await timedCheckpoint(checkpoints);
    const { kernelRoot } = checkpoints.latest!;
    console.log(`book of ${proofEntries} entries: journal written in ${(writtenMs / 1000).toFixed(0)} s, first checkpoint over all of it ${(ms / 1000).toFixed(1)} s`);
    const times: number[] = [];
    for (let i = 0; i < Number(values.proofs); i++) {
      const seq = 1 + Math.floor(Math.random() * proofEntries);
      const start = performance.now();
      const proof = await inclusionProof(store, seq - 1, proofEntries);
      times.push(performance.now() - start);
      if (rootFromInclusionPath(leaf(seq), seq - 1, proofEntries, proof) !== kernelRoot) throw new Error(`the proof of ${seq} does not lead to the root`);
    }
    times.sort((a, b) => a - b);
    console.log(`inclusion proof in a book of ${proofEntries} entries: median ${times[times.length >> 1]!.toFixed(1)} ms, max ${times[times.length - 1]!.toFixed(1)} ms over ${times.length} random leaves (each verified)`);
    await store.close();
  }
} finally {
  if (values.dir === undefined) rmSync(root, { recursive: true, force: true });
}
