/** What the dashboard's layer pane reads: the settlement status and a comparison (both the operator's). */
import { randomBytes } from 'node:crypto';
import type { LedgerClient } from '../client.js';
import type { Comparison, SettlementStatus } from '../commands/settlement/settlement.js';
import type { LayerFigures } from './model.js';

export async function readLayer(client: LedgerClient): Promise<LayerFigures> {
  const status = await client.get<SettlementStatus>('/v1/ops/settlement/status');
  // A comparison is a command (CONTRACT 9) answered once per client key: each refresh asks anew under a key of its own.
  const reply = await client.command('/v1/ops/settlement/comparisons', {}, { clientKey: randomBytes(16).toString('hex') });
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
