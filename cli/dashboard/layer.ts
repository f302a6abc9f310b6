/** What the dashboard's layer pane reads: the settlement status and a comparison (both the operator's). */
import type { LedgerClient } from '../client.js';
import type { Comparison, SettlementStatus } from '../commands/settlement/settlement.js';
import type { LayerFigures } from './model.js';

export async function readLayer(client: LedgerClient): Promise<LayerFigures> {
  const status = await client.get<SettlementStatus>('/v1/ops/settlement/status');
  const { settlement } = await client.post<{ settlement: { comparison: Comparison } }>('/v1/ops/settlement/comparisons', {});
  return {
    serving: status.serving,
    height: status.height,
    finalHeight: status.final_height,
    takenIn: status.taken_in,
    pendingInstructions: status.pending_instructions,
    freshUntilMs: status.fresh_until,
    comparison: settlement.comparison,
  };
}
