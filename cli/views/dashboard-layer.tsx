/**
 * The dashboard's settlement-layer pane: the layer's head and final height, how far behind the
 * final one the book has taken it in (the lag), whether it serves (and until when its status holds), the
 * withdrawals still pending, and the last comparison of the book with the layer per bound asset.
 */
import { Box, Text } from 'ink';
import type { DashboardState, LayerFigures } from '../dashboard/model.js';
import { type AmountText, minorUnitsText } from '../money.js';
import { time } from '../output.js';
import { safe } from '../safe.js';
import { Table } from './table.js';

type Row = LayerFigures['comparison']['rows'][number];

export interface LayerPaneProps {
  layer: DashboardState['layer'];
  nowMs: number;
  /** Full column names at 120 columns and more; abbreviated below, to fit 80. */
  wide?: boolean;
  amount?: AmountText;
}

export function LayerPane({ layer, nowMs, wide = true, amount = minorUnitsText }: LayerPaneProps) {
  if (layer === null) return <Text dimColor>loading…</Text>;
  if ('unavailable' in layer) return <Text color="red">settlement layer: {safe(layer.unavailable)}</Text>;
  const stale = nowMs >= layer.freshUntilMs;
  // Final blocks the book has not taken in yet (it takes in only final ones: the rest are the layer's to undo).
  const lag = Math.max(0, layer.finalHeight - layer.takenIn);
  const insolvent = layer.comparison.rows.filter((r) => r.solvent === false).map((r) => safe(r.asset));
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        height {layer.height} · final {layer.finalHeight} · book took in {layer.takenIn} · <Text color={lag > 0 ? 'yellow' : 'green'}>lag {lag}</Text>
      </Text>
      <Text wrap="truncate-end">
        <Text color={layer.serving && !stale ? 'green' : 'red'}>{layer.serving ? (stale ? 'serving (status stale)' : 'serving') : 'NOT SERVING'}</Text>
        <Text dimColor> until {time(layer.freshUntilMs).slice(11, 19)}</Text> · pending instructions <Text bold>{layer.pendingInstructions}</Text>
      </Text>
      <Table
        columns={[
          { header: 'ASSET', value: (r: Row) => safe(r.asset) },
          { header: 'BOOK', value: (r) => amount(r.book, r.asset), alignRight: true },
          { header: 'LAYER', value: (r) => amount(r.layer, r.asset), alignRight: true },
          { header: wide ? 'DIFFERENCE' : 'DIFF', value: (r) => amount(r.difference, r.asset), alignRight: true },
          { header: wide ? 'LIABILITIES' : 'LIABS', value: (r) => (r.liabilities === null ? '-' : amount(r.liabilities, r.asset)), alignRight: true },
          // CONTRACT 12.6: an insolvent asset is marked so an operator sees it at a glance.
          { header: 'SOLVENT', value: (r) => (r.solvent === null ? '-' : r.solvent ? 'yes' : wide ? 'NO: INSOLVENT' : 'NO') },
        ]}
        rows={layer.comparison.rows}
        empty="(no bound asset)"
      />
      {insolvent.length > 0 && (
        <Text color="red" bold wrap="truncate-end">
          INSOLVENT: the layer holds less than the customers&apos; liabilities in {insolvent.join(', ')}
        </Text>
      )}
      <Text color={layer.comparison.differs ? 'red' : undefined} dimColor={!layer.comparison.differs} wrap="truncate-end">
        last comparison at height {layer.comparison.height}: {layer.comparison.differs ? 'the book and the layer DIFFER' : 'no difference'}
      </Text>
    </Box>
  );
}
