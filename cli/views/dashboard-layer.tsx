/**
 * The dashboard's settlement-layer pane: the layer's head and final height, whether it serves
 * (and until when its status holds), how far the book took it in, the withdrawals still
 * pending, and the last comparison of the book with the layer per bound asset.
 */
import { Box, Text } from 'ink';
import type { DashboardState, LayerFigures } from '../dashboard/model.js';
import { type AmountText, minorUnitsText } from '../money.js';
import { safe } from '../safe.js';
import { Table } from './table.js';

type Row = LayerFigures['comparison']['rows'][number];

export function LayerPane({ layer, nowMs, amount = minorUnitsText }: { layer: DashboardState['layer']; nowMs: number; amount?: AmountText }) {
  if (layer === null) return <Text dimColor>loading…</Text>;
  if ('unavailable' in layer) return <Text color="red">settlement layer: {safe(layer.unavailable)}</Text>;
  const stale = nowMs >= layer.freshUntilMs;
  return (
    <Box flexDirection="column">
      <Text>
        height {layer.height} · final {layer.finalHeight} · taken in {layer.takenIn} ·{' '}
        <Text color={layer.serving && !stale ? 'green' : 'red'}>{layer.serving ? (stale ? 'serving (status stale)' : 'serving') : 'not serving'}</Text> · pending instructions{' '}
        {layer.pendingInstructions}
      </Text>
      <Table
        columns={[
          { header: 'ASSET', value: (r: Row) => safe(r.asset) },
          { header: 'BOOK', value: (r) => amount(r.book, r.asset), alignRight: true },
          { header: 'LAYER', value: (r) => amount(r.layer, r.asset), alignRight: true },
          { header: 'DIFFERENCE', value: (r) => amount(r.difference, r.asset), alignRight: true },
          { header: 'LIABILITIES', value: (r) => (r.liabilities === null ? '-' : amount(r.liabilities, r.asset)), alignRight: true },
          // CONTRACT 12.6: an insolvent asset is marked so an operator sees it at a glance.
          { header: 'SOLVENT', value: (r) => (r.solvent === null ? '-' : r.solvent ? 'yes' : 'NO: INSOLVENT') },
        ]}
        rows={layer.comparison.rows}
        empty="(no bound asset)"
      />
      {layer.comparison.rows.some((r) => r.solvent === false) && (
        <Text color="red" bold>
          INSOLVENT: the layer holds less than the customers' liabilities in {layer.comparison.rows.filter((r) => r.solvent === false).map((r) => safe(r.asset)).join(', ')}
        </Text>
      )}
      <Text color={layer.comparison.differs ? 'red' : undefined} dimColor={!layer.comparison.differs}>
        last comparison at height {layer.comparison.height}: {layer.comparison.differs ? 'the book and the layer DIFFER' : 'no difference'}
      </Text>
    </Box>
  );
}
