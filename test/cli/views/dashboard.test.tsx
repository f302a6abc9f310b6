import { render } from 'ink-testing-library';
import { describe, expect, it, vi } from 'vitest';

// What `ledgerctl dashboard` does before importing Ink on a terminal (cli/live.ts): here it must
// run before this file's imports load Ink, so that CI=true does not turn live frames off.
vi.hoisted(() => {
  for (const name of ['CI', 'CONTINUOUS_INTEGRATION']) if (name in process.env) process.env[name] = 'false';
});
import type { TrialBalance } from '../../../cli/api.js';
import { type DashboardState, initialState, onOperation, rateSeries, rateWindowS, withRate } from '../../../cli/dashboard/model.js';
import type { StreamItem } from '../../../cli/events.js';
import { Dashboard } from '../../../cli/views/dashboard.js';
import { DashboardApp, type DashboardSources } from '../../../cli/views/dashboard-app.js';
import { balanced, operation, unbalanced } from './fixtures.js';

const nowMs = Date.UTC(2026, 0, 2, 0, 0, 30);
const url = 'http://127.0.0.1:8470';

function stateWith(changes: Partial<DashboardState>): DashboardState {
  return { ...initialState(), connection: { state: 'live' }, ...changes };
}

describe('dashboard model', () => {
  it('keeps recent operations newest first, one row per operation', () => {
    let state = initialState();
    state = onOperation(state, operation('op_1', 'Received'), 1, nowMs);
    state = onOperation(state, operation('op_2', 'Completed'), 2, nowMs);
    state = onOperation(state, operation('op_1', 'Completed'), 3, nowMs);
    expect(state.operations.map((o) => [o.operation_reference, o.state])).toEqual([
      ['op_1', 'Completed'],
      ['op_2', 'Completed'],
    ]);
    expect(state.lastSeq).toBe(3);
  });

  it('tracks reservations while they are held', () => {
    let state = onOperation(initialState(), operation('r1', 'Reserved', 'reserve'), 1, nowMs);
    state = onOperation(state, operation('r2', 'Reserved', 'reserve'), 2, nowMs);
    state = onOperation(state, operation('r1', 'Captured', 'reserve'), 3, nowMs);
    expect(state.pending.map((o) => o.operation_reference)).toEqual(['r2']);
  });

  it('counts decisions per second over a sliding window, zero-filled', () => {
    let rate = withRate([], nowMs - 2000, 3);
    rate = withRate(rate, nowMs, 1);
    rate = withRate(rate, nowMs + 10, 1);
    const series = rateSeries(rate, nowMs);
    expect(series).toHaveLength(rateWindowS);
    expect(series.slice(-3)).toEqual([3, 0, 2]);
    expect(withRate(rate, nowMs + rateWindowS * 1000, 0).some((r) => r.decisions > 0)).toBe(false);
  });
});

