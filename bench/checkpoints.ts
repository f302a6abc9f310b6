/**
 * Checkpoint cost (issue 12): writes a LevelDB journal of synthetic but full-size entries
 * (one side of a one-leg transfer, its canonical leaf ~430 bytes) in chunks as rounds write
 * them (in this build's form, or with `--leaves` as layouts 2-5 did), then
 *  1. takes a checkpoint, appends `--entries` new entries and times the next checkpoint
 *     (its cost is in proportion to the entries added since the last) with the RSS growth;
 *  2. in a book of `--proof-entries` entries covered by a checkpoint, times inclusion
 *     proofs of random leaves (each reads at most one block of 256 leaves and the stored
 *     subtrees above it).
 *  3. in a book of each of `--accounts` funded customer accounts (comma-separated counts), with
 *     a kernel deciding 1-leg transfers from `--in-flight` closed-loop submitters on the same
 *     store and thread (as in ledgerd): the deciding alone for `--alone-seconds`, then during
 *     the checkpoint whose liabilities tree (CONTRACT 12.2) covers every account (decided/s,
 *     submit->decided p50/p99, the event loop's delay p99/max from monitorEventLoopDelay at
 *     1 ms resolution), the checkpoint's time, the process's CPU meanwhile and the longest
 *     garbage collection (apart from the scheduler's share of a loaded machine); with
 *     `--before PATH` (an earlier build's dist/src/checkpoints/checkpoints.js) the same first
 *     with that build, back to back on the same book. Then holders' proofs (CONTRACT 12.4) of
 *     random accounts in each checkpoint, each verified.
 * Usage: node dist/bench/checkpoints.js --entries 1000000 --proof-entries 10000000 [--accounts 100000,1000000] [--only liabilities|journal] [--before PATH] [--in-flight 64] [--alone-seconds 10] [--dir PATH] [--leaves]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Checkpoints } from '../src/checkpoints/checkpoints.js';
import { inclusionProof } from '../src/checkpoints/merkle.js';
import { journalChunkEntriesMax } from '../src/constants.js';
import { rootFromInclusionPath } from '../src/disclosures/verify.js';
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import { liabilitiesChecks, reportOf } from '../src/checkpoints/verify-proofs.js';
import { checkpointView } from '../src/checkpoints/views.js';
import { encodeHead, encodeJournalChunk, encodeLeaf } from '../src/model/codec.js';
import type { Authority, Posting } from '../src/model/model.js';
import type { AccountId, AssetSymbol, CredentialId } from '../src/model/values.js';
import { createHash, randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { builtInPrincipals } from '../src/auth/authority.js';
import { Kernel } from '../src/book/kernel.js';
import { sequentialIds } from '../src/model/ids.js';
import { benchAccount, syntheticFundedBook } from './genesis.js';
import { percentile } from './percentile.js';
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
    'in-flight': { type: 'string', default: '64' },
    'alone-seconds': { type: 'string', default: '10' },
    before: { type: 'string' },
    leaves: { type: 'boolean', default: false },
  },
});
const entries = Number(values.entries);
const proofEntries = Number(values['proof-entries']);

/** The posting of journal entry `seq`: one side of a 1-leg transfer between customers. */
const posting = (seq: number): Posting => ({
  seq,
  atMs: 1_790_000_000_000 + seq,
  account: `did:ledger:acct:c${seq % 10_000}` as AccountId,
  asset: 'USD' as AssetSymbol,
  amountMinor: 125n,
  direction: seq % 2 === 0 ? 'debit' : 'credit',
  layer: 'available',
  kind: 'transfer',
  status: 'completed',
  operation: `op${seq.toString(16).padStart(12, '0')}`,
  counterparty: `did:ledger:acct:c${(seq + 1) % 10_000}` as AccountId,
  authorities: [{ credential: `did:ledger:cred:c${seq % 10_000}` as CredentialId, grant: null, kind: 'owner', onBehalfOf: null, principal: `did:ledger:id:c${seq % 10_000}` as Authority['principal'] }],
  reference: null,
  after: { available: 1_000_000n + BigInt(seq), reserved: 0n, encumbered: 0n },
});
/** Its leaf (a canonical one of ~430 bytes). */
const leaf = (seq: number) => encodeLeaf(posting(seq));

