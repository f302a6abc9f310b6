import { render } from 'ink-testing-library';
import { describe, expect, it, vi } from 'vitest';

// What `ledgerctl dashboard` does before importing Ink on a terminal (cli/live.ts): here it must
// run before this file's imports load Ink, so that CI=true does not turn live frames off.
vi.hoisted(() => {
  for (const name of ['CI', 'CONTINUOUS_INTEGRATION']) if (name in process.env) process.env[name] = 'false';
});
import type { TrialBalance } from '../../../cli/api.js';
import { type DashboardState, type KeyPress, filterLengthMax, initialState, onKey, onOperation, rateSeries, rateWindowS, withRate } from '../../../cli/dashboard/model.js';
import { readStatus } from '../../../cli/dashboard/metrics.js';
import { majorUnits } from '../../../cli/money.js';
import type { StreamItem } from '../../../cli/events.js';
import { Dashboard } from '../../../cli/views/dashboard.js';
import { DashboardApp, type DashboardSources } from '../../../cli/views/dashboard-app.js';
import { balanced, metricsSample, operation, unbalanced } from './fixtures.js';

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

describe('dashboard keys', () => {
  /** Ten operations, op_0 the oldest, so op_9 is listed first. */
  const listed = () => {
    let state = stateWith({ pane: 'operations' });
    for (let i = 0; i < 10; i++) state = onOperation(state, { ...operation(`op_${i}`, i % 3 === 0 ? 'Rejected' : 'Completed'), reference: { order: i } }, i, nowMs);
    return state;
  };
  const press = (state: DashboardState, ...keys: (string | Omit<KeyPress, 'input'>)[]) =>
    keys.reduce((s, key) => onKey(s, typeof key === 'string' ? { input: key } : { input: '', ...key }, 4), state);
  const selectedRef = (state: DashboardState) => state.detail?.operation_reference;

  it('moves with j/k and the arrows, by a page with PgDn/PgUp, scrolling to keep the selection shown', () => {
    let state = press(listed(), 'j', 'j', { downArrow: true });
    expect([state.selected, state.offset]).toEqual([3, 0]);
    state = press(state, 'j');
    expect([state.selected, state.offset]).toEqual([4, 1]);
    state = press(state, { pageDown: true }, { pageDown: true });
    expect([state.selected, state.offset]).toEqual([9, 6]);
    state = press(state, 'k', { upArrow: true }, { pageUp: true });
    expect([state.selected, state.offset]).toEqual([3, 3]);
    state = press(state, { pageUp: true }, 'k');
    expect([state.selected, state.offset]).toEqual([0, 0]);
    expect(selectedRef(press(state, 'j', { return: true }))).toBe('op_8');
  });

  it('filters on / then text (Enter keeps it, Esc clears it), and opens a match with Enter', () => {
    let state = press(listed(), 'j', '/', 'R', 'e', 'j', 'x', { backspace: true });
    expect(state.filtering).toBe(true);
    expect(state.filter).toBe('Rej');
    expect(state.selected).toBe(0);
    state = press(state, { return: true });
    expect(state.filtering).toBe(false);
    expect(press(state, 'j', { return: true }).detail?.operation_reference).toBe('op_6');
    const cleared = press(state, '/', { escape: true });
    expect([cleared.filter, cleared.filtering, cleared.quitting]).toEqual(['', false, false]);
    // q and digits are text while typing; a reference is matched too.
    const typed = press(listed(), '/', 'q', '2', { return: true });
    expect([typed.filter, typed.pane, typed.quitting]).toEqual(['q2', 'operations', false]);
    expect(press(listed(), '/', '"', 'o', 'r', 'd', 'e', 'r', '"', ':', '4').filter).toBe('"order":4');
    expect(press(listed(), '/', ...'x'.repeat(filterLengthMax + 5).split('')).filter).toHaveLength(filterLengthMax);
    // Keys that reach the terminal in one read act one by one.
    expect(press(listed(), 'k/reserve')).toMatchObject({ filtering: true, filter: 'reserve' });
    expect(press(listed(), 'jjj').selected).toBe(3);
  });

  it('closes an opened operation on Esc; Esc clears a filter before it quits; q quits', () => {
    const opened = press(listed(), { return: true });
    expect(opened.detail?.operation_reference).toBe('op_9');
    expect(press(opened, 'j').detail?.operation_reference).toBe('op_9');
    const back = press(opened, { escape: true });
    expect([back.detail, back.quitting]).toEqual([null, false]);
    const filtered = press(listed(), '/', 'x', { return: true });
    expect(press(filtered, { escape: true })).toMatchObject({ filter: '', quitting: false });
    expect(press(listed(), { escape: true }).quitting).toBe(true);
    expect(press(opened, 'q').quitting).toBe(true);
    expect(press(listed(), { tab: true }).pane).toBe('rate');
    expect(press(listed(), '1').pane).toBe('balance');
    expect(press(stateWith({ pane: 'balance' }), 'j')).toMatchObject({ selected: 0, pane: 'balance' });
  });
});

