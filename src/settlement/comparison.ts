/**
 * A settlement comparison (spec 2.2) at the layer's final head: the inbox cut and
 * holdings of the final block against what the book records as held on the layer, per
 * bound asset. Until assets are bound to locations (settlement flows) no asset is
 * compared, so `rows` is empty and nothing differs.
 */
import type { SettlementAdapter } from './adapter.js';

export interface ComparisonRow {
  readonly asset: string;
  readonly bookMinor: bigint;
  readonly layerMinor: bigint;
}

export interface Comparison {
  /** The final checkpoints it is the record of. */
  readonly anchors: readonly number[];
  readonly atMs: number;
  readonly cut: number;
  readonly height: number;
  readonly rows: readonly ComparisonRow[];
}

/** `anchorsAt`: the final checkpoints a comparison at a height is the record of (Checkpoints.anchoredAt). */
export async function compareAtFinal(adapter: SettlementAdapter, anchorsAt: (height: number) => Promise<number[]>, nowMs: number): Promise<Comparison> {
  const { finalHeight } = await adapter.head();
  const block = finalHeight === 0 ? undefined : (await adapter.blocks(finalHeight, finalHeight))[0];
  return { anchors: await anchorsAt(finalHeight), atMs: nowMs, cut: block?.inboxCut ?? 0, height: finalHeight, rows: [] };
}

export const differs = (c: Comparison) => c.rows.some((r) => r.layerMinor !== r.bookMinor);
