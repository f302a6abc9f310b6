/**
 * The dashboard's screen, a pure function of its state: a header with the connection and
 * ledgerd's status line, the panes, then the one selected (the operations pane scrolls, filters
 * and opens one operation whole).
 */
import { Box, Text } from 'ink';
import type { OperationView } from '../api.js';
import { type DashboardState, type Pane, detailOf, movesSummary, panes, rateSeries, visibleOperations } from '../dashboard/model.js';
import { ageText, durationText, statusText } from '../dashboard/metrics.js';
import { shortCommand, shortId, shortState } from '../dashboard/abbrev.js';
import { type AmountText, minorUnitsText } from '../money.js';
import { details, time } from '../output.js';
import { safe } from '../safe.js';
import { BookPane } from './dashboard-book.js';
import { LayerPane } from './dashboard-layer.js';
import { ProposalsPane } from './dashboard-proposals.js';
import { Sparkline } from './sparkline.js';
import { Table } from './table.js';

export interface DashboardProps {
  state: DashboardState;
  url: string;
  nowMs: number;
  /** Rows the operations and reservations panes show (the terminal's height less the rest). */
  rows?: number;
  /** The terminal's width: below `wideColumnsMin` the panes take their narrow forms, which fit 80 columns. */
  columns?: number;
  amount?: AmountText;
}

/** From this width on, the panes show every column and full identifiers (a 120-column terminal). */
export const wideColumnsMin = 120;

/** Lines the dashboard shows besides a pane's rows: header, connection, status, tabs, margin, table header, filter, footer, help. */
export const chromeLines = 9;

/**
 * Each pane's tab: its title, and the short one a narrow terminal shows. A pane is added (the
 * approval proposals, say) by naming it in `panes` (cli/dashboard/model.ts), giving it titles
 * here and a view in `paneView`, its data an optional source read while it shows (as the layer's).
 */
const titles: Record<Pane, { wide: string; narrow: string }> = {
  balance: { wide: 'Trial balance', narrow: 'Balance' },
  operations: { wide: 'Operations', narrow: 'Ops' },
  rate: { wide: 'Decisions/s', narrow: 'Rate' },
  reservations: { wide: 'Pending reservations', narrow: 'Holds' },
  layer: { wide: 'Settlement layer', narrow: 'Layer' },
  proposals: { wide: 'Proposals', narrow: 'Props' },
};

export function Dashboard({ state, url, nowMs, rows = 15, columns = wideColumnsMin, amount = minorUnitsText }: DashboardProps) {
  const series = rateSeries(state.rate, nowMs);
  const wide = columns >= wideColumnsMin;
  return (
    <Box flexDirection="column" width={columns}>
      <Text wrap="truncate-end">
        <Text bold>ledgerctl dashboard</Text> {safe(url)} <Sparkline values={series.slice(-20)} /> {series[series.length - 2] ?? 0} decisions/s
      </Text>
      <ConnectionBadge state={state} />
      <Text dimColor={state.status === null || 'unavailable' in state.status} wrap="truncate-end">
        {state.status === null ? 'metrics: reading…' : safe(statusText(state.status, nowMs, wide))}
      </Text>
      <Text wrap="truncate-end">
        {panes.map((pane, i) => (
          <Text key={pane} inverse={pane === state.pane}>
            {` ${i + 1} ${wide ? titles[pane].wide : titles[pane].narrow} `}
          </Text>
        ))}
      </Text>
      <Box marginTop={1}>{paneView(state, nowMs, rows, wide, amount)}</Box>
      <Text dimColor wrap="truncate-end">
        {keysHelp(state, wide)}
      </Text>
    </Box>
  );
}

function keysHelp(state: DashboardState, wide: boolean): string {
  const switching = `1-${panes.length}${wide ? ' or tab: switch pane' : '/tab: pane'}`;
  if (state.pane !== 'operations') return `${switching} · q: quit`;
  if (state.detail !== null) return 'Esc: back · q: quit';
  if (state.filtering) return 'type to filter · Enter: keep · Esc: clear';
  if (!wide) return `j/k ↑↓ PgUp/Dn: move · /: filter · Enter: open · ${switching} · q: quit`;
  return `j/k ↑/↓ PgUp/PgDn: move · /: filter · Enter: open · Esc: clear filter, else quit · ${switching} · q: quit`;
}

function ConnectionBadge({ state }: { state: DashboardState }) {
  const c = state.connection;
  const position = state.lastSeq === null ? '' : ` at event ${state.lastSeq}`;
  const resumed = state.reconnects === 0 ? '' : ` · resumed ${state.reconnects}×`;
  if (c.state === 'live') return <Text color="green" wrap="truncate-end">● live{position}{resumed}</Text>;
  if (c.state === 'connecting') return <Text color="yellow">○ connecting</Text>;
  return (
    <Text color="red" wrap="truncate-end">
      ○ reconnecting in {c.retryInMs} ms{position} ({safe(c.reason)})
    </Text>
  );
}