describe('Dashboard', () => {
  it('shows the trial balance pane with the connection and the rate', () => {
    const state = stateWith({ trialBalance: balanced, lastSeq: 9, rate: withRate([], nowMs - 1000, 5) });
    const frame = render(<Dashboard state={state} url={url} nowMs={nowMs} />).lastFrame()!;
    expect(frame).toContain(`ledgerctl dashboard ${url}`);
    expect(frame).toContain('5 decisions/s');
    expect(frame).toContain('● live at event 9');
    expect(frame).toMatch(/USD\s+…\s+…\s+0\s+0\s+0\s+yes/);
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
    expect(frameOf('operations')).toMatch(/29s ago\s+op_9\s+transfer\s+Rejected\s+ERR-InsufficientAvailable/);
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
      // An operation opened whole, a filter being typed, ledgerd's metrics (a version label) and why they are unavailable.
      render(<Dashboard state={{ ...state, pane: 'operations', detail: held }} url={url} nowMs={nowMs} />).lastFrame()!,
      render(<Dashboard state={{ ...state, pane: 'operations', filtering: true, filter: hostile }} url={url} nowMs={nowMs} />).lastFrame()!,
      render(<Dashboard state={{ ...state, status: readStatus(`ledgerd_build_info{version="${hostile.replaceAll('\u0007', '')}"} 1\n`) }} url={url} nowMs={nowMs} />).lastFrame()!,
      render(<Dashboard state={{ ...state, status: { unavailable: hostile } }} url={url} nowMs={nowMs} />).lastFrame()!,
    ];
    for (const frame of frames) {
      expect(frame).not.toMatch(/\u001b\[2J|\u001b\]0;|\u202e/);
      expect(frame).toContain('\\x1b[2J');
    }
  });

  it('shows the selected row, the filter and the range of the operations pane, and an operation whole', () => {
    let state = stateWith({ pane: 'operations' });
    for (let i = 0; i < 30; i++) state = onOperation(state, operation(`op_${i}`, 'Completed'), i, nowMs);
    state = { ...state, selected: 12, offset: 10, filter: '' };
    const frame = render(<Dashboard state={state} url={url} nowMs={nowMs} rows={5} />).lastFrame()!;
    expect(frame).toMatch(/29s ago\s+op_19\s+transfer/);
    expect(frame).not.toContain('op_20 ');
    expect(frame).not.toContain('op_14 ');
    expect(frame).toContain('11-15 of 30');
    const typing = render(<Dashboard state={{ ...state, filtering: true, filter: 'op_2', selected: 0, offset: 0 }} url={url} nowMs={nowMs} rows={5} />).lastFrame()!;
    expect(typing).toContain('/op_2▏');
    expect(typing).toContain('1-5 of 11 (filtered from 30)');
    const opened = render(<Dashboard state={{ ...state, detail: operation('op_gone', 'Rejected', 'transfer', { error: 'ERR-BoundExceeded', description: 'over' }) }} url={url} nowMs={nowMs} />).lastFrame()!;
    expect(opened).toContain('operation op_gone');
    expect(opened).toMatch(/error\s+ERR-BoundExceeded: over/);
    expect(opened).toMatch(/decided\s+2026-01-02T00:00:01.000Z \(29s ago\)/);
    expect(opened).toContain('Esc: back');
  });

  it('shows what each operation moves and who submitted it, in major units, and filters on them', () => {
    const amount = (minor: string, asset: string) => `${majorUnits(minor, 2)} ${asset}`;
    const transfer = { ...operation('op_pay', 'Completed'), principal: 'did:ledger:id:alice', moves: [{ from: 'did:ledger:acct:a1', to: 'did:ledger:acct:b1', amount: '1250', asset: 'USD' }] };
    const split = { ...operation('op_split', 'Completed'), principal: 'did:ledger:id:operator', moves: [{ from: 'did:ledger:acct:t', to: 'did:ledger:acct:a1', amount: '100', asset: 'USD' }, { from: 'did:ledger:acct:t', to: 'did:ledger:acct:b1', amount: '50', asset: 'USD' }] };
    const hold = { ...operation('op_hold', 'Reserved', 'reserve'), principal: 'did:ledger:id:alice', moves: [{ from: 'did:ledger:acct:a1', to: null, amount: '700', asset: 'USD' }] };
    let state = stateWith({ pane: 'operations' });
    for (const [i, op] of [transfer, split, hold].entries()) state = onOperation(state, op, i, nowMs);
    const frame = render(<Dashboard state={state} url={url} nowMs={nowMs} amount={amount} />).lastFrame()!;
    // Identifiers without their did:ledger: prefix, shown whole when opened.
    expect(frame).toMatch(/AMOUNT\s+FROM\s+TO\s+BY\s+ERROR/);
    expect(frame).toMatch(/op_pay\s+transfer\s+Completed\s+12\.50 USD\s+a1\s+b1\s+alice/);
    expect(frame).toMatch(/op_split\s+transfer\s+Completed\s+1\.50 USD\s+t \+1\s+a1 \+1\s+operator/);
    expect(frame).toMatch(/op_hold\s+reserve\s+Reserved\s+7\.00 USD\s+a1\s+\(held\)/);
    const filtered = render(<Dashboard state={{ ...state, filter: 'id:operator' }} url={url} nowMs={nowMs} amount={amount} />).lastFrame()!;
    expect(filtered).toContain('op_split');
    expect(filtered).not.toContain('op_pay');
    const opened = render(<Dashboard state={{ ...state, detail: split }} url={url} nowMs={nowMs} amount={amount} />).lastFrame()!;
    expect(opened).toMatch(/principal\s+did:ledger:id:operator/);
    expect(opened).toMatch(/moves\s+1\.00 USD did:ledger:acct:t -> did:ledger:acct:a1; 0\.50 USD did:ledger:acct:t ->\s+did:ledger:acct:b1/);
  });

  it('shows per asset what is issued, what customers hold, reserve and have encumbered, the sum, and whether it balances', () => {
    const trialBalance = {
      accounts: 5,
      rows: [
        { asset: 'USD', openings: '0', layers: { available: '-40', reserved: '30', encumbered: '10' } },
        { asset: 'EUR', openings: '-5', layers: { available: '-5', reserved: '0', encumbered: '0' } },
        { asset: 'GBP', openings: '0' },
      ],
      unbalanced: [{ currency: 2, layer: 1 }],
      view: 8,
    };
    const treasuries = { accounts: 2, byAsset: new Map([['USD', -100_000n]]) };
    const amount = (minor: string, asset: string) => `${majorUnits(minor, 2)} ${asset}`;
    const frame = render(<Dashboard state={stateWith({ trialBalance, treasuries })} url={url} nowMs={nowMs} amount={amount} />).lastFrame()!;
    expect(frame).toMatch(/ASSET\s+ISSUED\s+HELD\s+RESERVED\s+ENCUMBERED\s+SUM\s+BALANCED/);
    // Held: the book's available layer (-0.40) less the treasuries (-1000.00).
    expect(frame).toMatch(/USD\s+1000\.00 USD\s+999\.60 USD\s+0\.30 USD\s+0\.10 USD\s+0\.00 USD\s+yes/);
    expect(frame).toMatch(/EUR\s+0\.00 EUR\s+-0\.05 EUR\s+0\.00 EUR\s+0\.00 EUR\s+-0\.05 EUR\s+NO/);
    // A daemon that serves no layers: what it cannot say is shown as unknown, never guessed.
    expect(frame).toMatch(/GBP\s+0\.00 GBP\s+…\s+…\s+…\s+0\.00 GBP\s+yes/);
    expect(frame).toContain('UNBALANCED');
    expect(frame).toContain("the operator's 2 treasuries below zero");
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
/** Settles until `test` holds (at most 2 s): Ink tells Esc from a key sequence only after a pause, longer on a loaded machine. */
const until = async (test: () => boolean) => {
  for (let i = 0; i < 40 && !test(); i++) await settle();
};

describe('DashboardApp', () => {
  it('follows events, reads the trial balance, switches panes on keys and quits on q', async () => {
    const { push, events } = feed();
    let trialBalance: TrialBalance = balanced;
    let clockMs = nowMs - 1000;
    const sources: DashboardSources = {
      events,
      trialBalance: async () => trialBalance,
      treasuries: async () => ({ accounts: 1, byAsset: new Map([['USD', -100n]]) }),
      metrics: async () => {
        throw new Error('HTTP-404: Route GET:/metrics not found');
      },
      now: () => clockMs,
    };
    const app = render(<DashboardApp sources={sources} url={url} refreshMs={100} />);
    await settle();
    expect(app.lastFrame()).toContain('○ connecting');
    push({ type: 'open', after: null });
    push({ type: 'event', seq: 1, kind: 'operation', data: operation('op_1', 'Completed') });
    await settle();
    expect(app.lastFrame()).toContain('● live at event 1');
    clockMs = nowMs;
    expect(app.lastFrame()).toMatch(/USD\s+100\s+100\s+0\s+0\s+0\s+yes/);
    expect(app.lastFrame()).toContain('metrics unavailable (HTTP-404: Route GET:/metrics not found)');
    trialBalance = unbalanced;
    await new Promise((r) => setTimeout(r, 250));
    expect(app.lastFrame()).toContain('UNBALANCED');

    app.stdin.write('2');
    await settle();
    // ink-testing-library's terminal is 100 columns: the narrow forms.
    expect(app.lastFrame()).toMatch(/op_1\s+xfer\s+Done/);
    app.stdin.write('\r');
    await settle();
    expect(app.lastFrame()).toContain('operation op_1');
    expect(app.lastFrame()).toMatch(/client_key\s+key-op_1/);
    app.stdin.write('\u001b');
    await until(() => !app.lastFrame()!.includes('operation op_1'));
    expect(app.lastFrame()).not.toContain('operation op_1');
    expect(app.lastFrame()).toMatch(/op_1\s+xfer\s+Done/);
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

  it("shows ledgerd's metrics on the status line, and a treasury read that fails leaves the pane going", async () => {
    const sources: DashboardSources = {
      events: feed().events,
      trialBalance: async () => balanced,
      treasuries: async () => {
        throw new Error('ERR-NotAuthorised: no');
      },
      metrics: async () => metricsSample,
      now: () => Date.UTC(2026, 0, 2, 1, 0, 5),
    };
    const app = render(<DashboardApp sources={sources} url={url} refreshMs={100} />);
    await until(() => app.lastFrame()!.includes('backlog 7'));
    // ink-testing-library's 100 columns: the narrow words.
    expect(app.lastFrame()).toContain('backlog 7 · p50 6.0 ms p99 50 ms · rej 5.0% of 1000 · v0.2.0 · up 1h 0m');
    expect(app.lastFrame()).toMatch(/USD\s+…\s+…\s+0\s+0\s+0\s+yes/);
    app.unmount();
  });
});
