/**
 * The daemon's side of settlement (CONTRACT 9): it opens the embedded layer over the
 * book's store and makes a block every `blockIntervalMs` while the layer serves (0:
 * blocks only on request). Timers live here; what a block holds and what follows from
 * it is decided in src/ with the time passed in.
 */
import type { FastifyBaseLogger } from 'fastify';
import { EmbeddedLayer } from '../src/settlement/embedded.js';
import type { Store } from '../src/store/port.js';
import type { SettlementConfig } from './config.js';

export interface Settlement {
  readonly layer: EmbeddedLayer;
  readonly config: SettlementConfig;
  /** Starts the block timer. */
  start(log: FastifyBaseLogger): void;
  /** Stops the timer and waits for the layer's change in flight. */
  close(): Promise<void>;
}

export async function openSettlement(store: Store, config: SettlementConfig, clock: () => number): Promise<Settlement> {
  const layer = await EmbeddedLayer.open({ store, instance: config.instance, finalityDepth: config.finalityDepth });
  let timer: NodeJS.Timeout | null = null;
  let ticking: Promise<unknown> = Promise.resolve();
  return {
    layer,
    config,
    start(log) {
      if (config.blockIntervalMs === 0 || timer !== null) return;
      timer = setInterval(() => {
        // A stopped layer makes no blocks by itself; blocks on request still advance it (CONTRACT 9).
        if (!layer.serving) return;
        ticking = layer.produceBlocks(1, clock()).catch((error: unknown) => log.error({ err: error }, 'the embedded settlement layer could not make a block'));
      }, config.blockIntervalMs);
      timer.unref();
    },
    async close() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      await ticking;
    },
  };
}