function paneView(state: DashboardState, nowMs: number, rows: number, wide: boolean, amount: AmountText) {
  // Narrow, an amount goes without its symbol where the row names the asset, or is one asset's column.
  const money = wide ? amount : bareAmount(amount);
  switch (state.pane) {
    case 'balance':
      return <BookPane state={state} amount={money} wide={wide} />;
    case 'operations':
      return <OperationsPane state={state} nowMs={nowMs} rows={rows} wide={wide} amount={amount} />;
    case 'rate':
      return <RatePane series={rateSeries(state.rate, nowMs)} />;
    case 'layer':
      return <LayerPane layer={state.layer} nowMs={nowMs} wide={wide} amount={money} />;
    case 'proposals':
      return <ProposalsPane proposals={state.proposals} nowMs={nowMs} wide={wide} rows={rows} />;
    case 'reservations':
      return (
        <Box flexDirection="column">
          <Table columns={reservationColumns(nowMs, wide, amount)} rows={state.pending.slice(-rows).reverse()} empty="(no pending reservations seen)" />
          <Text dimColor wrap="truncate-end">
            {state.pending.length} held{state.pendingDropped > 0 ? `, ${state.pendingDropped} older not shown` : ''}
          </Text>
        </Box>
      );
  }
}

/** An amount as `amount` shows it, less the asset's symbol where it trails (`500.00 USD` as `500.00`). */
const bareAmount =
  (amount: AmountText): AmountText =>
  (minor, asset) => {
    const text = amount(minor, asset);
    return text.endsWith(` ${asset}`) ? text.slice(0, -asset.length - 1) : text;
  };

function OperationsPane({ state, nowMs, rows, wide, amount }: { state: DashboardState; nowMs: number; rows: number; wide: boolean; amount: AmountText }) {
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
        columns={wide ? operationColumns(nowMs, amount) : narrowOperationColumns(nowMs, amount)}
        rows={shown}
        selected={state.selected - state.offset}
        empty={state.filter === '' ? '(no operations in the recent events)' : '(no operation matches the filter)'}
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
const ageOf = (o: OperationView, nowMs: number) => ageText(o.decided_at ?? o.submitted_at, nowMs);

/** At 120 columns and more: full references and commands, who submitted it, what went wrong. */
const operationColumns = (nowMs: number, amount: AmountText) => [
  { header: 'AGE', value: (o: OperationView) => ageOf(o, nowMs), alignRight: true },
  { header: 'OPERATION', value: (o: OperationView) => o.operation_reference },
  { header: 'COMMAND', value: (o: OperationView) => o.command },
  { header: 'STATE', value: (o: OperationView) => o.state },
  { header: 'AMOUNT', value: (o: OperationView) => movesSummary(o, amount).amount, alignRight: true },
  { header: 'FROM', value: (o: OperationView) => shortMoves(movesSummary(o, amount).from, 14) },
  { header: 'TO', value: (o: OperationView) => shortMoves(movesSummary(o, amount).to, 14) },
  { header: 'BY', value: (o: OperationView) => (o.principal === undefined ? '' : shortId(o.principal, 12)) },
  { header: 'ERROR', value: (o: OperationView) => o.error?.error ?? '' },
];

/** Below 120 columns: what fits 80 (about 75 characters a row), identifiers and names shortened. */
const narrowOperationColumns = (nowMs: number, amount: AmountText) => [
  { header: 'AGE', value: (o: OperationView) => ageOf(o, nowMs), alignRight: true },
  { header: 'OP', value: (o: OperationView) => shortId(o.operation_reference, 8) },
  { header: 'CMD', value: (o: OperationView) => shortCommand(o.command) },
  { header: 'STATE', value: (o: OperationView) => shortState(o.state) },
  { header: 'AMOUNT', value: (o: OperationView) => movesSummary(o, amount).amount, alignRight: true },
  { header: 'FROM', value: (o: OperationView) => shortMoves(movesSummary(o, amount).from, 10) },
  { header: 'TO', value: (o: OperationView) => shortMoves(movesSummary(o, amount).to, 10) },
];

/** A FROM or TO cell (`did:ledger:acct:… +2`) with the account shortened. */
const shortMoves = (cell: string, width: number) => cell.replace(/^\S+/, (account) => (account === '(held)' ? account : shortId(account, width)));

/** A hold's deadline: how long until it expires by itself (released), or that it is due. */
const expiresText = (o: OperationView, nowMs: number) => (o.deadline === undefined ? '-' : o.deadline <= nowMs ? 'due' : `in ${durationText(o.deadline - nowMs)}`);

const reservationColumns = (nowMs: number, wide: boolean, amount: AmountText) => [
  { header: 'RESERVATION', value: (o: OperationView) => (wide ? o.operation_reference : shortId(o.operation_reference, 10)) },
  { header: 'PAYER', value: (o: OperationView) => shortId(o.moves?.[0]?.from ?? '-', wide ? 24 : 14) },
  { header: 'AMOUNT', value: (o: OperationView) => (o.moves?.[0] === undefined ? '-' : amount(o.moves[0].amount, o.moves[0].asset)), alignRight: true },
  { header: 'EXPIRES', value: (o: OperationView) => expiresText(o, nowMs) },
  ...(wide ? [{ header: 'DEADLINE', value: (o: OperationView) => time(o.deadline) }] : []),
  { header: 'HELD', value: (o: OperationView) => (o.decided_at === null ? '-' : ageText(o.decided_at, nowMs)) },
  ...(wide ? [{ header: 'BY', value: (o: OperationView) => (o.principal === undefined ? '' : shortId(o.principal, 12)) }] : []),
];
