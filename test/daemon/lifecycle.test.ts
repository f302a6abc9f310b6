/**
 * `ledgerd init` and `ledgerd serve` as CONTRACT 1 states them: files and modes,
 * defaults from the environment, the readiness line with the real port, health,
 * OpenAPI, config layering, logs without secrets, malformed HTTP, backpressure
 * (ERR-DecisionUnavailable with Retry-After, then exactly one effect per client key),
 * graceful shutdown on SIGTERM (the systemd unit: install.test.ts).
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { type Socket, connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { client, decided, ledgerd, refusalOf, startDaemon, useTempDirs, writeBook } from './support.js';

const run = promisify(execFile);
const newDir = useTempDirs();

async function ledgerdCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [ledgerd, ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Sends raw bytes and returns the raw response. */
function rawHttp(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

describe('ledgerd init', () => {
  it('creates a sealed book with the API keys and the clerk key, mode 0600, and refuses a second init', async () => {
    const dir = join(newDir(), 'data');
    const first = await ledgerdCli(['init', '--data-dir', dir]);
    expect(first.code).toBe(0);
    for (const name of ['operator.key', 'identities.key', 'clerk.key']) {
      expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    }
    const operatorKey = readFileSync(join(dir, 'operator.key'), 'utf8').trim();
    expect(Buffer.from(operatorKey.replace(/^ledger_/, ''), 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(first.stdout).not.toContain(operatorKey);
    const again = await ledgerdCli(['init', '--data-dir', dir]);
    expect(again.code).toBe(4);
    expect(again.stderr).toContain('already holds a book');
  });

  it('loads a genesis file, and refuses a malformed one whole, naming the entry, leaving no book', async () => {
    const dir = newDir();
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ assets: [{ id: 'USD', kind: 'fiat', precision: 2 }], accounts: [{ account: 'nope', owner: 'did:ledger:id:operator', kind: 'customer' }] }));
    const refused = await ledgerdCli(['init', '--data-dir', join(dir, 'b'), '--genesis', bad]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('accounts[0]');
    expect(existsSync(join(dir, 'b', 'book'))).toBe(false);

    const good = join(dir, 'good.json');
    writeFileSync(
      good,
      JSON.stringify({
        assets: [{ id: 'GBP', kind: 'fiat', precision: 2 }],
        identities: ['did:ledger:id:zoe'],
        accounts: [{ account: 'did:ledger:acct:zoe', owner: 'did:ledger:id:zoe', kind: 'customer' }],
        aliases: [{ source: 'old', name: 'z-1', account: 'did:ledger:acct:zoe' }],
      }),
    );
    expect((await ledgerdCli(['init', '--data-dir', join(dir, 'g'), '--genesis', good])).code).toBe(0);
    const daemon = await startDaemon({ dataDir: join(dir, 'g') });
    try {
      const api = client(daemon.url, readFileSync(join(dir, 'g', 'operator.key'), 'utf8').trim());
      expect((await api.get('/v1/assets')).body.map((a: { id: string }) => a.id)).toEqual(['GBP']);
      expect((await api.get('/v1/aliases?source=old&name=z-1')).body).toEqual({ account: 'did:ledger:acct:zoe' });
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  });

  it('streams a large genesis file in any order of sections, and refuses a bad entry deep in it naming it, leaving no book', async () => {
    const dir = newDir();
    const accounts = 10_000;
    const row = (i: number) => JSON.stringify({ account: `did:ledger:acct:c${i}`, owner: `did:ledger:id:c${i}`, kind: 'customer' });
    // Openings and accounts come before the identities and assets they name: the order of sections does not matter.
    const document = (badAt: number) =>
      '{"openings":[' +
      Array.from({ length: accounts }, (_, i) => JSON.stringify({ account: `did:ledger:acct:c${i}`, asset: 'GBP', amount: '5', direction: 'credit' })).join(',') +
      ',{"account":"did:ledger:acct:t","asset":"GBP","amount":"' + String(5 * accounts) + '","direction":"debit"}],' +
      '"accounts":[' + Array.from({ length: accounts }, (_, i) => (i === badAt ? row(i).replace('customer', 'savings') : row(i))).join(',') +
      ',{"account":"did:ledger:acct:t","owner":"did:ledger:id:operator","kind":"treasury","treasury_limits":{"GBP":"' + String(5 * accounts) + '"}}],' +
      '"identities":[' + Array.from({ length: accounts }, (_, i) => `"did:ledger:id:c${i}"`).join(',') + '],' +
      '"assets":[{"id":"GBP","kind":"fiat","precision":2}]}';
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, document(accounts - 7));
    const refused = await ledgerdCli(['init', '--data-dir', join(dir, 'b'), '--genesis', bad]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`accounts[${accounts - 7}].kind`);
    expect(existsSync(join(dir, 'b', 'book'))).toBe(false);
    expect(existsSync(join(dir, 'b', 'book.init'))).toBe(false);
    expect(existsSync(join(dir, 'b', 'operator.key'))).toBe(false);

    const good = join(dir, 'good.json');
    writeFileSync(good, document(-1));
    expect((await ledgerdCli(['init', '--data-dir', join(dir, 'g'), '--genesis', good])).code).toBe(0);
    const daemon = await startDaemon({ dataDir: join(dir, 'g') });
    try {
      const api = client(daemon.url, readFileSync(join(dir, 'g', 'operator.key'), 'utf8').trim());
      const last = (await api.get(`/v1/accounts/did:ledger:acct:c${accounts - 1}/balances`)).body;
      expect(last.balances).toEqual([{ asset: 'GBP', available: '5', reserved: '0', encumbered: '0' }]);
      const treasury = (await api.get('/v1/accounts/did:ledger:acct:t/balances')).body;
      expect(treasury.balances[0].available).toBe(String(-5 * accounts));
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  });

  it('refuses a genesis file that is not JSON, or whose section is not an array, leaving no book', async () => {
    const dir = newDir();
    for (const [text, named] of [
      ['{"assets":[{"id":"GBP","kind":"fiat","precision":2}', 'genesis document: is not JSON'],
      ['{"accounts":{}}', 'genesis accounts: must be an array'],
      ['[]', 'genesis document: must be an object'],
      ['{"assets":[],"ledgers":[]}', 'genesis ledgers: is not a genesis section'],
    ] as const) {
      const file = join(dir, 'g.json');
      writeFileSync(file, text);
      const refused = await ledgerdCli(['init', '--data-dir', join(dir, 'b'), '--genesis', file]);
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain(named);
      expect(existsSync(join(dir, 'b', 'book'))).toBe(false);
    }
  });

  it('exits 2 on a usage error', async () => {
    expect((await ledgerdCli(['serve', '--no-such-flag'])).code).toBe(2);
  });
});

describe('ledgerd serve', () => {
  it('initialises an empty data dir from the environment, prints the real port, and serves health and the keys', async () => {
    const dir = join(newDir(), 'env-data');
    const daemon = await startDaemon({ dataDir: dir, env: { LEDGERD_DATA_DIR: dir } });
    try {
      expect(daemon.stdout[0]).toMatch(/^ledgerd listening on http:\/\/127\.0\.0\.1:[1-9][0-9]*$/);
      expect(daemon.port).toBeGreaterThan(0);
      const health = await client(daemon.url, '').raw('GET', '/v1/health', {});
      expect(health.status).toBe(200);
      expect(health.text).toBe('{"status":"ok"}');
      const operator = client(daemon.url, readFileSync(join(dir, 'operator.key'), 'utf8').trim());
      expect((await operator.get('/v1/aliases?source=ledger&name=treasury:USD')).body).toEqual({ account: 'did:ledger:acct:treasury-USD' });
      const identities = client(daemon.url, readFileSync(join(dir, 'identities.key'), 'utf8').trim());
      expect((await identities.get('/v1/assets')).status).toBe(200);
    } finally {
      // SIGINT stops it as gracefully as SIGTERM.
      expect(await daemon.stop('SIGINT')).toBe(0);
    }
  });

  it('takes its data dir and address from the environment when no flag is given', async () => {
    const dir = join(newDir(), 'from-env');
    const child = spawnSync(process.execPath, [ledgerd, 'serve'], { env: { ...process.env, LEDGERD_DATA_DIR: dir, LEDGERD_LISTEN: '127.0.0.1:bad' }, encoding: 'utf8' });
    expect(child.status).toBe(3);
    expect(child.stderr).toContain('listen must be HOST:PORT');
  });

  it('answers unknown routes, OpenAPI and malformed HTTP in the refusal shape, and logs request ids without secrets', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 10n });
    const daemon = await startDaemon({ dataDir: dir, env: { LEDGERD_LOG_LEVEL: 'info' } });
    try {
      const api = client(daemon.url, keys.operator);
      expect(refusalOf(await api.get('/v1/nowhere'))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
      expect(refusalOf(await api.raw('DELETE', '/v1/transfers', {}))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
      expect(refusalOf(await api.get('/v1/health?verbose=1', null))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });

      const doc = await api.get('/v1/openapi.json', null);
      expect(doc.status).toBe(200);
      expect(doc.body.openapi).toBe('3.1.0');
      // This routes; later issues add theirs to the same document.
      const paths = Object.keys(doc.body.paths);
      expect(paths).toEqual(
        expect.arrayContaining([
          '/v1/accounts',
          '/v1/accounts/{account}',
          '/v1/aliases',
          '/v1/assets',
          '/v1/events',
          '/v1/health',
          '/v1/movements',
          '/v1/openapi.json',
          '/v1/operations/{operation_reference}',
          '/v1/reservations',
          '/v1/reservations/{operation_reference}/capture',
          '/v1/reservations/{operation_reference}/release',
          '/v1/statements',
          '/v1/transfers',
          '/v1/trial-balance',
        ]),
      );
      for (const path of paths) expect(path.startsWith('/v1/')).toBe(true);
      const movements = doc.body.paths['/v1/movements'].get;
      expect(movements.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['of', 'limit', 'from', 'to', 'asset', 'direction', 'cursor']));
      // Exactly one of account or identity: one form-exploded parameter, one branch each.
      const of = movements.parameters.find((p: { name: string }) => p.name === 'of');
      expect(of.schema.oneOf.map((branch: { required: string[] }) => branch.required)).toEqual([['account'], ['identity']]);
      expect(doc.body.paths['/v1/transfers'].post.requestBody.content['application/json'].schema.required).toEqual(['legs']);

      const headerFlood = `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
      const overflow = await rawHttp(daemon.port, headerFlood);
      expect(overflow).toMatch(/^HTTP\/1\.1 400/);
      expect(JSON.parse(overflow.slice(overflow.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: 'ERR-MalformedCommand' });
      const garbage = await rawHttp(daemon.port, 'HELLO THERE\r\n\r\n');
      expect(garbage).toMatch(/^HTTP\/1\.1 400/);

      const r = await api.post('/v1/transfers', { legs: [{ amount: '1', asset: 'USD', from: 'did:ledger:acct:alice', to: 'did:ledger:acct:treasury-USD' }] });
      expect(r.headers['x-request-id']).toBeDefined();
      await decided(api, r.body.operation_reference);
      expect((await api.get('/v1/health')).status).toBe(200);
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
    const logs = daemon.stderr.join('\n');
    expect(logs).toContain('"reqId"');
    expect(logs).not.toContain(keys.operator);
  });

  it('applies the config file, with flags over it', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 10n });
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ bodyBytesMax: 4096, listen: '127.0.0.1:1' }));
    const daemon = await startDaemon({ dataDir: dir });
    try {
      const api = client(daemon.url, keys.operator);
      const big = { legs: [{ amount: '1', asset: 'USD', from: 'did:ledger:acct:alice', to: 'did:ledger:acct:treasury-USD' }], reference: 'x'.repeat(5000) };
      expect(refusalOf(await api.post('/v1/transfers', big))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ colour: 'blue' }));
    const refused = spawnSync(process.execPath, [ledgerd, 'serve', '--data-dir', dir], { encoding: 'utf8' });
    expect(refused.status).toBe(3);
    expect(refused.stderr).toContain('unknown setting colour');
  });

  it('answers ERR-DecisionUnavailable with an integer Retry-After past the backlog bound; retries get exactly one effect', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 1_000_000n, bob: 0n });
    // The smallest backlog (a principal's share of it, an eighth rounded up, is 1).
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ backlogMax: 2 }));
    const daemon = await startDaemon({ dataDir: dir });
    try {
      const api = client(daemon.url, keys.customers.alice!);
      const body = (i: number) => ({ legs: [{ amount: String(i), asset: 'USD', from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob' }] });
      const count = 40;
      let unavailable = 0;
      const submitOnce = async (i: number): Promise<string> => {
        for (;;) {
          const r = await api.post('/v1/transfers', body(i), undefined, { 'client-key': `bp-${i}` });
          if (r.status === 202 || r.status === 200) return r.body.operation_reference as string;
          expect(refusalOf(r)).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
          expect(r.headers['retry-after']).toMatch(/^[0-9]+$/);
          unavailable++;
          await new Promise((res) => setTimeout(res, 5));
        }
      };
      const refs = await Promise.all(Array.from({ length: count }, (_, i) => submitOnce(i + 1)));
      expect(unavailable).toBeGreaterThan(0);
      expect(new Set(refs).size).toBe(count);
      // These retries ignored Retry-After, so the edge holds the caller to a trickle until it passes (docs/daemon.md, "Floods").
      await new Promise((res) => setTimeout(res, 1_100));
      for (const ref of refs) expect((await decided(api, ref)).body.state).toBe('Completed');
      const moves = await api.get('/v1/movements?account=did:ledger:acct:alice&limit=1000&direction=debit');
      expect(moves.status, moves.text).toBe(200);
      expect(moves.body.movements).toHaveLength(count);
      expect(moves.body.movements.reduce((s: bigint, m: { amount: string }) => s + BigInt(m.amount), 0n)).toBe(BigInt((count * (count + 1)) / 2));
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  });

  it('on SIGTERM stops accepting, finishes what it acknowledged, and exits 0; nothing acknowledged is lost', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 1_000_000n, bob: 0n });
    const daemon = await startDaemon({ dataDir: dir });
    const api = client(daemon.url, keys.customers.alice!);
    const body = (i: number) => ({ legs: [{ amount: '1', asset: 'USD', from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob' }], reference: i });
    const acknowledged: string[] = [];
    const submissions = Array.from({ length: 200 }, async (_, i) => {
      try {
        const r = await api.post('/v1/transfers', body(i), undefined, { 'client-key': `term-${i}` });
        if (r.status === 202) acknowledged.push(r.body.operation_reference);
        else expect(refusalOf(r).error).toBe('ERR-DecisionUnavailable');
      } catch {
        // The connection was closed by the stopping daemon: not acknowledged.
      }
    });
    // Stop while submissions are arriving: some acknowledged, some in flight, some refused.
    await new Promise((res) => setTimeout(res, 60));
    expect(await daemon.stop('SIGTERM')).toBe(0);
    await Promise.all(submissions);

    const again = await startDaemon({ dataDir: dir });
    try {
      const after = client(again.url, keys.customers.alice!);
      for (const ref of acknowledged) expect((await decided(after, ref)).body.state).toBe('Completed');
      const moves = await after.get('/v1/movements?account=did:ledger:acct:alice&limit=1000&direction=debit');
      expect(moves.status, moves.text).toBe(200);
      // Commands acknowledged but not answered (the reply was lost) may also be decided: never fewer.
      expect(moves.body.movements.length).toBeGreaterThanOrEqual(acknowledged.length);
      expect(moves.body.movements.length).toBeLessThanOrEqual(200);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });

  it('on SIGTERM closes the connections with no request in flight at once (none sent yet, half of one, idle), and exits 0', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 1n });
    const daemon = await startDaemon({ dataDir: dir });
    const open = (bytes: string) =>
      new Promise<{ socket: Socket; closed: Promise<void> }>((resolve, reject) => {
        const socket = connect(daemon.port, '127.0.0.1', () => {
          socket.write(bytes);
          resolve({ socket, closed: new Promise((res) => socket.once('close', () => res())) });
        });
        socket.on('error', reject);
        socket.resume();
      });
    // A client's spare connection (undici opens them; a browser preconnects), a slow sender, a keep-alive one between requests.
    const silent = await open('');
    const half = await open('GET /v1/health HTTP/1.1\r\nhost: x\r\n');
    const idle = await open('GET /v1/health HTTP/1.1\r\nhost: x\r\n\r\n');
    // Answered on a later connection: the daemon has accepted the three before it.
    expect((await client(daemon.url, keys.operator).get('/v1/health')).status).toBe(200);
    // Before, shutdown waited on the first two until shutdownTimeoutMs, then exited 1.
    expect(await daemon.stop('SIGTERM'), daemon.lastLines()).toBe(0);
    await Promise.all([silent.closed, half.closed, idle.closed]);
  });
});
