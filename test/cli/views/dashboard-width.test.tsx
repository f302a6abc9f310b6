/**
 * The dashboard on an 80-column terminal: every pane fits without a line past the width (so
 * nothing wraps or is cut), taking the narrow forms (short identifiers, commands, states, tabs);
 * from 120 columns the full ones. And what it opens on: the replayed recent past fills the panes
 * but is not counted as this second's decisions.
 */
import { render } from 'ink-testing-library';
import { describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  for (const name of ['CI', 'CONTINUOUS_INTEGRATION']) if (name in process.env) process.env[name] = 'false';
});
import { type DashboardState, type LayerFigures, initialState, onOperation, panes, rateSeries } from '../../../cli/dashboard/model.js';
import { readStatus } from '../../../cli/dashboard/metrics.js';
import { majorUnits } from '../../../cli/money.js';
import { Dashboard } from '../../../cli/views/dashboard.js';
import { metricsSample, operation } from './fixtures.js';

const nowMs = Date.UTC(2026, 0, 2, 0, 0, 30);
const url = 'http://127.0.0.1:8470';
const amount = (minor: string, asset: string) => `${majorUnits(minor, 2)} ${asset}`;
const account = (n: number) => `did:ledger:acct:a${n.toString(16).padStart(16, '0')}`;

/** A busy book: big amounts, the daemon's long identifiers, holds with deadlines, the layer read. */
function busy(): DashboardState {
  let state: DashboardState = { ...initialState(), connection: { state: 'live' }, status: readStatus(metricsSample) };
  for (let i = 0; i < 30; i++) {
    const ref = `op_${(0x7d0 + i).toString(16).padStart(16, '0')}`;
    const transfer = { ...operation(ref, i % 7 === 0 ? 'Rejected' : 'Completed', 'transfer', i % 7 === 0 ? { error: 'ERR-InsufficientFunds', description: 'short' } : undefined), principal: 'did:ledger:id:i000000000000002a', moves: [{ from: account(i), to: account(i + 1), amount: '123456789012', asset: 'USD' }] };
    const hold = { ...operation(`op_${(0x9d0 + i).toString(16).padStart(16, '0')}`, 'Reserved', 'reserve'), principal: 'did:ledger:id:operator', deadline: nowMs + 6 * 86_400_000, moves: [{ from: account(i), to: null, amount: '99999999', asset: 'USD' }] };
    state = onOperation(onOperation(state, transfer, 2 * i, nowMs), hold, 2 * i + 1, nowMs);
  }
  const layer: LayerFigures = {
    serving: true,
    height: 123456,
    finalHeight: 123454,
    takenIn: 123450,
    pendingInstructions: 1024,
    freshUntilMs: nowMs + 5_000,
    comparison: { height: 123450, differs: false, rows: [{ asset: 'USD', book: '-123456789012', layer: '123456789012', difference: '0', liabilities: '123456789012', solvent: true }] },
  };
  const trialBalance = { accounts: 100_000, rows: [{ asset: 'USD', openings: '0', layers: { available: '-99999999', reserved: '99999999', encumbered: '0' } }], unbalanced: [], view: 123_456_789 };
  // Open proposals, one with control characters in what its proposer wrote (echoed escaped, never run by the terminal).
  const proposals = {
    items: [
      { proposal: 'did:ledger:proposal:000000000000000000000000000000a7', proposer: 'olga', proposedAtMs: nowMs - 90_000, method: 'POST', path: '/v1/accounts/did:ledger:acct:a000000000000001f/freeze', justification: 'fraud review 7\u001b[2J\u0007 of a long, long case file number 12345' },
      { proposal: 'did:ledger:proposal:000000000000000000000000000000a6', proposer: 'a-member-with-a-rather-long-name', proposedAtMs: nowMs - 3_600_000, method: 'POST', path: '/v1/ops/approvals/policy', justification: 'drop backup from the rules' },
    ],
    more: true,
  };
  return { ...state, layer, proposals, trialBalance, treasuries: { accounts: 2, byAsset: new Map([['USD', -123456789012n]]) } };
}

const screenOf = (state: DashboardState, columns: number) => render(<Dashboard state={state} url={url} nowMs={nowMs} rows={15} columns={columns} amount={amount} />).lastFrame()!;

