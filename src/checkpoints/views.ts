/** The wire shapes of checkpoints and comparisons (spec 2.2). */
import type { Comparison } from '../settlement/comparison.js';
import { differs, solvent } from '../settlement/comparison.js';
import type { Wire } from '../queries/wire.js';
import type { Checkpoint } from './checkpoints.js';

/** A checkpoint object (CONTRACT 9, 12.3): version 2 adds `version`, `previous` and `liabilities`. */
export function checkpointView(c: Checkpoint): Wire {
  const v1 = { commitment: c.commitment, created_at: c.createdAtMs, entry_sequence: c.entrySequence, kernel_root: c.kernelRoot, number: c.number, status: c.status };
  if (c.version !== 2) return v1;
  const liabilities = Object.fromEntries(Object.entries(c.liabilities!).map(([asset, r]) => [asset, { leaves: r.leaves, root: r.root, total: r.total }]));
  return { ...v1, liabilities, previous: c.previous, version: 2 };
}

export function comparisonView(c: Comparison): Wire {
  return {
    anchors: [...c.anchors],
    at: c.atMs,
    cut: c.cut,
    differs: differs(c),
    height: c.height,
    rows: c.rows.map((r) => ({
      asset: r.asset,
      book: r.bookMinor.toString(),
      layer: r.layerMinor.toString(),
      difference: (r.layerMinor - r.bookMinor).toString(),
      liabilities: r.liabilitiesMinor === null ? null : r.liabilitiesMinor.toString(),
      liabilities_checkpoint: r.liabilitiesCheckpoint,
      solvent: solvent(r),
    })),
  };
}
