/**
 * The dashboard's state and how events change it: pure functions of (state, input, time), so
 * the view is tested with fixed inputs and the container only moves data in.
 */
import type { OperationView, TrialBalance } from '../api.js';
import type { Status } from './metrics.js';

/** The panes in tab order, keys 1-9: a pane is added here (and given titles and a view in cli/views/dashboard.tsx). */
export const panes = ['balance', 'operations', 'rate', 'reservations', 'layer', 'proposals'] as const;
export type Pane = (typeof panes)[number];

/** Recent operations kept (newest first). */
export const recentOperationsMax = 200;
/** Pending reservations kept; beyond this the oldest are dropped from view, and counted. */
export const pendingReservationsMax = 1000;
/** Seconds of decisions-per-second history the sparkline shows. */
export const rateWindowS = 60;

/** Characters a filter holds at most. */
export const filterLengthMax = 64;

/** The settlement layer as the operator reads it: the adapter's status and the last comparison (docs/settlement.md). */
export interface LayerFigures {
  serving: boolean;
  height: number;
  finalHeight: number;
  takenIn: number;
  pendingInstructions: number;
  freshUntilMs: number;
  comparison: { height: number; differs: boolean; rows: readonly { asset: string; book: string; layer: string; difference: string; liabilities: string | null; solvent: boolean | null }[] };
}

/** The open approval proposals, newest first (CONTRACT 13), and whether there are more than shown. */
export interface ProposalsFigures {
  items: readonly { proposal: string; proposer: string; proposedAtMs: number; method: string; path: string; justification: string }[];
  more: boolean;
}

/** Per asset, what the operator-owned treasury accounts hold (signed minor units, all layers). */
export interface Treasuries {
  /** Treasury accounts read. */
  accounts: number;
  byAsset: ReadonlyMap<string, bigint>;
}

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
  treasuries: Treasuries | null;
  /** The settlement layer pane, or why it cannot be read. */
  layer: LayerFigures | { unavailable: string } | null;
  /** The proposals pane, or why they cannot be read. */
  proposals: ProposalsFigures | { unavailable: string } | null;
  /** The status line: ledgerd's metrics, or why there are none. */
  status: Status | { unavailable: string } | null;
  /** The operations pane: the text it is filtered by, whether it is being typed, the selected row, the first row shown. */
  filter: string;
  filtering: boolean;
  selected: number;
  offset: number;
  /** The operation opened with Enter, shown whole (its latest view while recent) until Esc. */
  detail: OperationView | null;
  /** Set by q (or Esc with nothing to close): the app exits. */
  quitting: boolean;
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
  treasuries: null,
  layer: null,
  proposals: null,
  status: null,
  filter: '',
  filtering: false,
  selected: 0,
  offset: 0,
  detail: null,
  quitting: false,
});

const isReservationHeld = (op: OperationView) => op.command === 'reserve' && op.state === 'Reserved';

