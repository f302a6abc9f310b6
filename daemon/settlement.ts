/**
 * The daemon's side of settlement and the verifiable book (CONTRACT 9): it opens the
 * embedded layer over the book's store, makes a block every `blockIntervalMs` while
 * the layer serves (0: blocks only on request), takes the layer's blocks in as they
 * are made (checkpoints move to `submitted` and `final` by themselves), and takes a
 * checkpoint every `checkpointIntervalMs` when entries were added since the last.
 * Timers live here; what follows from a block or a checkpoint is decided in src/
 * with the time passed in. The flows (deposits in, withdrawals out, bindings) are
 * carried by daemon/settlement-flows.ts.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Kernel } from '../src/book/kernel.js';
import type { Command } from '../src/model/model.js';
import type { BookView } from '../src/queries/queries.js';
import { Checkpoints } from '../src/checkpoints/checkpoints.js';
import { refuse } from '../src/errors.js';
import type { Comparison } from '../src/settlement/comparison.js';
import { decodeSettlementMeta, settlementAccountId } from '../src/settlement/book.js';
import { EmbeddedLayer } from '../src/settlement/embedded.js';
import type { Store } from '../src/store/port.js';
import type { Clerk } from './clerk.js';
import type { SettlementConfig } from './config.js';
import { DirectCommands } from './http/direct-command.js';
import { settlementFlows } from './settlement-flows.js';
import type { ReadGate } from './snapshot-slots.js';
import { settlementKeys } from '../src/model/keys.js';
import { settlementPendingCountMax } from './constants.js';

export interface Settlement {
  /** The book's store, where the layer, checkpoints and direct commands keep their records. */
  readonly store: Store;
  readonly layer: EmbeddedLayer;
  readonly checkpoints: Checkpoints;
  readonly clerk: Clerk;
  readonly direct: DirectCommands;
  /** The `settle` command that takes in what the layer holds now (null: nothing new since the book's last final height). */
  settleCommand(kernel: Kernel, always: boolean): Promise<Command | null>;
  /** Refuses with ERR-SettlementLayerUnavailable while the layer is not serving or its status is stale. */
  requireServing(nowMs: number): Promise<void>;
  /** Per bound asset, what the book records as held on the layer against what the layer holds, at the last final height the book took in (spec 2.2). */
  compare(view: BookView, nowMs: number): Promise<Comparison>;
  /** Starts the timers and takes in the blocks made while the daemon was down; its own reads of the book go through `gate` (the read slots). */
  start(log: FastifyBaseLogger, gate: ReadGate): Promise<void>;
  /** Stops the timers and waits for the work in flight. */
  close(): Promise<void>;
}

/** How far the book took the layer in (CONTRACT 9, the settlement status): its last final height and inbox cut, and the withdrawals not yet Completed or Expired, counted up to settlementPendingCountMax + 1. */
export async function settlementProgress(kernel: Kernel): Promise<{ takenIn: number; cut: number; pending: number }> {
  const meta = decodeSettlementMeta(await kernel.settlementRecord(settlementKeys.meta));
  const pending = await kernel.settlementRecords(settlementKeys.pendingPrefix, settlementKeys.pendingPrefix, settlementPendingCountMax + 1);
  return { takenIn: meta.height, cut: meta.cut, pending: pending.length };
}

/** The embedded layer over the book's store, as the config places it. */
export function openLayer(store: Store, config: SettlementConfig): Promise<EmbeddedLayer> {
  return EmbeddedLayer.open({ store, instance: config.instance, finalityDepth: config.finalityDepth, statusFreshMs: config.statusFreshMs });
}

export interface SettlementOptions {
  readonly store: Store;
  /** Opened before the kernel, which reads the layer's height for instruction expiries. */
  readonly layer: EmbeddedLayer;
  readonly kernel: Kernel;
  readonly clerk: Clerk;
  readonly config: SettlementConfig;
  readonly clock: () => number;
  /** `DIR/liabilities.key` (absent: a fresh key, for tests). */
  readonly liabilitiesKey?: Buffer;
}

