/**
 * A settlement comparison (spec 2.2): at the last final height the book took in, the
 * inbox cut and, per bound asset, what the book records as held on the layer against
 * the holdings that block declares (made by daemon/settlement.ts `compare`).
 */

export interface ComparisonRow {
  readonly asset: string;
  readonly bookMinor: bigint;
  readonly layerMinor: bigint;
  /** CONTRACT 12.6: the customers' total in the newest anchored checkpoint, when it is of version 2; else null. */
  readonly liabilitiesMinor: bigint | null;
  readonly liabilitiesCheckpoint: number | null;
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

/** CONTRACT 12.6: whether the layer holds at least the customers' liabilities; null without a version-2 checkpoint anchored. */
export const solvent = (r: ComparisonRow): boolean | null => (r.liabilitiesMinor === null ? null : r.layerMinor >= r.liabilitiesMinor);