/** `live` false for an event replayed from before the dashboard started: it fills the panes but is no decision of this second. */
export function onOperation(state: DashboardState, op: OperationView, seq: number | null, nowMs: number, live = true): DashboardState {
  const operations = [op, ...state.operations.filter((o) => o.operation_reference !== op.operation_reference)].slice(0, recentOperationsMax);
  let pending = state.pending.filter((o) => o.operation_reference !== op.operation_reference);
  let pendingDropped = state.pendingDropped;
  if (isReservationHeld(op)) pending = [...pending, op];
  if (pending.length > pendingReservationsMax) {
    pendingDropped += pending.length - pendingReservationsMax;
    pending = pending.slice(-pendingReservationsMax);
  }
  const rate = withRate(state.rate, nowMs, live && op.state !== 'Received' ? 1 : 0);
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

/** The operations the pane lists: every recent one, or those whose text holds the filter (any case). */
export function visibleOperations(state: Pick<DashboardState, 'operations' | 'filter'>): readonly OperationView[] {
  const needle = state.filter.toLowerCase();
  if (needle === '') return state.operations;
  return state.operations.filter((o) =>
    [o.operation_reference, o.command, o.state, o.principal ?? '', ...(o.moves ?? []).flatMap((m) => [m.from, m.to ?? '', m.asset]), o.error?.error ?? '', o.reference === undefined ? '' : JSON.stringify(o.reference)].some((text) =>
      text.toLowerCase().includes(needle),
    ),
  );
}

/** Moves the selection by `step` rows (clamped), scrolling so it stays within the `rows` shown. */
export function moveSelection(state: DashboardState, step: number, rows: number): DashboardState {
  const count = visibleOperations(state).length;
  const selected = Math.max(0, Math.min(count - 1, state.selected + step));
  return { ...state, selected, offset: scrolledTo(state.offset, selected, rows) };
}

/** The first row shown so that `selected` is among the `rows` shown from it. */
export function scrolledTo(offset: number, selected: number, rows: number): number {
  if (selected < offset) return selected;
  if (selected >= offset + rows) return selected - rows + 1;
  return offset;
}

/** A new filter starts the list from its top. */
export function withFilter(state: DashboardState, filter: string): DashboardState {
  return { ...state, filter: filter.slice(0, filterLengthMax), selected: 0, offset: 0 };
}

/** The selected operation, to open with Enter. */
export function selectedOperation(state: DashboardState): OperationView | undefined {
  return visibleOperations(state)[state.selected];
}

/** The opened operation as last seen. */
export function detailOf(state: DashboardState): OperationView | null {
  if (state.detail === null) return null;
  return state.operations.find((o) => o.operation_reference === state.detail!.operation_reference) ?? state.detail;
}

/** A key as the terminal reported it (Ink's names). */
export interface KeyPress {
  input: string;
  upArrow?: boolean;
  downArrow?: boolean;
  pageUp?: boolean;
  pageDown?: boolean;
  return?: boolean;
  escape?: boolean;
  backspace?: boolean;
  delete?: boolean;
  tab?: boolean;
  shift?: boolean;
  ctrl?: boolean;
  meta?: boolean;
}

/**
 * What a key does, `rows` being the operations the pane shows. Typing a filter takes every key as
 * text (Enter keeps it, Esc clears it); an opened operation closes on Esc; Esc with nothing to
 * close or clear quits, as q does.
 */
export function onKey(state: DashboardState, key: KeyPress, rows: number): DashboardState {
  // Keys typed (or pasted) faster than the terminal is read arrive as one chunk: each acts in turn.
  if ([...key.input].length > 1 && key.ctrl !== true && key.meta !== true) return [...key.input].reduce((s, input) => onKey(s, { input }, rows), state);
  if (state.filtering) {
    if (key.escape === true) return { ...withFilter(state, ''), filtering: false };
    if (key.return === true) return { ...state, filtering: false };
    if (key.backspace === true || key.delete === true) return withFilter(state, state.filter.slice(0, -1));
    if (key.ctrl === true || key.meta === true || key.tab === true || key.input === '') return state;
    return withFilter(state, state.filter + key.input);
  }
  if (key.input === 'q') return { ...state, quitting: true };
  if (state.detail !== null) return key.escape === true ? { ...state, detail: null } : state;
  if (key.escape === true) return state.filter !== '' ? withFilter(state, '') : { ...state, quitting: true };
  if (key.tab === true) return { ...state, pane: nextPane(state.pane, key.shift === true ? -1 : 1) };
  const digit = Number(key.input);
  if (key.input.length === 1 && Number.isInteger(digit) && digit >= 1 && digit <= panes.length) return { ...state, pane: panes[digit - 1]! };
  if (state.pane !== 'operations') return state;
  if (key.input === 'j' || key.downArrow === true) return moveSelection(state, 1, rows);
  if (key.input === 'k' || key.upArrow === true) return moveSelection(state, -1, rows);
  if (key.pageDown === true) return moveSelection(state, rows, rows);
  if (key.pageUp === true) return moveSelection(state, -rows, rows);
  if (key.input === '/') return { ...state, filtering: true };
  if (key.return === true) return { ...state, detail: selectedOperation(state) ?? null };
  return state;
}

/** One row's AMOUNT, FROM and TO: the first move, with how many more; amounts summed when every move is in one asset. */
export function movesSummary(o: OperationView, amount: (amountMinor: string, asset: string) => string): { amount: string; from: string; to: string } {
  const moves = o.moves ?? [];
  if (moves.length === 0) return { amount: '', from: '', to: '' };
  const first = moves[0]!;
  const more = moves.length > 1 ? ` +${moves.length - 1}` : '';
  const oneAsset = moves.every((m) => m.asset === first.asset);
  const total = oneAsset ? amount(moves.reduce((sum, m) => sum + BigInt(m.amount), 0n).toString(), first.asset) : `${moves.length} legs`;
  return { amount: total, from: first.from + more, to: (first.to ?? '(held)') + more };
}
