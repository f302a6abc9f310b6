import { render } from 'ink-testing-library';
import { describe, expect, it, vi } from 'vitest';

// As in dashboard.test.tsx: before Ink loads, so that CI=true does not turn live frames off.
vi.hoisted(() => {
  for (const name of ['CI', 'CONTINUOUS_INTEGRATION']) if (name in process.env) process.env[name] = 'false';
});
import { type DashboardState, type LayerFigures, initialState, onKey } from '../../../cli/dashboard/model.js';
import { Dashboard } from '../../../cli/views/dashboard.js';

const nowMs = Date.UTC(2026, 0, 2, 0, 0, 30);
const url = 'http://127.0.0.1:8470';
const figures: LayerFigures = {
  serving: true,
  height: 42,
  finalHeight: 40,
  takenIn: 40,
  pendingInstructions: 3,
  freshUntilMs: nowMs + 5_000,
  comparison: { height: 40, differs: false, rows: [{ asset: 'USD', book: '300', layer: '300', difference: '0', liabilities: '250', solvent: true }] },
};
const frameOf = (changes: Partial<DashboardState>) => render(<Dashboard state={{ ...initialState(), connection: { state: 'live' }, pane: 'layer', ...changes }} url={url} nowMs={nowMs} />).lastFrame()!;

describe('the dashboard settlement-layer pane', () => {
  it('is pane 5: height, final height, serving, pending instructions and the last comparison', () => {
    expect(onKey(initialState(), { input: '5' }, 10).pane).toBe('layer');
    const frame = frameOf({ layer: figures });
    expect(frame).toContain('5 Settlement layer');
    expect(frame).toContain('height 42 · final 40 · book took in 40 · lag 0');
    expect(frame).toContain('serving until 00:00:35 · pending instructions 3');
    expect(frameOf({ layer: { ...figures, takenIn: 37 } })).toContain('book took in 37 · lag 3');
    expect(frame).toMatch(/USD\s+300\s+300\s+0\s+250\s+yes/);
    expect(frame).not.toContain('INSOLVENT');
    expect(frame).toContain('last comparison at height 40: no difference');
  });

  it('says when the layer does not serve, its status is stale, the book differs, or it cannot be read', () => {
    expect(frameOf({ layer: { ...figures, serving: false } })).toContain('NOT SERVING');
    expect(frameOf({ layer: { ...figures, freshUntilMs: nowMs } })).toContain('serving (status stale)');
    const differs = { ...figures.comparison, differs: true, rows: [{ asset: 'USD', book: '300', layer: '307', difference: '7', liabilities: null, solvent: null }] };
    expect(frameOf({ layer: { ...figures, comparison: differs } })).toContain('the book and the layer DIFFER');
    expect(frameOf({ layer: { unavailable: 'ERR-NotAuthorised: operator only\u001b[31m' } })).toContain('settlement layer: ERR-NotAuthorised: operator only');
    expect(frameOf({ layer: null })).toContain('loading');
    // CONTRACT 12.6: an asset whose layer holds less than its customers' liabilities is marked.
    const short = { ...figures.comparison, rows: [{ asset: 'USD', book: '300', layer: '300', difference: '0', liabilities: '301', solvent: false }] };
    const insolvent = frameOf({ layer: { ...figures, comparison: short } });
    expect(insolvent).toMatch(/USD\s+300\s+300\s+0\s+301\s+NO: INSOLVENT/);
    expect(insolvent).toContain("INSOLVENT: the layer holds less than the customers' liabilities in USD");
  });
});
