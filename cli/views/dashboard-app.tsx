/**
 * The live dashboard: follows the event stream (reconnecting and resuming with `?after=`), polls
 * the trial balance, the treasuries and ledgerd's metrics, and acts on keys. Its sources are
 * injected, so tests feed it.
 */
import { useApp, useInput, useStdout } from 'ink';
import { useEffect, useReducer, useRef, useState } from 'react';
import type { OperationView, TrialBalance } from '../api.js';
import { type DashboardState, type KeyPress, type LayerFigures, type ProposalsFigures, type Treasuries, initialState, onKey, onOperation } from '../dashboard/model.js';
import { type Status, readStatus } from '../dashboard/metrics.js';
import type { StreamItem } from '../events.js';
import type { AmountText } from '../money.js';
import { Dashboard, chromeLines } from './dashboard.js';
import { useTick } from './tick.js';

export interface DashboardSources {
  /** The event stream; the app stops it (aborts `signal`) when it quits. */
  events: (signal: AbortSignal) => AsyncIterable<StreamItem>;
  trialBalance: () => Promise<TrialBalance>;
  /** What the operator's treasury accounts hold per asset. */
  treasuries: () => Promise<Treasuries>;
  /** The settlement layer's status and the last comparison (absent: the pane says so). */
  layer?: () => Promise<LayerFigures>;
  /** The open approval proposals (absent: the pane says so). */
  proposals?: () => Promise<ProposalsFigures>;
  /** ledgerd's `GET /metrics` text (Prometheus format). */
  metrics: () => Promise<string>;
  now: () => number;
}

export interface DashboardAppProps {
  sources: DashboardSources;
  url: string;
  refreshMs?: number;
  /** Rows of the operations pane; else the terminal's height less the rest of the screen. */
  rows?: number;
  /** The width laid out for; else the terminal's, following resizes. */
  columns?: number;
  /** Events up to this position are replayed from before the start (the recent past): they fill the panes, not the rate. */
  liveAfterSeq?: number | null;
  amount?: AmountText;
}

type Action =
  | { type: 'item'; item: StreamItem; nowMs: number; liveAfterSeq: number | null }
  | { type: 'trialBalance'; trialBalance: TrialBalance }
  | { type: 'trialBalanceError'; message: string }
  | { type: 'treasuries'; treasuries: Treasuries }
  | { type: 'layer'; layer: DashboardState['layer'] }
  | { type: 'proposals'; proposals: DashboardState['proposals'] }
  | { type: 'status'; status: Status | { unavailable: string } }
  | { type: 'key'; key: KeyPress; rows: number };

function reduce(state: DashboardState, action: Action): DashboardState {
  switch (action.type) {
    case 'key':
      return onKey(state, action.key, action.rows);
    case 'trialBalance':
      return { ...state, trialBalance: action.trialBalance, trialBalanceError: null };
    case 'trialBalanceError':
      return { ...state, trialBalanceError: action.message };
    case 'treasuries':
      return { ...state, treasuries: action.treasuries };
    case 'layer':
      return { ...state, layer: action.layer };
    case 'proposals':
      return { ...state, proposals: action.proposals };
    case 'status':
      return { ...state, status: action.status };
    case 'item': {
      const item = action.item;
      if (item.type === 'open') return { ...state, connection: { state: 'live' }, reconnects: state.reconnects + (state.connection.state === 'reconnecting' ? 1 : 0) };
      if (item.type === 'lost') return { ...state, connection: { state: 'reconnecting', reason: item.reason, retryInMs: item.retryInMs } };
      if (item.kind !== 'operation') return { ...state, lastSeq: item.seq ?? state.lastSeq };
      const live = action.liveAfterSeq === null || item.seq === null || item.seq > action.liveAfterSeq;
      return onOperation(state, item.data as OperationView, item.seq, action.nowMs, live);
    }
  }
}

const refreshDefaultMs = 1000;
/** Rows of the operations pane on a terminal too small to say. */
const rowsMin = 3;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 120);

