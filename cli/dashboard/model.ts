/**
 * The dashboard's state and how events change it: pure functions of (state, input, time), so
 * the view is tested with fixed inputs and the container only moves data in.
 */
import type { OperationView, TrialBalance } from '../api.js';

export const panes = ['balance', 'operations', 'rate', 'reservations'] as const;
export type Pane = (typeof panes)[number];

/** Recent operations kept (newest first). */
export const recentOperationsMax = 200;
/** Pending reservations kept; beyond this the oldest are dropped from view, and counted. */
export const pendingReservationsMax = 1000;
/** Seconds of decisions-per-second history the sparkline shows. */
export const rateWindowS = 60;

export type Connection = { state: 'connecting' } | { state: 'live' } | { state: 'reconnecting'; reason: string; retryInMs: number };

export interface DashboardState {
  pane: Pane;
  connection: Connection;
  /** Reconnects so far: each one resumed with `?after=` the last event seen. */
  reconnects: number;
  lastSeq: number | null;
  trialBalance: TrialBalance | null;
  trialBalanceError: string | null;
  operations: readonly OperationView[];
  pending: readonly OperationView[];
  pendingDropped: number;
  /** Decisions counted per whole second of arrival, oldest first, the last `rateWindowS` seconds. */
  rate: readonly { second: number; decisions: number }[];
}

export const initialState = (): DashboardState => ({
  pane: 'balance',
  connection: { state: 'connecting' },
  reconnects: 0,
  lastSeq: null,
  trialBalance: null,
  trialBalanceError: null,
  operations: [],
  pending: [],
  pendingDropped: 0,
  rate: [],
});

const isReservationHeld = (op: OperationView) => op.command === 'reserve' && op.state === 'Reserved';

export function onOperation(state: DashboardState, op: OperationView, seq: number | null, nowMs: number): DashboardState {
  const operations = [op, ...state.operations.filter((o) => o.operation_reference !== op.operation_reference)].slice(0, recentOperationsMax);
  let pending = state.pending.filter((o) => o.operation_reference !== op.operation_reference);
  let pendingDropped = state.pendingDropped;
  if (isReservationHeld(op)) pending = [...pending, op];
  if (pending.length > pendingReservationsMax) {
    pendingDropped += pending.length - pendingReservationsMax;
    pending = pending.slice(-pendingReservationsMax);
  }
  const rate = op.state === 'Received' ? withRate(state.rate, nowMs, 0) : withRate(state.rate, nowMs, 1);
  return { ...state, operations, pending, pendingDropped, rate, lastSeq: seq ?? state.lastSeq };
}

/** Moves the rate window to `nowMs` (so quiet seconds show as zero) and adds `decisions`. */
export function withRate(rate: DashboardState['rate'], nowMs: number, decisions: number): DashboardState['rate'] {
  const second = Math.floor(nowMs / 1000);
  const kept = rate.filter((r) => r.second > second - rateWindowS);
  const last = kept[kept.length - 1];
  if (last !== undefined && last.second === second) return [...kept.slice(0, -1), { second, decisions: last.decisions + decisions }];
  return [...kept, { second, decisions }];
}

/** Decisions per second for each of the last `rateWindowS` seconds before `nowMs`, oldest first, zero-filled. */
export function rateSeries(rate: DashboardState['rate'], nowMs: number): number[] {
  const second = Math.floor(nowMs / 1000);
  const bySecond = new Map(rate.map((r) => [r.second, r.decisions]));
  return Array.from({ length: rateWindowS }, (_, i) => bySecond.get(second - rateWindowS + 1 + i) ?? 0);
}

export function nextPane(pane: Pane, step: 1 | -1): Pane {
  return panes[(panes.indexOf(pane) + step + panes.length) % panes.length]!;
}
