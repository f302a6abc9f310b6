/**
 * The dashboard's screen, a pure function of its state: a header with the connection and
 * ledgerd's status line, the panes, then the one selected (the operations pane scrolls, filters
 * and opens one operation whole).
 */
import { Box, Text } from 'ink';
import type { OperationView } from '../api.js';
import { type DashboardState, type Pane, detailOf, movesSummary, panes, rateSeries, visibleOperations } from '../dashboard/model.js';
import { ageText, statusText } from '../dashboard/metrics.js';
import { type AmountText, minorUnitsText } from '../money.js';
import { details, time } from '../output.js';
import { safe } from '../safe.js';
import { BookPane } from './dashboard-book.js';
import { LayerPane } from './dashboard-layer.js';
import { Sparkline } from './sparkline.js';
import { Table } from './table.js';

export interface DashboardProps {
  state: DashboardState;
  url: string;
  nowMs: number;
  /** Rows the operations and reservations panes show (the terminal's height less the rest). */
  rows?: number;
  amount?: AmountText;
}

/** Lines the dashboard shows besides a pane's rows: header, connection, status, tabs, margin, table header, filter, footer, help. */
export const chromeLines = 9;

const titles: Record<Pane, string> = { balance: 'Trial balance', operations: 'Operations', rate: 'Decisions/s', reservations: 'Pending reservations', layer: 'Settlement layer' };

export function Dashboard({ state, url, nowMs, rows = 15, amount = minorUnitsText }: DashboardProps) {
  const series = rateSeries(state.rate, nowMs);
  return (
    <Box flexDirection="column">
      <Box>
        <Text bold>ledgerctl dashboard</Text>
        <Text> {safe(url)} </Text>
        <Sparkline values={series.slice(-20)} />
        <Text> {series[series.length - 2] ?? 0} decisions/s</Text>
      </Box>
      <ConnectionBadge state={state} />
      <Text dimColor={state.status === null || 'unavailable' in state.status} wrap="truncate-end">
        {state.status === null ? 'metrics: reading…' : safe(statusText(state.status, nowMs))}
      </Text>
      <Box>
        {panes.map((pane, i) => (
          <Text key={pane} inverse={pane === state.pane}>
            {` ${i + 1} ${titles[pane]} `}
          </Text>
        ))}
      </Box>
      <Box marginTop={1}>{paneView(state, nowMs, rows, amount)}</Box>
      <Text dimColor>{keysHelp(state)}</Text>
    </Box>
  );
}

function keysHelp(state: DashboardState): string {
  if (state.pane !== 'operations') return '1-5 or tab: switch pane · q: quit';
  if (state.detail !== null) return 'Esc: back · q: quit';
  if (state.filtering) return 'type to filter · Enter: keep · Esc: clear';
  return 'j/k ↑/↓ PgUp/PgDn: move · /: filter · Enter: open · Esc: clear filter, else quit · 1-5 or tab: pane · q: quit';
}

function ConnectionBadge({ state }: { state: DashboardState }) {
  const c = state.connection;
  const position = state.lastSeq === null ? '' : ` at event ${state.lastSeq}`;
  const resumed = state.reconnects === 0 ? '' : ` · resumed ${state.reconnects}×`;
  if (c.state === 'live') return <Text color="green">● live{position}{resumed}</Text>;
  if (c.state === 'connecting') return <Text color="yellow">○ connecting</Text>;
  return (
    <Text color="red">
      ○ reconnecting in {c.retryInMs} ms{position} ({safe(c.reason)})
    </Text>
  );
}

function paneView(state: DashboardState, nowMs: number, rows: number, amount: AmountText) {
  switch (state.pane) {
    case 'balance':
      return <BookPane state={state} amount={amount} />;
    case 'operations':
      return <OperationsPane state={state} nowMs={nowMs} rows={rows} amount={amount} />;
    case 'rate':
      return <RatePane series={rateSeries(state.rate, nowMs)} />;
    case 'layer':
      return <LayerPane layer={state.layer} nowMs={nowMs} amount={amount} />;
    case 'reservations':
      return (
        <Box flexDirection="column">
          <Table columns={reservationColumns(nowMs)} rows={state.pending.slice(-rows).reverse()} empty="(no pending reservations seen)" />
          <Text dimColor>
            {state.pending.length} held{state.pendingDropped > 0 ? `, ${state.pendingDropped} older not shown` : ''}
          </Text>
        </Box>
      );
  }
}