/**
 * Appends journal entries from+1..to in chunks of journalChunkEntriesMax, several chunks a write, and moves the head.
 * The chunks in the form this build writes (store layout 6: compact entries, each leaf made when read), or with
 * `--leaves` as layouts 2-5 wrote them (the leaves themselves), which this build reads as they stand.
 */
async function appendJournal(store: LevelStore, from: number, to: number): Promise<void> {
  let batch: BatchOp[] = [];
  for (let first = from + 1; first <= to; first += journalChunkEntriesMax) {
    const last = Math.min(to, first + journalChunkEntriesMax - 1);
    const postings: Posting[] = [];
    for (let s = first; s <= last; s++) postings.push(posting(s));
    batch.push({ type: 'put', key: keys.journal(first), value: values.leaves ? postings.map(encodeLeaf).join('\n') : encodeJournalChunk(postings) });
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

const operator = { principal: builtInPrincipals.operator, credential: 'did:ledger:cred:operator' as CredentialId, onBehalfOf: null };

/** What the decider did in a window: decided per second, submit -> decided latency, the event loop's delay (ms). */
interface Deciding {
  decidedPerSec: number;
  decidedP50Ms: number;
  decidedP99Ms: number;
  loopP99Ms: number;
  loopMaxMs: number;
}

/**
 * A closed loop of `--in-flight` submitters of 1-leg transfers between random customers, each
 * submitting, waiting for its decision and going on, as HTTP clients would; `window` reads
 * what was decided between two instants and the event loop's delay since the last window.
 */
function decidingLoad(kernel: Kernel, count: number) {
  const decided: { submittedMs: number; decidedMs: number }[] = [];
  let stopped = false;
  let n = 0;
  const submitter = async () => {
    while (!stopped) {
      const i = n++;
      const from = Math.floor(Math.random() * count);
      const to = (from + 1 + Math.floor(Math.random() * (count - 1))) % count;
      const submittedMs = performance.now();
      const ack = await kernel.submit({
        command: { type: 'transfer', legs: [{ from: benchAccount(from), to: benchAccount(to), asset: 'USD' as AssetSymbol, amountMinor: 1n }], deadlineMs: Number.MAX_SAFE_INTEGER },
        actor: operator,
        clientKey: `cp-bench-${i}`,
        requestDigest: createHash('sha256').update(`cp-bench-${i}`).digest('hex'),
        reference: null,
      });
      if ((await kernel.decision(ack.operation.ref, 600_000)) === null) throw new Error(`transfer ${i} was not decided in 10 minutes`);
      decided.push({ submittedMs, decidedMs: performance.now() });
    }
  };
  const submitters = Promise.all(Array.from({ length: Number(values['in-flight']) }, submitter));
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  return {
    window(fromMs: number, toMs: number): Deciding {
      const inside = decided.filter((d) => d.decidedMs >= fromMs && d.decidedMs < toMs);
      const latencies = inside.map((d) => d.decidedMs - d.submittedMs).sort((a, b) => a - b);
      const result = {
        decidedPerSec: inside.length / ((toMs - fromMs) / 1000),
        decidedP50Ms: percentile(latencies, 50),
        decidedP99Ms: percentile(latencies, 99),
        loopP99Ms: loop.percentile(99) / 1e6,
        loopMaxMs: loop.max / 1e6,
      };
      loop.reset();
      return result;
    },
    async stop(): Promise<void> {
      stopped = true;
      loop.disable();
      await submitters;
      await kernel.idle();
    },
  };
}

const decidingText = (d: Deciding) =>
  `${d.decidedPerSec.toFixed(0)} decided/s, submit->decided p50 ${d.decidedP50Ms.toFixed(1)} ms p99 ${d.decidedP99Ms.toFixed(1)} ms, event-loop delay p99 ${d.loopP99Ms.toFixed(1)} ms max ${d.loopMaxMs.toFixed(0)} ms`;

/** The checkpoints of this build, and of an earlier one (`--before`: its dist/src/checkpoints/checkpoints.js) measured first on the same book. */
async function builds(): Promise<[string, typeof Checkpoints][]> {
  if (values.before === undefined) return [['now', Checkpoints]];
  const before = (await import(pathToFileURL(values.before).href)) as { Checkpoints: typeof Checkpoints };
  return [['before', before.Checkpoints], ['now', Checkpoints]];
}

/**
 * A book of `count` funded customers (bench/genesis.ts) and a kernel deciding transfers on
 * it as ledgerd's does (on the same store and thread); per build, the deciding alone, then
 * during a checkpoint over the whole book; then holders' proofs of each checkpoint.
 */
async function liabilitiesAt(root: string, count: number): Promise<void> {
  const { store, layer } = await open(root);
  await syntheticFundedBook(store, count, 1_000_000n);
  const kernel = await Kernel.open({ store, clock: Date.now, ids: sequentialIds, onFatal: (e) => { throw e; } });
  const load = decidingLoad(kernel, count);
  await sleep(2_000);
  load.window(0, performance.now()); // the warm-up left out
  let checkpoints: Checkpoints | null = null;
  // One key for every build's salts, so the last one's proofs of the earlier checkpoints hold.
  const liabilitiesKey = randomBytes(32);
  for (const [label, Build] of await builds()) {
    checkpoints = await Build.open(store, layer, liabilitiesKey);
    const aloneFrom = performance.now();
    await sleep(Number(values['alone-seconds']) * 1000);
    const alone = load.window(aloneFrom, performance.now());
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
    const cpuBefore = process.cpuUsage();
    const buildFrom = performance.now();
    const { ms, rssGrowthMiB } = await timedCheckpoint(checkpoints);
    const during = load.window(buildFrom, performance.now());
    const cpu = process.cpuUsage(cpuBefore);
    await new Promise((r) => setImmediate(r));
    gcs.disconnect();
    const usd = checkpoints.latest!.liabilities!.USD!;
    console.log(
      `[${label}] liabilities tree of ${count} accounts (checkpoint ${checkpoints.latest!.number}): ${(ms / 1000).toFixed(1)} s (${Math.round(count / (ms / 1000))} leaves/s; CPU of the process meanwhile ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s, the deciding's included), ` +
        `longest GC pause ${gcMaxMs.toFixed(0)} ms (all GC ${(gcTotalMs / 1000).toFixed(1)} s), RSS growth ${rssGrowthMiB} MiB; ${usd.leaves} leaves, total ${usd.total}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`,
    );
    console.log(`[${label}]   deciding alone (${values['alone-seconds']} s): ${decidingText(alone)}`);
    console.log(`[${label}]   deciding during the build:  ${decidingText(during)}`);
  }
  await load.stop();
  // A proof needs a final checkpoint: the anchor into a block, then that block final.
  await checkpoints!.ingest();
  await layer.produceBlocks(3, Date.now());
  await checkpoints!.ingest();
  for (let number = 1; number <= checkpoints!.latest!.number; number++) {
    const times: number[] = [];
    for (let i = 0; i < Number(values.proofs); i++) {
      const account = benchAccount(Math.floor(Math.random() * count));
      const start = performance.now();
      const proof = await checkpoints!.liabilities(number, 'USD', account);
      times.push(performance.now() - start);
      const reply = JSON.parse(JSON.stringify({ account, asset: 'USD', instance: proof.instance, checkpoint: checkpointView(proof.checkpoint), leaf: proof.leaf, index: proof.index, path: proof.path }));
      const verified = reportOf(liabilitiesChecks(reply, { account, asset: 'USD', instance: 1, anchored: reply.checkpoint }));
      if (!verified.passed) throw new Error(`the proof of ${account} does not verify: ${verified.report}`);
    }
    times.sort((a, b) => a - b);
    console.log(`liabilities proof among ${count} accounts (checkpoint ${number}): median ${times[times.length >> 1]!.toFixed(1)} ms, max ${times[times.length - 1]!.toFixed(1)} ms over ${times.length} random accounts (each verified)`);
  }
  await kernel.close();
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
