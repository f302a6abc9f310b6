/**
 * Profiles bench/kernel's 1-leg workload (10,000 delegated accounts, the operator
 * submitting with 1,024 in flight, LevelDB fsync'd) after a warm-up of 5,000 transfers:
 *
 *   --profile alloc   what is allocated, collected objects included (the inspector's sampling
 *                     heap profiler; `--heap-prof` keeps only what survives): bytes per transfer
 *                     by allocating function and by its last frames, and DIR/kernel.heapprofile
 *   --profile cpu     DIR/kernel.cpuprofile (open it in Chrome's DevTools, or bench/profile-split.ts)
 *   --profile rounds  no profiler: how a decision round's wall time splits between planning it
 *                     (its reads, then building it in memory) and committing it (the write and
 *                     what follows), and how busy the decider was: what overlapping the planning
 *                     of the next round with this one's write could at most give
 *
 * Each prints the CPU per transfer (all threads) of the profiled run. Nothing is asserted.
 *
 *   npm run build && node dist/bench/kernel-profile.js --profile alloc [--transfers 30000] [--dir DIR]
 */
import { createHash } from 'node:crypto';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { builtInPrincipals } from '../src/auth/authority.js';
import { Decider } from '../src/book/decider.js';
import { importGenesis } from '../src/book/genesis.js';
import { Kernel, type Submission } from '../src/book/kernel.js';
import { BookReader } from '../src/book/prefetch.js';
import { Refused } from '../src/errors.js';
import { sequentialIds } from '../src/model/ids.js';
import type { AssetSymbol, CredentialId, IdentityId } from '../src/model/values.js';
import { benchAccount, fundedCustomersGenesis } from './genesis.js';
import { BenchStores } from './stores.js';

const { values: args } = parseArgs({
  options: {
    profile: { type: 'string', default: 'alloc' },
    transfers: { type: 'string', default: '30000' },
    dir: { type: 'string', default: tmpdir() },
  },
});
const mode = args.profile;
if (mode !== 'alloc' && mode !== 'cpu' && mode !== 'rounds') throw new Error('--profile: alloc, cpu or rounds');
const transfers = Number(args.transfers);
const accounts = 10_000;
const inFlight = 1024;
const warmUp = 5_000;
const operator = { principal: builtInPrincipals.operator as IdentityId, credential: 'did:ledger:cred:operator' as CredentialId, onBehalfOf: null };

/** bench/kernel's 1-leg transfer number `n`. */
function submission(n: number): Submission {
  return {
    command: { type: 'transfer', legs: [{ from: benchAccount((n * 7) % accounts), to: benchAccount((n * 7 + 1) % accounts), asset: 'USD' as AssetSymbol, amountMinor: 1n + BigInt(n % 3) }], deadlineMs: Number.MAX_SAFE_INTEGER },
    actor: operator,
    clientKey: `b-1-${n}`,
    requestDigest: createHash('sha256').update(`1/${n}`).digest('hex'),
    reference: null,
  };
}

