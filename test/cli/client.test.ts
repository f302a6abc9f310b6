/**
 * How the client maps what comes back to the CONTRACT's exit codes, for answers a healthy ledgerd
 * rarely gives on demand (503 with Retry-After, a body that is not JSON, an
 * operation that is never decided). The server here is a stand-in that answers only those.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerClient } from '../../cli/client.js';
import { RefusedError } from '../../cli/errors.js';
import { runInProcess } from './support/io.js';

let server: Server;
/** While set, the event stream drops every connection, as a daemon that is down would. */
let eventsDown = false;
let url: string;
/** The client-key header of each reservation attempt the stand-in dropped. */
const droppedKeys: (string | undefined)[] = [];
const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>([
  ['POST /v1/transfers', (_req, res) => res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '2' }).end(JSON.stringify({ error: 'ERR-DecisionUnavailable', description: 'the backlog is full' }))],
  ['GET /v1/assets', (_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>bad gateway</html>')],
  ['GET /v1/operations/op_1', (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ operation_reference: 'op_1', command: 'transfer', state: 'Received', terminal: false, submitted_at: 1, decided_at: null, client_key: 'k' }))],
  ['POST /v1/reservations', (req, _res) => (droppedKeys.push(req.headers['client-key'] as string | undefined), req.socket.destroy())],
  // Never answers: only --timeout-ms ends the request (`trial-balance` asks for debits and credits).
  ['GET /v1/trial-balance?gross=true', () => {}],
  ['GET /metrics', (req, res) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(req.headers.authorization === 'Bearer t' ? 'ledgerd_backlog_commands 3\n' : '')],
  ['GET /metrics-huge', (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(4096))],
  ['GET /v1/events', (req, res) => (eventsDown ? req.socket.destroy() : res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': ledgerd events after 0\n\n'))],
]);

beforeAll(async () => {
  server = createServer((req, res) => (routes.get(`${req.method} ${req.url}`) ?? ((_q, r) => r.writeHead(404).end()))(req, res));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

const run = (args: string[]) => runInProcess(args, { env: { LEDGER_URL: url, LEDGER_TOKEN: 't' } });

describe('client', () => {
  it('reads a text reply (ledgerd /metrics) with the bearer, bounded in bytes, and refuses a missing route', async () => {
    const client = new LedgerClient(url, 't', 2000);
    try {
      expect(await client.getText('/metrics', 1024)).toBe('ledgerd_backlog_commands 3\n');
      await expect(client.getText('/metrics-huge', 1024)).rejects.toThrow(/more than 1024 bytes/);
      const missing = await client.getText('/nothing', 1024).catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(RefusedError);
      expect((missing as RefusedError).code).toBe('HTTP-404');
    } finally {
      await client.close();
    }
  });

  it('prints ERR-DecisionUnavailable with when to retry under the same client key (exit 1)', async () => {
    const r = await run(['transfers', 'create', '--from', 'did:ledger:acct:a', '--to', 'did:ledger:acct:b', '--amount', '1', '--asset', 'USD', '--client-key', 'k1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('ERR-DecisionUnavailable: the backlog is full\nretry after 2 s with the same --client-key\n');
    expect(r.stdout).toBe('');
  });

  it('names a refusal without an error body by its HTTP status (exit 1)', async () => {
    const r = await run(['assets', 'list']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('HTTP-502: <html>bad gateway</html>\n');
  });

  it('gives up on an unknown host (exit 3)', async () => {
    const r = await run(['assets', 'list', '--url', 'http://no-such-host.invalid:1']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^ledgerctl: cannot reach http:\/\/no-such-host\.invalid:1: /);
  });

  it('refuses a URL that is not http(s) as usage (exit 2)', async () => {
    const r = await run(['assets', 'list', '--url', 'ftp://example.com']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not an http(s) URL');
  });

  it('times out waiting for a decision that never comes (exit 1)', async () => {
    const r = await run(['operations', 'wait', 'op_1', '--timeout-ms', '300']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('ledgerctl: timed out after 300 ms waiting for op_1 (still Received); go on waiting with: ledgerctl operations wait op_1\n');
    const bad = await run(['operations', 'wait', 'op_1', '--timeout-ms', 'soon']);
    expect(bad.code).toBe(2);
  });

  it('bounds every request by --timeout-ms (exit 3)', async () => {
    const started = Date.now();
    const r = await run(['trial-balance', '--timeout-ms', '300']);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(`ledgerctl: no answer from ${url} within 300 ms (--timeout-ms)\n`);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('retries a submission whose connection was lost under the same client key, then says a retry with it is safe', async () => {
    droppedKeys.length = 0;
    const r = await run(['reservations', 'create', '--payer', 'did:ledger:acct:a', '--amount', '1', '--asset', 'USD']);
    expect(r.code).toBe(3);
    const key = /^client key ([0-9a-f]{32})$/m.exec(r.stderr)![1]!;
    expect(droppedKeys).toEqual([key, key, key]);
    expect(r.stderr).toContain(`running it again with --client-key ${key} is safe`);
  });

  it('says it could not reach the service when the event stream stayed down until the timeout (exit 3)', async () => {
    eventsDown = true;
    try {
      const r = await run(['operations', 'wait', 'op_1', '--timeout-ms', '700']);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/^ledgerctl: cannot reach http:\/\/127\.0\.0\.1:\d+: .*\(gave up waiting for op_1 after 700 ms\)\n$/);
    } finally {
      eventsDown = false;
    }
  });
});