describe('Dashboard', () => {
  it('shows the trial balance pane with the connection and the rate', () => {
    const state = stateWith({ trialBalance: balanced, lastSeq: 9, rate: withRate([], nowMs - 1000, 5) });
    const frame = render(<Dashboard state={state} url={url} nowMs={nowMs} />).lastFrame()!;
    expect(frame).toContain(`ledgerctl dashboard ${url}`);
    expect(frame).toContain('5 decisions/s');
    expect(frame).toContain('● live at event 9');
    expect(frame).toMatch(/USD\s+0\s+yes/);
    expect(frame).toContain('q: quit');
  });

  it('shows a refused trial balance instead of the table', () => {
    const frame = render(<Dashboard state={stateWith({ trialBalanceError: 'ERR-NotAuthorised: operator only' })} url={url} nowMs={nowMs} />).lastFrame()!;
    expect(frame).toContain('ERR-NotAuthorised: operator only');
  });

  it('shows operations, rate and reservations panes', () => {
    let state = stateWith({});
    state = onOperation(state, operation('op_9', 'Rejected', 'transfer', { error: 'ERR-InsufficientAvailable', description: '' }), 1, nowMs - 1000);
    state = onOperation(state, operation('r_1', 'Reserved', 'reserve'), 2, nowMs - 1000);
    const frameOf = (pane: DashboardState['pane']) => render(<Dashboard state={{ ...state, pane }} url={url} nowMs={nowMs} />).lastFrame()!;
    expect(frameOf('operations')).toMatch(/op_9\s+transfer\s+Rejected\s+\S+\s+ERR-InsufficientAvailable/);
    expect(frameOf('rate')).toContain('last 2/s · peak 2/s');
    expect(frameOf('reservations')).toContain('r_1');
    expect(frameOf('reservations')).toContain('1 held');
  });

  it("escapes served text in every pane: references, errors, the stream's reason", () => {
    const hostile = '\u001b[2J\u001b]0;pwned\u0007\u202e';
    const held = { ...operation('r1', 'Reserved', 'reserve'), reference: hostile };
    const failed = operation(`op_${hostile}`, 'Rejected', 'transfer', { error: `ERR-${hostile}`, description: hostile });
    let state = onOperation(stateWith({}), held, 1, nowMs);
    state = onOperation(state, failed, 2, nowMs);
    const reconnecting = { state: 'reconnecting' as const, reason: hostile, retryInMs: 200 };
    const frames = [
      ...(['operations', 'reservations'] as const).map((pane) => render(<Dashboard state={{ ...state, pane, connection: reconnecting }} url={url} nowMs={nowMs} />).lastFrame()!),
      render(<Dashboard state={stateWith({ trialBalanceError: hostile })} url={url} nowMs={nowMs} />).lastFrame()!,
    ];
    for (const frame of frames) {
      expect(frame).not.toMatch(/\u001b\[2J|\u001b\]0;|\u202e/);
      expect(frame).toContain('\\x1b[2J');
    }
  });

  it('says when it is reconnecting, and how far it had read', () => {
    const state = stateWith({ connection: { state: 'reconnecting', reason: 'ECONNREFUSED', retryInMs: 400 }, lastSeq: 12 });
    expect(render(<Dashboard state={state} url={url} nowMs={nowMs} />).lastFrame()).toContain('○ reconnecting in 400 ms at event 12 (ECONNREFUSED)');
  });
});

/** An event source the test pushes items into. */
function feed() {
  const queue: StreamItem[] = [];
  let wake: (() => void) | null = null;
  const push = (item: StreamItem) => {
    queue.push(item);
    wake?.();
  };
  async function* events(signal: AbortSignal): AsyncGenerator<StreamItem> {
    while (!signal.aborted) {
      if (queue.length === 0) await new Promise<void>((r) => (wake = r));
      wake = null;
      while (queue.length > 0) yield queue.shift()!;
    }
  }
  return { push, events };
}

const settle = () => new Promise((r) => setTimeout(r, 50));

describe('DashboardApp', () => {
  it('follows events, reads the trial balance, switches panes on keys and quits on q', async () => {
    const { push, events } = feed();
    let trialBalance: TrialBalance = balanced;
    let clockMs = nowMs - 1000;
    const sources: DashboardSources = { events, trialBalance: async () => trialBalance, now: () => clockMs };
    const app = render(<DashboardApp sources={sources} url={url} refreshMs={100} />);
    await settle();
    expect(app.lastFrame()).toContain('○ connecting');
    push({ type: 'open', after: null });
    push({ type: 'event', seq: 1, kind: 'operation', data: operation('op_1', 'Completed') });
    await settle();
    expect(app.lastFrame()).toContain('● live at event 1');
    clockMs = nowMs;
    expect(app.lastFrame()).toMatch(/USD\s+0\s+yes/);
    trialBalance = unbalanced;
    await new Promise((r) => setTimeout(r, 250));
    expect(app.lastFrame()).toContain('UNBALANCED');

    app.stdin.write('2');
    await settle();
    expect(app.lastFrame()).toMatch(/op_1\s+transfer\s+Completed/);
    app.stdin.write('\t');
    await settle();
    expect(app.lastFrame()).toContain('last 1/s');
    app.stdin.write('4');
    push({ type: 'event', seq: 2, kind: 'operation', data: operation('r_1', 'Reserved', 'reserve') });
    await settle();
    expect(app.lastFrame()).toContain('r_1');

    push({ type: 'lost', reason: 'ECONNRESET', retryInMs: 200 });
    await settle();
    expect(app.lastFrame()).toContain('reconnecting in 200 ms at event 2');
    push({ type: 'open', after: 2 });
    await settle();
    expect(app.lastFrame()).toContain('● live at event 2 · resumed 1×');

    app.stdin.write('q');
    await settle();
    expect(app.lastFrame()).toContain('q: quit');
    app.unmount();
  });
});
