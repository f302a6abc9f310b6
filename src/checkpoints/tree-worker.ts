/**
 * The liabilities tree worker (started by tree-thread.ts, one per build): takes in the
 * customers' layers per asset as the main thread reads them, then builds the trees
 * (liabilities-build.ts) and sends their records back in batches, at most
 * `liabilitiesBatchesUnwritten` not yet written, then the roots. Text crosses the thread
 * boundary in transferred buffers: account, layers or key, value, one a line.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AssertionFailure, assert } from '../assert.js';
import { liabilitiesBatchesUnwritten, liabilitiesSliceLeaves } from '../constants.js';
import { buildTrees } from './liabilities-build.js';
import type { LiabilitiesScope } from './liabilities-leaves.js';
import { PackedLeaves } from './packed-leaves.js';
import { type FromTreeWorker, type ToTreeWorker, type TreeWorkerData, linesOf } from './tree-messages.js';

const port = parentPort;
assert(port !== null, 'the tree worker runs on a worker thread');
const data = workerData as TreeWorkerData;
const scope: LiabilitiesScope = { key: Buffer.from(data.key), instance: data.instance, number: data.number };
const holdings = new Map<string, PackedLeaves>();
const encoder = new TextEncoder();
let unwritten = 0;
let wake: (() => void) | null = null;

function takeLeaves(asset: string, text: Uint8Array): void {
  const lines = linesOf(text);
  assert(lines.length % 4 === 0, 'leaves come as four lines each');
  let leaves = holdings.get(asset);
  if (leaves === undefined) holdings.set(asset, (leaves = new PackedLeaves()));
  for (let i = 0; i < lines.length; i += 4) leaves.push({ account: lines[i]!, available: BigInt(lines[i + 1]!), reserved: BigInt(lines[i + 2]!), encumbered: BigInt(lines[i + 3]!) });
}

function send(message: FromTreeWorker, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

async function build(): Promise<void> {
  try {
    let lines: string[] = [];
    const flush = async () => {
      if (unwritten === liabilitiesBatchesUnwritten) await new Promise<void>((resolve) => (wake = resolve));
      unwritten++;
      const text = encoder.encode(lines.join('\n'));
      lines = [];
      send({ kind: 'records', text }, [text.buffer as ArrayBuffer]);
    };
    const roots = await buildTrees(scope, holdings, async (key, value) => {
      lines.push(key, value);
      if (lines.length === 2 * liabilitiesSliceLeaves) await flush();
    });
    if (lines.length > 0) await flush();
    send({ kind: 'roots', roots });
  } catch (error) {
    send({ kind: 'failed', message: (error as Error).message, assertion: error instanceof AssertionFailure });
  }
}

port.on('message', (m: ToTreeWorker) => {
  if (m.kind === 'leaves') takeLeaves(m.asset, m.text);
  else if (m.kind === 'end') void build();
  else {
    unwritten--;
    wake?.();
    wake = null;
  }
});
