/**
 * The dashboard's proposals pane: the open approval proposals (CONTRACT 13), who proposed each,
 * when, the act it asks for and its justification, newest first. Approving stays a deliberate
 * act at the prompt of `ledgerctl ops proposals approve`, never a key in a live view.
 */
import { Box, Text } from 'ink';
import { shortId } from '../dashboard/abbrev.js';
import { ageText } from '../dashboard/metrics.js';
import type { DashboardState, ProposalsFigures } from '../dashboard/model.js';
import { safe } from '../safe.js';
import { Table } from './table.js';

type Row = ProposalsFigures['items'][number];

/** Characters each column shows at 120 columns and more, and below (the whole proposal: `ledgerctl ops proposals show`). */
const widths = { wide: { by: 16, act: 28, why: 24 }, narrow: { by: 10, act: 20, why: 22 } };

const cut = (text: string, width: number) => (text.length <= width ? text : `${text.slice(0, width - 1)}…`);

export function ProposalsPane({ proposals, nowMs, wide, rows }: { proposals: DashboardState['proposals']; nowMs: number; wide: boolean; rows: number }) {
  if (proposals === null) return <Text dimColor>loading…</Text>;
  if ('unavailable' in proposals) return <Text color="red">proposals: {safe(proposals.unavailable)}</Text>;
  const shown = proposals.items.slice(0, rows);
  const width = wide ? widths.wide : widths.narrow;
  return (
    <Box flexDirection="column">
      <Table
        columns={[
          // Wide, the id whole without its prefix (what `ops proposals approve` takes); narrow, cut in the middle.
          { header: 'PROPOSAL', value: (p: Row) => (wide ? safe(p.proposal.replace(/^did:ledger:proposal:/, '')) : shortId(safe(p.proposal), 10)) },
          { header: 'BY', value: (p) => cut(safe(p.proposer), width.by) },
          { header: 'ACT', value: (p) => cut(safe(p.path.replace(/^\/v1\//, '')), width.act) },
          { header: 'WHY', value: (p) => cut(safe(p.justification), width.why) },
          { header: 'AGE', value: (p) => ageText(p.proposedAtMs, nowMs) },
        ]}
        rows={shown}
        empty="(no open proposals)"
      />
      <Text dimColor wrap="truncate-end">
        {proposals.items.length} open{proposals.more || proposals.items.length > shown.length ? ' (more: ledgerctl ops proposals list)' : ''}
        {wide ? ' · approve with ledgerctl ops proposals approve' : ''}
      </Text>
    </Box>
  );
}
