/** The dashboard's screen, a pure function of its state: a header with the panes, then the one selected. */
import { Box, Text } from 'ink';
import type { OperationView } from '../api.js';
import { type DashboardState, type Pane, panes, rateSeries } from '../dashboard/model.js';
import { time } from '../output.js';
import { safe } from '../safe.js';
import { Sparkline } from './sparkline.js';
import { Table } from './table.js';
import { TrialBalanceView } from './trial-balance.js';

export interface DashboardProps {
  state: DashboardState;
  url: string;
  nowMs: number;
  /** Rows the operations and reservations panes show. */
  rows?: number;
}

const titles: Record<Pane, string> = { balance: 'Trial balance', operations: 'Operations', rate: 'Decisions/s', reservations: 'Pending reservations' };

export function Dashboard({ state, url, nowMs, rows = 15 }: DashboardProps) {
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
      <Box>
        {panes.map((pane, i) => (
          <Text key={pane} inverse={pane === state.pane}>
            {` ${i + 1} ${titles[pane]} `}
          </Text>
        ))}
      </Box>
      <Box marginTop={1}>{paneView(state, nowMs, rows)}</Box>
      <Text dimColor>1-4 or tab: switch pane · q: quit</Text>
    </Box>
  );
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

function paneView(state: DashboardState, nowMs: number, rows: number) {
  switch (state.pane) {
    case 'balance':
      if (state.trialBalanceError !== null) return <Text color="red">{safe(state.trialBalanceError)}</Text>;
      return state.trialBalance === null ? <Text dimColor>loading…</Text> : <TrialBalanceView trialBalance={state.trialBalance} />;
    case 'operations':
      return <Table columns={operationColumns} rows={state.operations.slice(0, rows)} empty="(no operations since the dashboard started)" />;
    case 'rate':
      return <RatePane series={rateSeries(state.rate, nowMs)} />;
    case 'reservations':
      return (
        <Box flexDirection="column">
          <Table columns={reservationColumns} rows={state.pending.slice(-rows).reverse()} empty="(no pending reservations seen)" />
          <Text dimColor>
            {state.pending.length} held{state.pendingDropped > 0 ? `, ${state.pendingDropped} older not shown` : ''}
          </Text>
        </Box>
      );
  }
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

const operationColumns = [
  { header: 'OPERATION', value: (o: OperationView) => o.operation_reference },
  { header: 'COMMAND', value: (o: OperationView) => o.command },
  { header: 'STATE', value: (o: OperationView) => o.state },
  { header: 'DECIDED', value: (o: OperationView) => time(o.decided_at) },
  { header: 'ERROR', value: (o: OperationView) => o.error?.error ?? '' },
];

const reservationColumns = [
  { header: 'RESERVATION', value: (o: OperationView) => o.operation_reference },
  { header: 'RESERVED', value: (o: OperationView) => time(o.decided_at) },
  { header: 'REFERENCE', value: (o: OperationView) => (o.reference === undefined ? '' : JSON.stringify(o.reference)) },
];