describe('the dashboard at 80 columns', () => {
  it('fits every pane in 80 columns, in its narrow form', () => {
    for (const pane of panes) {
      const screen = screenOf({ ...busy(), pane }, 80);
      for (const line of screen.split('\n')) expect(line.length, `${pane}: ${line}`).toBeLessThanOrEqual(80);
      // Nothing was cut to fit either (a cut line ends in an ellipsis).
      expect(screen, pane).not.toMatch(/…$/m);
      expect(screen).toContain(' 1 Balance  2 Ops  3 Rate  4 Holds  5 Layer  6 Props');
    }
    const operations = screenOf({ ...busy(), pane: 'operations' }, 80);
    expect(operations).toMatch(/^\s*AGE\s+OP\s+CMD\s+STATE\s+AMOUNT\s+FROM\s+TO$/m);
    expect(operations).toMatch(/29s ago\s+op…9ed\s+reserve\s+Held\s+999999\.99 USD\s+a…1d\s+\(held\)/);
    expect(operations).toMatch(/29s ago\s+op…7ed\s+xfer\s+Done\s+1234567890\.12 USD\s+a…1d\s+a…1e/);
    const holds = screenOf({ ...busy(), pane: 'reservations' }, 80);
    expect(holds).toMatch(/^RESERVATION\s+PAYER\s+AMOUNT\s+EXPIRES\s+HELD$/m);
    expect(holds).toMatch(/op…9ed\s+a…1d\s+999999\.99 USD\s+in 6d 0h\s+29s ago/);
    const layer = screenOf({ ...busy(), pane: 'layer' }, 80);
    expect(layer).toContain('height 123456 · final 123454 · book took in 123450 · lag 4');
    expect(layer).toContain('pending instructions 1024');
    expect(layer).toMatch(/USD\s+-1234567890\.12\s+1234567890\.12\s+0\.00\s+1234567890\.12\s+yes/);
    const proposals = screenOf({ ...busy(), pane: 'proposals' }, 80);
    expect(proposals).toMatch(/^PROPOSAL\s+BY\s+ACT\s+WHY\s+AGE$/m);
    expect(proposals).toMatch(/…a7\s+olga\s+accounts\/did:ledger…\s+fraud review 7\\x1b\[2J…\s+1m ago/);
    expect(proposals).not.toContain('\u001b[2J');
    expect(proposals).not.toContain('\u0007');
    expect(proposals).toContain('2 open (more: ledgerctl ops proposals list)');
  });

  it('shows every column and whole references from 120 columns', () => {
    const operations = screenOf({ ...busy(), pane: 'operations' }, 120);
    expect(operations).toContain(' 1 Trial balance  2 Operations  3 Decisions/s  4 Pending reservations  5 Settlement layer  6 Proposals');
    expect(operations).toMatch(/op_00000000000007ed\s+transfer\s+Completed\s+1234567890\.12 USD/);
    const holds = screenOf({ ...busy(), pane: 'reservations' }, 120);
    expect(holds).toMatch(/RESERVATION\s+PAYER\s+AMOUNT\s+EXPIRES\s+DEADLINE\s+HELD/);
    expect(holds).toMatch(/op_00000000000009ed\s+a…1d\s+999999\.99 USD\s+in 6d 0h\s+2026-01-08T00:00:30\.000Z\s+29s ago\s+operator/);
    expect(operations).toMatch(/op_00000000000007ec\s+transfer\s+Rejected\s+1234567890\.12 USD\s+a…1c\s+a…1d\s+i…2a\s+ERR-InsufficientFunds/);
    const proposals = screenOf({ ...busy(), pane: 'proposals' }, 120);
    expect(proposals).toMatch(/^0+a7\s+olga\s+accounts\/did:ledger:acct:a0…\s+fraud review 7\\x1b\[2J\\x…\s+1m ago$/m);
    expect(proposals).toMatch(/^0+a6\s+a-member-with-a…\s+ops\/approvals\/policy\s+drop backup from the ru…\s+1h ago$/m);
    expect(proposals).toContain('2 open (more: ledgerctl ops proposals list) · approve with ledgerctl ops proposals approve');
  });
});

describe('the recent past', () => {
  it('fills the panes from replayed events without counting them as decisions now', () => {
    const replayed = onOperation(initialState(), operation('op_1', 'Completed'), 1, nowMs, false);
    expect(replayed.operations.map((o) => o.operation_reference)).toEqual(['op_1']);
    expect(rateSeries(replayed.rate, nowMs + 1000).every((n) => n === 0)).toBe(true);
    const live = onOperation(replayed, operation('op_2', 'Completed'), 2, nowMs, true);
    expect(rateSeries(live.rate, nowMs + 1000).at(-2)).toBe(1);
  });
});
