/**
 * Queue fairness of the embedded settlement layer (docs/reliability.md): one source floods
 * the mempool with instructions the layer cannot pay (it holds nothing), then a victim's
 * deposit and a checkpoint anchor arrive; blocks are made one at a time until both are in
 * a final block. Prints how many blocks that took, and what one block costs with the flood
 * waiting. In memory; nothing is asserted.
 *
 *   npm run build && node dist/bench/layer-fairness.js [--flood 2000] [--expiry 100] [--depth 2]
 */
import { parseArgs } from 'node:util';
import { EmbeddedLayer } from '../src/settlement/embedded.js';
import { MemoryStore } from '../src/store/memory.js';

const { values: args } = parseArgs({
  options: {
    flood: { type: 'string', default: '2000' },
    expiry: { type: 'string', default: '100' },
    depth: { type: 'string', default: '2' },
  },
});
const flood = Number(args.flood);
const expiryHeight = Number(args.expiry);
const finalityDepth = Number(args.depth);
const location = 'ab'.repeat(32);
const hex = (n: number) => n.toString(16).padStart(64, '0');

const layer = await EmbeddedLayer.open({ store: new MemoryStore(), instance: 1, finalityDepth });
for (let i = 0; i < flood; i++) {
  await layer.submitInstruction({ digest: hex(i + 1), location, amountMinor: 1n, destination: { account: 'cd'.repeat(32) }, expiryHeight }, 'did:ledger:id:mallory');
}
await layer.produceBlocks(1, 1);
const startHeight = layer.currentHead.height;
const deposit = await layer.placeDeposit({ location, amountMinor: 5n, accountRef: 'ef'.repeat(32) });
await layer.submitAnchor({ number: 1, commitment: 'aa'.repeat(32) });

let depositAt: number | null = null;
let anchorAt: number | null = null;
let slowestMs = 0;
const limit = expiryHeight + Math.ceil(flood / 1000) + 50;
for (let made = 0; made < limit && (depositAt === null || anchorAt === null); made++) {
  const started = performance.now();
  const [block] = await layer.produceBlocks(1, 2 + made);
  slowestMs = Math.max(slowestMs, performance.now() - started);
  if (block!.deposits.some((d) => d.coordinate.seq === deposit.coordinate.seq)) depositAt = block!.height;
  if (block!.anchors.some((a) => a.number === 1)) anchorAt = block!.height;
}
const toFinal = (at: number | null) => (at === null ? `not within ${limit} blocks` : String(at - startHeight + finalityDepth));
console.log(`flood ${flood} unpayable instructions of one source (expiry height ${expiryHeight}), finality depth ${finalityDepth}`);
console.log(`| victim | blocks until final |`);
console.log(`|---|---|`);
console.log(`| deposit | ${toFinal(depositAt)} |`);
console.log(`| checkpoint anchor | ${toFinal(anchorAt)} |`);
console.log(`slowest block with the flood waiting: ${slowestMs.toFixed(1)} ms; still waiting: ${layer.mempoolSize}`);
