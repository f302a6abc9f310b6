/** The dashboard's reading of ledgerd's `/metrics` (Prometheus text format), on a fixed sample. */
import { describe, expect, it } from 'vitest';
import { metricsSample as sample, metricsStartS as startS } from './fixtures.js';
import { ageText, histogramQuantile, parseMetrics, readStatus, statusOf, statusText } from '../../../cli/dashboard/metrics.js';


describe('the metrics text format', () => {
  it('parses samples with labels (escapes included), skipping comments and broken lines', () => {
    const samples = parseMetrics(`${sample}\nnot a sample line\nweird{le="1" 3\nx_total{a="q\\"uo\\\\te",b="2"} 5 1700000000000\n`);
    expect(samples.find((s) => s.name === 'ledgerd_backlog_commands')).toEqual({ name: 'ledgerd_backlog_commands', labels: {}, value: 7 });
    expect(samples.find((s) => s.name === 'x_total')).toEqual({ name: 'x_total', labels: { a: 'q"uo\\te', b: '2' }, value: 5 });
    expect(samples.some((s) => s.name === 'weird' || s.name === 'not')).toBe(false);
    expect(samples.find((s) => s.labels.le === '+Inf')?.value).toBe(1000);
  });

  it('estimates quantiles from buckets as histogram_quantile does', () => {
    const buckets = [
      { le: 0.005, count: 400 },
      { le: 0.01, count: 900 },
      { le: 0.05, count: 990 },
      { le: 0.1, count: 1000 },
      { le: Infinity, count: 1000 },
    ];
    // Rank 500 is the 100th of the 500 in (0.005, 0.01]: 0.005 + 0.005 * 100/500.
    expect(histogramQuantile(0.5, buckets)).toBeCloseTo(0.006, 9);
    // Rank 990 ends the (0.01, 0.05] bucket.
    expect(histogramQuantile(0.99, buckets)).toBeCloseTo(0.05, 9);
    // In the first bucket the lower bound is 0.
    expect(histogramQuantile(0.25, buckets)).toBeCloseTo(0.003125, 9);
    // Past the last finite bound: that bound.
    expect(histogramQuantile(0.99, [{ le: 1, count: 1 }, { le: Infinity, count: 10 }])).toBe(1);
    expect(histogramQuantile(0.5, [{ le: 1, count: 0 }, { le: Infinity, count: 0 }])).toBeNull();
    expect(histogramQuantile(0.5, [{ le: 1, count: 3 }])).toBeNull();
  });

  it('makes the status line from the names ledgerd serves', () => {
    const status = statusOf(parseMetrics(sample));
    expect(status).toEqual({ backlog: 7, p50Seconds: expect.closeTo(0.006, 9), p99Seconds: expect.closeTo(0.05, 9), rejectionRate: 0.05, decisions: 1000, version: '0.2.0', startedAtMs: startS * 1000 });
    expect(statusText(status, startS * 1000 + 125_000)).toBe('backlog 7 · decision p50 6.0 ms p99 50 ms · rejected 5.0% of 1000 · ledgerd 0.2.0 · up 2m 5s');
  });

  it('says what is missing rather than invent it', () => {
    expect(statusText(statusOf(parseMetrics('')), 0)).toBe('backlog - · decision p50 - p99 - · rejected - of - · ledgerd - · up -');
    expect(readStatus('<html>404</html>')).toEqual({ unavailable: 'no ledgerd metrics in the reply' });
    expect(statusText(readStatus('ledgerd_backlog_commands 3\n'), 0)).toBe('backlog 3 · decision p50 - p99 - · rejected - of - · ledgerd - · up -');
    expect(statusText({ unavailable: 'HTTP-404: not found' }, 0)).toBe('metrics unavailable (HTTP-404: not found)');
  });

  it('shows ages at a glance', () => {
    expect(ageText(1000, 4000)).toBe('3s ago');
    expect(ageText(0, 150_000)).toBe('2m ago');
    expect(ageText(0, 3 * 3_600_000)).toBe('3h ago');
    expect(ageText(5000, 0)).toBe('0s ago');
  });
});
