/** What the dashboard's proposals pane reads: the open approval proposals (CONTRACT 13; any member may read them). */
import type { ProposalView, ProposalsPage } from '../api.js';
import type { LedgerClient } from '../client.js';
import type { ProposalsFigures } from './model.js';

/** Open proposals one read shows at most (newest first); more are counted as "more". */
export const openProposalsShownMax = 50;

export async function readProposals(client: LedgerClient): Promise<ProposalsFigures> {
  const page = await client.get<ProposalsPage>('/v1/ops/proposals', { state: 'open', limit: openProposalsShownMax });
  return { items: page.items.map((p: ProposalView) => ({ proposal: p.proposal, proposer: p.proposer, proposedAtMs: p.proposed_at, method: p.request.method, path: p.request.path, justification: p.justification })), more: page.next !== undefined };
}