export async function openSettlement({ store, layer, kernel, clerk, config, clock, liabilitiesKey }: SettlementOptions): Promise<Settlement> {
  const flows = settlementFlows(layer);
  const checkpoints = await Checkpoints.open(store, layer, liabilitiesKey);
  const timers: NodeJS.Timeout[] = [];
  const inFlight = new Set<Promise<unknown>>();
  let offBlocks: (() => void) | null = null;
  const track = (work: Promise<unknown>, log: FastifyBaseLogger, what: string) => {
    const done = work.catch((error: unknown) => log.error({ err: error }, what)).finally(() => inFlight.delete(done));
    inFlight.add(done);
  };
  const requireServing = async (nowMs: number) => {
    const status = await layer.status(nowMs);
    if (!status.serving) refuse('ERR-SettlementLayerUnavailable', 'the settlement layer is not serving');
    if (nowMs >= status.freshUntilMs) refuse('ERR-SettlementLayerUnavailable', "the settlement layer's status is stale");
  };
  return {
    store,
    layer,
    checkpoints,
    clerk,
    direct: new DirectCommands(kernel, store),
    requireServing,
    // Book and settlement records read in the caller's one view, against the layer's block at that height.
    async compare(view, nowMs) {
      const meta = decodeSettlementMeta(await view.settlementRecord(settlementKeys.meta));
      const [block] = meta.height === 0 ? [] : await layer.blocks(meta.height, meta.height);
      const held = block?.held ?? {};
      const anchors = await checkpoints.anchoredAt(meta.height);
      // CONTRACT 12.6: the customers' liabilities in the newest checkpoint this comparison is the record of, if of version 2.
      const newest = anchors.length === 0 ? undefined : await checkpoints.get(anchors[anchors.length - 1]!);
      const liabilitiesOf = (asset: string) => (newest?.version === 2 ? { liabilitiesMinor: BigInt(newest.liabilities![asset]?.total ?? '0'), liabilitiesCheckpoint: newest.number } : { liabilitiesMinor: null, liabilitiesCheckpoint: null });
      const rows = [];
      for (const asset of kernel.assetList.filter((a) => a.binding === 'bound' && a.location !== null)) {
        const balance = await view.balance(settlementAccountId, asset.id);
        // The settlement account goes below zero by what the book records as held on the layer.
        rows.push({ asset: asset.id, bookMinor: -(balance.available + balance.reserved + balance.encumbered), layerMinor: held[asset.location!] ?? 0n, ...liabilitiesOf(asset.id) });
      }
      return { anchors, atMs: nowMs, cut: meta.cut, height: meta.height, rows };
    },
    settleCommand: flows.settleCommand,
    async start(log, gate) {
      offBlocks = layer.onBlocks(() => track(checkpoints.ingest(), log, 'the checkpoints could not take in a block'));
      await checkpoints.ingest();
      flows.start(log, kernel, gate);
      if (config.blockIntervalMs > 0) {
        // A stopped layer makes no blocks by itself; blocks on request still advance it (CONTRACT 9).
        const tick = () => layer.serving && track(layer.produceBlocks(1, clock()), log, 'the embedded settlement layer could not make a block');
        timers.push(setInterval(tick, config.blockIntervalMs));
      }
      if (config.checkpointIntervalMs > 0) {
        // One automatic checkpoint at a time: a long one (a large first checkpoint) is not queued behind by the next tick.
        let taking = false;
        const due = () => !taking && layer.serving && kernel.currentHead.postingSeq > (checkpoints.latest?.entrySequence ?? 0);
        // A stale status waits like a stopped layer (the command would be refused with ERR-SettlementLayerUnavailable).
        const takeWhileFresh = async () => {
          const nowMs = clock();
          if (nowMs < (await layer.status(nowMs)).freshUntilMs) await gate(() => checkpoints.take(nowMs));
        };
        const take = () => {
          taking = true;
          track(takeWhileFresh().finally(() => (taking = false)), log, 'an automatic checkpoint failed');
        };
        timers.push(setInterval(() => due() && take(), config.checkpointIntervalMs));
      }
      for (const timer of timers) timer.unref();
    },
    async close() {
      for (const timer of timers.splice(0)) clearInterval(timer);
      offBlocks?.();
      // A large checkpoint's liabilities build would hold the shutdown for seconds: abandoned (taken again after a restart).
      checkpoints.close();
      await flows.close();
      while (inFlight.size > 0) await Promise.all(inFlight);
    },
  };
}
