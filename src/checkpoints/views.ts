/** The wire shapes of checkpoints and comparisons (spec 2.2). */
import type { Comparison } from '../settlement/comparison.js';
import { differs } from '../settlement/comparison.js';
import type { Wire } from '../queries/wire.js';
import type { Checkpoint } from './checkpoints.js';

export function checkpointView(c: Checkpoint): Wire {
  return { commitment: c.commitment, created_at: c.createdAtMs, entry_sequence: c.entrySequence, kernel_root: c.kernelRoot, number: c.number, status: c.status };
}

export function comparisonView(c: Comparison): Wire {
  return {
    anchors: [...c.anchors],
    at: c.atMs,
    cut: c.cut,
    differs: differs(c),
    height: c.height,
    rows: c.rows.map((r) => ({ asset: r.asset, book: r.bookMinor.toString(), layer: r.layerMinor.toString(), difference: (r.layerMinor - r.bookMinor).toString() })),
  };
}