/** Calls `read` every tick, one call at a time (under load a read can take longer than a tick). */
function usePoll<T>(tick: number, read: () => Promise<T>, done: (value: T) => void, failed: (error: unknown) => void): void {
  const reading = useRef(false);
  useEffect(() => {
    if (reading.current) return;
    reading.current = true;
    read()
      .then(done, failed)
      .finally(() => (reading.current = false));
    // Only the tick starts a read; the callbacks are the same dispatches each render.
  }, [tick]);
}

/** The terminal's size, following resizes. */
function useTerminalSize(): { rows: number | undefined; columns: number | undefined } {
  const { stdout } = useStdout();
  const [size, setSize] = useState({ rows: stdout.rows, columns: stdout.columns });
  useEffect(() => {
    const resized = () => setSize({ rows: stdout.rows, columns: stdout.columns });
    stdout.on('resize', resized);
    return () => void stdout.off('resize', resized);
  }, [stdout]);
  return size;
}

export function DashboardApp({ sources, url, refreshMs = refreshDefaultMs, rows, columns, liveAfterSeq = null, amount }: DashboardAppProps) {
  const [state, dispatch] = useReducer(reduce, undefined, initialState);
  const [failure, setFailure] = useState<Error | null>(null);
  const { exit } = useApp();
  const tick = useTick(refreshMs);
  const terminal = useTerminalSize();
  const paneRows = rows ?? Math.max(rowsMin, (terminal.rows ?? 24) - chromeLines);

  useEffect(() => {
    const controller = new AbortController();
    (async () => {
      for await (const item of sources.events(controller.signal)) dispatch({ type: 'item', item, nowMs: sources.now(), liveAfterSeq });
    })().catch((error: unknown) => setFailure(error instanceof Error ? error : new Error(String(error))));
    return () => controller.abort();
  }, [sources, liveAfterSeq]);

  usePoll(tick, sources.trialBalance, (trialBalance) => dispatch({ type: 'trialBalance', trialBalance }), (error) => dispatch({ type: 'trialBalanceError', message: messageOf(error) }));
  // A treasury read that fails leaves the last figures; the trial balance's own error says why.
  usePoll(tick, sources.treasuries, (treasuries) => dispatch({ type: 'treasuries', treasuries }), () => undefined);
  // The layer is read only while its pane shows (two operator reads a tick).
  usePoll(
    state.pane === 'layer' ? tick : -1,
    async () => (sources.layer === undefined ? { unavailable: 'not read by this dashboard' } : await sources.layer()),
    (layer) => dispatch({ type: 'layer', layer }),
    (error) => dispatch({ type: 'layer', layer: { unavailable: messageOf(error) } }),
  );
  // Proposals are read only while their pane shows.
  usePoll(
    state.pane === 'proposals' ? tick : -1,
    async () => (sources.proposals === undefined ? { unavailable: 'not read by this dashboard' } : await sources.proposals()),
    (proposals) => dispatch({ type: 'proposals', proposals }),
    (error) => dispatch({ type: 'proposals', proposals: { unavailable: messageOf(error) } }),
  );
  // Metrics are ledgerd's to serve: any failure (404 before it does, a refusal, a bad body) is "unavailable", never fatal.
  usePoll(
    tick,
    async () => readStatus(await sources.metrics()),
    (status) => dispatch({ type: 'status', status }),
    (error) => dispatch({ type: 'status', status: { unavailable: messageOf(error) } }),
  );

  useInput((input, key) => dispatch({ type: 'key', key: { ...key, input }, rows: paneRows }));

  useEffect(() => {
    if (state.quitting) exit();
  }, [state.quitting, exit]);

  useEffect(() => {
    // A stream that cannot go on (a refusal: a bad token) ends the app with that error and its exit code.
    if (failure !== null) exit(failure);
  }, [failure, exit]);

  return <Dashboard state={state} url={url} nowMs={sources.now()} rows={paneRows} columns={columns ?? terminal.columns ?? 80} {...(amount === undefined ? {} : { amount })} />;
}
