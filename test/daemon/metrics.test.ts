/**
 * Operator experience, black-box: GET /metrics in the Prometheus text format (operator
 * only), and the daemon's log: one line per request with status, refusal code and
 * principal, decisions at debug, and no bearer token anywhere in it.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { client, decided, refused, useDaemon } from './support.js';

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const shared = useDaemon({ alice: 1_000n, bob: 0n }, undefined, { LEDGERD_LOG_LEVEL: 'debug' });
const op = shared.as('operator');
const asAlice = shared.as('alice');
let keyCounter = 0;
const transfer = (amount: string) => asAlice.post('/v1/transfers', { legs: [{ from: alice, to: bob, asset: 'USD', amount }] }, undefined, { 'client-key': `m-${++keyCounter}` });

/** The samples of a Prometheus text exposition, by series (name and labels as written). */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

async function scrape(): Promise<Map<string, number>> {
  const r = await op.get('/metrics');
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return samples(r.text);
}

/** The daemon's JSON log lines, once one satisfies `ready` (a request's line is written as it ends, after its reply). */
async function logLines(ready: (line: Record<string, any>) => boolean): Promise<Record<string, any>[]> {
  for (let i = 0; i < 200; i++) {
    const lines = shared.daemon.stderr.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
    if (lines.some(ready)) return lines;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error('the awaited log line never came');
}

describe('GET /metrics', () => {
  it('is the operator\'s only: no bearer is 401, a customer is 403, both in the refusal shape', async () => {
    expect(await refused(op.get('/metrics', null))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect(await refused(asAlice.get('/metrics'))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
  });

  it('counts decisions by state, rejections by code, latency, store writes, streams and the build', async () => {
    const before = await scrape();
    const completed = await transfer('10');
    const rejected = await transfer('5000');
    expect((await decided(asAlice, completed.body.operation_reference)).body.state).toBe('Completed');
    expect((await decided(asAlice, rejected.body.operation_reference)).body.state).toBe('Rejected');
    const stream = await request(`${shared.daemon.url}/v1/events`, { headers: { authorization: `Bearer ${shared.keys.operator}` } });
    try {
      const after = await scrape();
      const grew = (series: string) => (after.get(series) ?? 0) - (before.get(series) ?? 0);
      expect(grew('ledgerd_decisions_total{state="Completed"}')).toBe(1);
      expect(grew('ledgerd_decisions_total{state="Rejected"}')).toBe(1);
      expect(grew('ledgerd_rejections_total{code="ERR-InsufficientAvailable"}')).toBe(1);
      expect(grew('ledgerd_decision_latency_seconds_count')).toBe(2);
      expect(after.get('ledgerd_decision_latency_seconds_bucket{le="+Inf"}')).toBe(after.get('ledgerd_decision_latency_seconds_count'));
      // Two acknowledgements and two decision rounds at least, each one atomic write.
      expect(grew('ledgerd_store_write_seconds_count')).toBeGreaterThanOrEqual(3);
      expect(after.get('ledgerd_event_streams')).toBe(1);
      expect(after.get('ledgerd_backlog_commands')).toBe(0);
      expect(after.get('ledgerd_build_info{version="0.1.0"}')).toBe(1);
      const startedS = after.get('process_start_time_seconds')!;
      expect(Math.abs(startedS - Date.now() / 1000)).toBeLessThan(600);
    } finally {
      stream.body.destroy();
    }
  });
});

describe('GET /metrics after traffic', () => {
  it('counts requests by route pattern (never the raw path), status and latency; reads settlement, checkpoints, balance and backlog shares; an auditor scrapes it', async () => {
    const before = await scrape();
    const done = await transfer('7');
    await decided(asAlice, done.body.operation_reference);
    expect((await asAlice.get(`/v1/accounts/${alice}`)).status).toBe(200);
    expect((await asAlice.get(`/v1/accounts/${bob}`)).status).toBe(403);
    expect((await asAlice.get('/v1/no/such/route/x-secret-1')).status).toBe(400);
    expect((await asAlice.get('/v1/no/such/route/x-secret-2')).status).toBe(400);
    // A final checkpoint: one taken, then blocks past the finality depth.
    expect((await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'metrics-cp' })).status).toBe(200);
    expect((await op.post('/v1/ops/layer/blocks', { count: 3 })).status).toBe(200);

    const member = await op.post('/v1/ops/members', { name: 'scraper', role: 'auditor', scheme: 'api-key' }, undefined, { 'client-key': 'metrics-member' });
    expect([200, 202]).toContain(member.status);
    await decided(op, member.body.operation_reference);
    const auditor = client(() => shared.daemon.url, member.body.api_key);
    const r = await auditor.get('/metrics');
    expect(r.status, r.text).toBe(200);
    const after = samples(r.text);
    const grew = (series: string) => (after.get(series) ?? 0) - (before.get(series) ?? 0);

    expect(grew('ledgerd_http_requests_total{method="POST",route="/v1/transfers",status="202"}')).toBe(1);
    expect(grew('ledgerd_http_requests_total{method="GET",route="/v1/accounts/:account",status="200"}')).toBe(1);
    expect(grew('ledgerd_http_requests_total{method="GET",route="/v1/accounts/:account",status="403"}')).toBe(1);
    expect(grew('ledgerd_http_requests_total{method="GET",route="unrouted",status="400"}')).toBe(2);
    expect(r.text).not.toContain('x-secret');
    expect(r.text).not.toContain(alice);
    expect(grew('ledgerd_http_request_duration_seconds_count{method="GET",route="/v1/accounts/:account"}')).toBe(2);
    expect(after.get('ledgerd_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/v1/accounts/:account"}')).toBe(after.get('ledgerd_http_request_duration_seconds_count{method="GET",route="/v1/accounts/:account"}'));

    const height = after.get('ledgerd_settlement_height')!;
    expect(height).toBeGreaterThanOrEqual(3);
    expect(after.get('ledgerd_settlement_final_height')).toBe(height - 2);
    expect(after.get('ledgerd_settlement_taken_in_height')).toBeLessThanOrEqual(height - 2);
    expect(after.get('ledgerd_settlement_lag_blocks')).toBe(height - 2 - after.get('ledgerd_settlement_taken_in_height')!);
    expect(after.get('ledgerd_settlement_pending_instructions')).toBe(0);
    // NaN while no checkpoint was final; now the age of the one just made.
    expect(before.get('ledgerd_checkpoint_final_age_seconds')).toBeNaN();
    const age = after.get('ledgerd_checkpoint_final_age_seconds')!;
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(600);
    expect(after.get('ledgerd_book_balanced')).toBe(1);
    // Read afresh for this scrape while the book reads (a stuck store leaves them older: test/daemon/postgres/snapshot-bounds.test.ts).
    expect(after.get('ledgerd_book_gauges_age_seconds')).toBeLessThan(1);
    expect(after.get('ledgerd_backlog_commands_by_share{share="operator"}')).toBe(0);
    expect(after.get('ledgerd_backlog_commands_by_share{share="principals"}')).toBe(0);
  });
});

describe('the log', () => {
  it('has one line per request with its status, refusal code and principal, and decisions at debug', async () => {
    const ok = await transfer('1');
    await decided(asAlice, ok.body.operation_reference);
    expect(await refused(asAlice.get('/v1/trial-balance'))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    const lines = await logLines((l) => l.msg === 'request' && l.url === '/v1/trial-balance');
    const requests = lines.filter((l) => l.msg === 'request');
    const posted = requests.filter((l) => l.method === 'POST' && l.url === '/v1/transfers' && l.status === 202);
    expect(posted.length).toBeGreaterThan(0);
    expect(posted[0]).toMatchObject({ principal: 'did:ledger:id:alice', error: null, finished: true });
    expect(requests.find((l) => l.url === '/v1/trial-balance')).toMatchObject({ status: 403, error: 'ERR-NotAuthorised', principal: 'did:ledger:id:alice' });
    expect(requests.find((l) => l.url === '/metrics' && l.status === 401)).toMatchObject({ error: 'ERR-CredentialInvalid', principal: null });
    // One line per request: Fastify's own "incoming request" / "request completed" pair is off.
    expect(lines.filter((l) => l.msg === 'incoming request' || l.msg === 'request completed')).toEqual([]);
    const ids = requests.map((l) => l.reqId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(lines.find((l) => l.msg === 'decision' && l.operation === ok.body.operation_reference)).toMatchObject({ level: 20, command: 'transfer', state: 'Completed', error: null });
  });

  it('names the operation a command created, and marks a repeat under its client key (in the log and the reply)', async () => {
    const first = await transfer('1');
    await decided(asAlice, first.body.operation_reference);
    expect(first.headers['ledger-replay']).toBeUndefined();
    const again = await asAlice.post('/v1/transfers', { legs: [{ from: alice, to: bob, asset: 'USD', amount: '1' }] }, undefined, { 'client-key': `m-${keyCounter}` });
    expect(again.body.operation_reference).toBe(first.body.operation_reference);
    expect(again.headers['ledger-replay']).toBe('true');
    const ref = first.body.operation_reference;
    const lines = await logLines((l) => l.msg === 'request' && l.operation === ref && l.repeat === true);
    const named = lines.filter((l) => l.msg === 'request' && l.operation === ref);
    expect(named.map((l) => [l.method, l.url, l.repeat ?? false])).toEqual([
      ['POST', '/v1/transfers', false],
      ['POST', '/v1/transfers', true],
    ]);
    // A read of the operation is no command: its line names none.
    expect(lines.filter((l) => l.msg === 'request' && l.method === 'GET' && l.operation !== undefined)).toEqual([]);
  });

  it('logs an event stream as it ends (a reply not sent whole says so)', async () => {
    const stream = await request(`${shared.daemon.url}/v1/events`, { headers: { authorization: `Bearer ${shared.keys.customers.alice}` } });
    stream.body.destroy();
    const lines = await logLines((l) => l.msg === 'request' && l.url === '/v1/events' && l.principal === 'did:ledger:id:alice');
    expect(lines.find((l) => l.msg === 'request' && l.url === '/v1/events' && l.principal === 'did:ledger:id:alice')).toMatchObject({ method: 'GET', status: 200, error: null, finished: false });
  });

  it('holds no bearer token', () => {
    const text = shared.daemon.stderr.join('\n');
    for (const token of [shared.keys.operator, shared.keys.identities, ...Object.values(shared.keys.customers)]) expect(text).not.toContain(token);
    expect(text.length).toBeGreaterThan(0);
  });
});
