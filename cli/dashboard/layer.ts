/** What the dashboard's layer pane reads: the settlement status and a comparison (both the operator's). */
import type { LedgerClient } from '../client.js';
import type { Comparison, SettlementStatus } from '../commands/settlement/settlement.js';
import type { LayerFigures } from './model.js';

export async function readLayer(client: LedgerClient): Promise<LayerFigures> {
  const status = await client.get<SettlementStatus>('/v1/ops/settlement/status');
  // A comparison is a command (CONTRACT 9), its reply kept under its client key. It is made at the last final
  // height the book took in and changes only with it: one key per height, so refreshes at one height (and other
  // dashboards) get the kept reply and the book keeps one comparison per height watched, not one per refresh.
  const reply = await client.command('/v1/ops/settlement/comparisons', {}, { clientKey: `dashboard-comparison-at-${status.taken_in}` });
  const settlement = reply.result?.settlement as unknown as { comparison: Comparison };
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