async function drive(kernel: Kernel, from: number, to: number): Promise<void> {
  let next = from;
  const worker = async () => {
    while (next < to) {
      const sub = submission(next++);
      for (;;) {
        try {
          await kernel.submit(sub);
          break;
        } catch (error) {
          if (!(error instanceof Refused) || error.refusal.error !== 'ERR-DecisionUnavailable') throw error;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  await kernel.idle();
}

/** Wall time spent in the decider's rounds, by step (rounds mode): the methods timed are wrapped in place. */
const timing = { rounds: 0, commands: 0, planMs: 0, readsMs: 0, roundMs: 0 };
function timeRounds(): void {
  type Methods = Record<string, (...a: unknown[]) => Promise<unknown>>;
  const wrap = (proto: Methods, name: string, field: 'planMs' | 'readsMs' | 'roundMs') => {
    const method = proto[name]!;
    proto[name] = async function (this: unknown, ...a: unknown[]) {
      const startMs = performance.now();
      try {
        return await method.apply(this, a);
      } finally {
        timing[field] += performance.now() - startMs;
        if (field === 'planMs') {
          timing.rounds++;
          timing.commands += (a[1] as readonly unknown[]).length;
        }
      }
    };
  };
  wrap(Decider.prototype as unknown as Methods, 'planRound', 'planMs');
  wrap(BookReader.prototype as unknown as Methods, 'roundReads', 'readsMs');
  wrap(Decider.prototype as unknown as Methods, 'decideRound', 'roundMs');
}

interface HeapNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly HeapNode[];
}

/** Bytes per transfer by allocating function, and by its last three frames. */
function printAllocations(head: HeapNode): void {
  const byFunction = new Map<string, number>();
  const byStack = new Map<string, number>();
  let total = 0;
  const name = (n: HeapNode) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/.*\/(dist|node_modules)\//, '')}:${n.callFrame.lineNumber + 1}`;
  const walk = (n: HeapNode, path: readonly string[]) => {
    const here = [...path, name(n)];
    if (n.selfSize > 0) {
      total += n.selfSize;
      byFunction.set(here.at(-1)!, (byFunction.get(here.at(-1)!) ?? 0) + n.selfSize);
      const stack = here.slice(-3).reverse().join(' < ');
      byStack.set(stack, (byStack.get(stack) ?? 0) + n.selfSize);
    }
    for (const child of n.children) walk(child, here);
  };
  walk(head, []);
  console.log(`allocated ${(total / transfers).toFixed(0)} B per transfer (sampled)\n\n| B per transfer | allocated in |\n|---:|---|`);
  const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  for (const [where, bytes] of top(byFunction, 40)) console.log(`| ${(bytes / transfers).toFixed(0)} | ${where} |`);
  console.log('\n| B per transfer | last frames |\n|---:|---|');
  for (const [where, bytes] of top(byStack, 40)) console.log(`| ${(bytes / transfers).toFixed(0)} | ${where} |`);
}

async function main() {
  const stores = new BenchStores();
  const { store, remove } = await stores.open('leveldb');
  await importGenesis(store, fundedCustomersGenesis(accounts, 1_000_000n), Date.now());
  const kernel = await Kernel.open({ store, clock: Date.now, ids: sequentialIds, sync: true, onFatal: (e) => { throw e; } });
  await drive(kernel, 0, warmUp);
  const session = new Session();
  session.connect();
  if (mode === 'alloc') {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  } else if (mode === 'cpu') {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
  } else timeRounds();
  const cpuBefore = process.cpuUsage();
  const startMs = performance.now();
  await drive(kernel, warmUp, warmUp + transfers);
  const seconds = (performance.now() - startMs) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  console.log(`${transfers} 1-leg transfers profiled (${mode}): ${(transfers / seconds).toFixed(0)} decided/s, ${((cpu.user + cpu.system) / transfers).toFixed(1)} µs CPU per transfer (all threads)`);
  if (mode === 'alloc') {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    writeFileSync(join(args.dir, 'kernel.heapprofile'), JSON.stringify(profile));
    printAllocations(profile.head as unknown as HeapNode);
  } else if (mode === 'cpu') {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(join(args.dir, 'kernel.cpuprofile'), JSON.stringify(profile));
    console.log(`written: ${join(args.dir, 'kernel.cpuprofile')}`);
  } else {
    const t = timing;
    const perRound = (ms: number) => (ms / t.rounds).toFixed(1);
    console.log(`${t.rounds} rounds of ${(t.commands / t.rounds).toFixed(0)} commands; per round, ms of wall time: planning ${perRound(t.planMs)} (its reads ${perRound(t.readsMs)}, building it ${perRound(t.planMs - t.readsMs)}), committing ${perRound(t.roundMs - t.planMs)}`);
    console.log(`the decider in a round ${((100 * t.roundMs) / 1000 / seconds).toFixed(0)}% of the wall time; planning the next round during this one's commit would take a round from ${perRound(t.roundMs)} ms to at least ${perRound(Math.max(t.planMs, t.roundMs - t.planMs))} ms`);
  }
  session.disconnect();
  await kernel.close();
  remove();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
