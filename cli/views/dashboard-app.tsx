/**
 * The live dashboard: follows the event stream (reconnecting and resuming with `?after=`), polls
 * the trial balance, and switches panes on keys. Its sources are injected, so tests feed it.
 */
import { useApp, useInput } from 'ink';
import { useEffect, useReducer, useRef, useState } from 'react';
import type { OperationView, TrialBalance } from '../api.js';
import { type DashboardState, type Pane, initialState, nextPane, onOperation, panes } from '../dashboard/model.js';
import type { StreamItem } from '../events.js';
import { Dashboard } from './dashboard.js';
import { useTick } from './tick.js';

export interface DashboardSources {
  /** The event stream; the app stops it (aborts `signal`) when it quits. */
  events: (signal: AbortSignal) => AsyncIterable<StreamItem>;
  trialBalance: () => Promise<TrialBalance>;
  now: () => number;
}

export interface DashboardAppProps {
  sources: DashboardSources;
  url: string;
  refreshMs?: number;
  rows?: number;
}

type Action =
  | { type: 'item'; item: StreamItem; nowMs: number }
  | { type: 'trialBalance'; trialBalance: TrialBalance }
  | { type: 'trialBalanceError'; message: string }
  | { type: 'pane'; pane: Pane }
  | { type: 'step'; step: 1 | -1 };

function reduce(state: DashboardState, action: Action): DashboardState {
  switch (action.type) {
    case 'pane':
      return { ...state, pane: action.pane };
    case 'step':
      return { ...state, pane: nextPane(state.pane, action.step) };
    case 'trialBalance':
      return { ...state, trialBalance: action.trialBalance, trialBalanceError: null };
    case 'trialBalanceError':
      return { ...state, trialBalanceError: action.message };
    case 'item': {
      const item = action.item;
      if (item.type === 'open') return { ...state, connection: { state: 'live' }, reconnects: state.reconnects + (state.connection.state === 'reconnecting' ? 1 : 0) };
      if (item.type === 'lost') return { ...state, connection: { state: 'reconnecting', reason: item.reason, retryInMs: item.retryInMs } };
      if (item.kind !== 'operation') return { ...state, lastSeq: item.seq ?? state.lastSeq };
      return onOperation(state, item.data as OperationView, item.seq, action.nowMs);
    }
  }
}

const refreshDefaultMs = 1000;

export function DashboardApp({ sources, url, refreshMs = refreshDefaultMs, rows }: DashboardAppProps) {
  const [state, dispatch] = useReducer(reduce, undefined, initialState);
  const [failure, setFailure] = useState<Error | null>(null);
  const { exit } = useApp();
  const tick = useTick(refreshMs);

  useEffect(() => {
    const controller = new AbortController();
    (async () => {
      for await (const item of sources.events(controller.signal)) dispatch({ type: 'item', item, nowMs: sources.now() });
    })().catch((error: unknown) => setFailure(error instanceof Error ? error : new Error(String(error))));
    return () => controller.abort();
  }, [sources]);

  // One trial-balance read at a time: under load a read can take longer than a tick.
  const reading = useRef(false);
  useEffect(() => {
    if (reading.current) return;
    reading.current = true;
    sources
      .trialBalance()
      .then(
        (trialBalance) => dispatch({ type: 'trialBalance', trialBalance }),
        (error: unknown) => dispatch({ type: 'trialBalanceError', message: error instanceof Error ? error.message : String(error) }),
      )
      .finally(() => (reading.current = false));
  }, [sources, tick]);

  useInput((input, key) => {
    if (input === 'q' || key.escape) return exit();
    if (key.tab) return dispatch({ type: 'step', step: key.shift ? -1 : 1 });
    const digit = Number(input);
    if (Number.isInteger(digit) && digit >= 1 && digit <= panes.length) dispatch({ type: 'pane', pane: panes[digit - 1]! });
  });

  useEffect(() => {
    // A stream that cannot go on (a refusal: a bad token) ends the app with that error and its exit code.
    if (failure !== null) exit(failure);
  }, [failure, exit]);

  return <Dashboard state={state} url={url} nowMs={sources.now()} {...(rows === undefined ? {} : { rows })} />;
}
