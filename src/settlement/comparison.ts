/**
 * A settlement comparison (spec 2.2): at the last final height the book took in, the
 * inbox cut and, per bound asset, what the book records as held on the layer against
 * the holdings that block declares (made by daemon/settlement.ts `compare`).
 */

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

export const differs = (c: Comparison) => c.rows.some((r) => r.layerMinor !== r.bookMinor);