function OperationsPane({ state, nowMs, rows, amount }: { state: DashboardState; nowMs: number; rows: number; amount: AmountText }) {
  const opened = detailOf(state);
  if (opened !== null) return <OperationDetail operation={opened} nowMs={nowMs} amount={amount} />;
  const visible = visibleOperations(state);
  const shown = visible.slice(state.offset, state.offset + rows);
  const filterLine = state.filtering ? `/${safe(state.filter)}▏` : state.filter === '' ? '' : `filter: ${safe(state.filter)} (Esc clears)`;
  const range = visible.length === 0 ? '0' : `${state.offset + 1}-${state.offset + shown.length}`;
  return (
    <Box flexDirection="column">
      {filterLine !== '' && <Text color="cyan">{filterLine}</Text>}
      <Table
        columns={operationColumns(nowMs, amount)}
        rows={shown}
        selected={state.selected - state.offset}
        empty={state.filter === '' ? '(no operations since the dashboard started)' : '(no operation matches the filter)'}
      />
      <Text dimColor>
        {range} of {visible.length}
        {state.filter === '' ? '' : ` (filtered from ${state.operations.length})`}
      </Text>
    </Box>
  );
}

function OperationDetail({ operation, nowMs, amount }: { operation: OperationView; nowMs: number; amount: AmountText }) {
  const decided = operation.decided_at === null ? '-' : `${time(operation.decided_at)} (${ageText(operation.decided_at, nowMs)})`;
  return (
    <Box flexDirection="column">
      <Text bold>operation {safe(operation.operation_reference)}</Text>
      <Text>
        {details({
          command: operation.command,
          principal: operation.principal,
          moves: operation.moves?.map((m) => `${amount(m.amount, m.asset)} ${m.from} -> ${m.to ?? '(held)'}`).join('; '),
          state: operation.state,
          terminal: operation.terminal,
          submitted: `${time(operation.submitted_at)} (${ageText(operation.submitted_at, nowMs)})`,
          decided,
          client_key: operation.client_key,
          reference: operation.reference,
          result: operation.result,
          error: operation.error === undefined ? undefined : `${operation.error.error}: ${operation.error.description}`,
        })}
      </Text>
    </Box>
  );
}

function RatePane({ series }: { series: readonly number[] }) {
  const complete = series.slice(0, -1);
  const peak = Math.max(0, ...complete);
  const mean = complete.reduce((a, b) => a + b, 0) / Math.max(1, complete.length);
  return (
    <Box flexDirection="column">
      <Sparkline values={series} />
      <Text>
        last {complete[complete.length - 1] ?? 0}/s · peak {peak}/s · mean {mean.toFixed(1)}/s over {complete.length} s
      </Text>
    </Box>
  );
}

/** An operation's age: since its decision, else since it was submitted. */
const operationColumns = (nowMs: number, amount: AmountText) => [
  { header: 'AGE', value: (o: OperationView) => ageText(o.decided_at ?? o.submitted_at, nowMs), alignRight: true },
  { header: 'OPERATION', value: (o: OperationView) => o.operation_reference },
  { header: 'COMMAND', value: (o: OperationView) => o.command },
  { header: 'STATE', value: (o: OperationView) => o.state },
  { header: 'AMOUNT', value: (o: OperationView) => movesSummary(o, amount).amount, alignRight: true },
  { header: 'FROM', value: (o: OperationView) => movesSummary(o, amount).from },
  { header: 'TO', value: (o: OperationView) => movesSummary(o, amount).to },
  { header: 'PRINCIPAL', value: (o: OperationView) => o.principal ?? '' },
  { header: 'ERROR', value: (o: OperationView) => o.error?.error ?? '' },
  { header: 'REFERENCE', value: (o: OperationView) => (o.reference === undefined ? '' : JSON.stringify(o.reference)) },
];

const reservationColumns = (nowMs: number) => [
  { header: 'RESERVATION', value: (o: OperationView) => o.operation_reference },
  { header: 'RESERVED', value: (o: OperationView) => (o.decided_at === null ? '-' : ageText(o.decided_at, nowMs)) },
  { header: 'REFERENCE', value: (o: OperationView) => (o.reference === undefined ? '' : JSON.stringify(o.reference)) },
];
