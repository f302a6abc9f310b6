import { describe, expect, it } from 'vitest';
import { Metrics } from '../../daemon/metrics.js';
import type { DecisionEvent } from '../../src/book/kernel.js';

/** The request metrics' lines of an exposition, by series. */
function requestLines(text: string): Map<string, number> {
  const lines = text.split('\n').filter((line) => line.startsWith('ledgerd_http_request'));
  return new Map(lines.map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1))]));
}

describe('metrics counted per request and per decision', () => {
  it('count each request by method, route and status, and time it by method and route, across statuses and scrapes', async () => {
    const metrics = new Metrics('test');
    metrics.observeRequest('POST', '/v1/transfers', 202, 0.003);
    metrics.observeRequest('POST', '/v1/transfers', 202, 0.0001);
    metrics.observeRequest('POST', '/v1/transfers', 503, 40);
    metrics.observeRequest('GET', null, 404, 0.002);
    let lines = requestLines(await metrics.scrape(null, 0));
    expect(lines.get('ledgerd_http_requests_total{method="POST",route="/v1/transfers",status="202"}')).toBe(2);
    expect(lines.get('ledgerd_http_requests_total{method="POST",route="/v1/transfers",status="503"}')).toBe(1);
    expect(lines.get('ledgerd_http_requests_total{method="GET",route="unrouted",status="404"}')).toBe(1);
    const post = (name: string, le?: string) => lines.get(`ledgerd_http_request_duration_seconds_${name}{${le === undefined ? '' : `le="${le}",`}method="POST",route="/v1/transfers"}`);
    expect(post('count')).toBe(3);
    expect(post('sum')).toBeCloseTo(40.0031, 9);
    expect(post('bucket', '0.001')).toBe(1);
    expect(post('bucket', '0.005')).toBe(2);
    expect(post('bucket', '30')).toBe(2);
    expect(post('bucket', '+Inf')).toBe(3);
    expect(lines.get('ledgerd_http_request_duration_seconds_count{method="GET",route="unrouted"}')).toBe(1);
    metrics.observeRequest('POST', '/v1/transfers', 202, 0.5);
    lines = requestLines(await metrics.scrape(null, 0));
    expect(lines.get('ledgerd_http_requests_total{method="POST",route="/v1/transfers",status="202"}')).toBe(3);
    expect(post('count')).toBe(4);
    expect(post('bucket', '0.5')).toBe(3);
  });

  it('count decisions by state and rejections by code, and time first decisions only', async () => {
    const metrics = new Metrics('test');
    const decided = (state: string, type: string, afterMs: number | null, error: string | null) =>
      metrics.observeDecision({ operation: { state, command: { type }, error: error === null ? null : { error, description: '' }, submittedAtMs: 1000, decidedAtMs: afterMs === null ? null : 1000 + afterMs } } as unknown as DecisionEvent);
    decided('Completed', 'transfer', 3, null);
    decided('Completed', 'transfer', 7, null);
    decided('Rejected', 'transfer', 20_000, 'ERR-InsufficientFunds');
    decided('Instructed', 'withdraw', 5, null);
    decided('Completed', 'withdraw', 9, null);
    const text = await metrics.scrape(null, 0);
    const value = (series: string) => Number(text.split('\n').find((line) => line.startsWith(`${series} `))?.split(' ')[1]);
    expect(value('ledgerd_decisions_total{state="Completed"}')).toBe(3);
    expect(value('ledgerd_decisions_total{state="Rejected"}')).toBe(1);
    expect(value('ledgerd_rejections_total{code="ERR-InsufficientFunds"}')).toBe(1);
    // The withdrawal's Completed is not a first decision: 4 of the 5 are timed.
    expect(value('ledgerd_decision_latency_seconds_count')).toBe(4);
    expect(value('ledgerd_decision_latency_seconds_sum')).toBeCloseTo(20.015, 9);
    expect(value('ledgerd_decision_latency_seconds_bucket{le="0.005"}')).toBe(2);
    expect(value('ledgerd_decision_latency_seconds_bucket{le="10"}')).toBe(3);
    expect(value('ledgerd_decision_latency_seconds_bucket{le="+Inf"}')).toBe(4);
  });
});
