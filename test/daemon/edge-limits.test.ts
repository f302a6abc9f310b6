/**
 * The edge's bounds, each driven to its limit (docs/daemon.md, "Floods"): connections per
 * address, requests a second per address and per principal, and a principal told
 * Retry-After held to a trickle until then. Every refusal is 503 ERR-DecisionUnavailable
 * with Retry-After, and the others go on being served.
 */
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startFlood } from '../support/flood.js';
import { type Reply, addConfig, client, refusalOf, repoRoot, startDaemon, useDaemon, useTempDirs, writeBook } from './support.js';

const shared = useDaemon(
  { alice: 1_000_000n, bob: 1_000n, payee: 0n },
  { requestsPerPrincipalPerSecond: 20 },
);
const newDir = useTempDirs();

/** A daemon of the test's own, with `settings`. */
async function ownDaemon(settings: Record<string, unknown>) {
  const dir = newDir();
  await writeBook(dir, {});
  addConfig(dir, settings);
  return startDaemon({ dataDir: dir });
}

/** A connection from `localAddress` to `url`, open once connected. */
function openTo(localAddress: string, url = shared.daemon.url): Promise<Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port), localAddress }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Sends one request on `socket` and reads the whole answer (status, headers, body) as text. Its
 * listeners go once it is answered: a socket sends many requests one after another, and each
 * exchange's would otherwise stay (Node warned past ten) and read the next answers too.
 */
function exchange(socket: Socket, request: string): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('utf8');
    const done = () => {
      socket.off('data', read);
      socket.off('end', done);
      resolve(text);
    };
    const read = (chunk: string) => {
      text += chunk;
      const m = /content-length: (\d+)\r\n/i.exec(text);
      const at = text.indexOf('\r\n\r\n');
      if (m && at >= 0 && Buffer.byteLength(text.slice(at + 4)) >= Number(m[1])) done();
    };
    socket.on('data', read);
    socket.once('end', done);
    socket.write(request);
  });
}

const health = 'GET /v1/health HTTP/1.1\r\nHost: ledgerd\r\n\r\n';

function expectOverloaded(r: Reply, why: RegExp): void {
  expect(refusalOf(r)).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
  expect(r.headers['retry-after']).toBe('1');
  expect(r.body.description).toMatch(why);
}

describe('the edge under floods', () => {
  it('refuses a connection past connectionsPerSourceMax from one address (503, Retry-After, closed) and serves it again once one closes', async () => {
    const daemon = await ownDaemon({ connectionsPerSourceMax: 4 });
    const open = (localAddress: string) => openTo(localAddress, daemon.url);
    const held = await Promise.all(Array.from({ length: 4 }, () => open('127.0.0.5')));
    try {
      const extra = await open('127.0.0.5');
      const answer = await exchange(extra, health);
      expect(answer).toMatch(/^HTTP\/1\.1 503 /);
      expect(answer).toMatch(/\r\nretry-after: 1\r\n/i);
      expect(answer).toMatch(/\r\nconnection: close\r\n/i);
      expect(answer).toMatch(/"error":"ERR-DecisionUnavailable".*more than 4 connections from this address/);
      // Another address is not counted with it.
      expect(await exchange(await open('127.0.0.6'), health)).toMatch(/^HTTP\/1\.1 200 /);
      // The held connections are served themselves.
      expect(await exchange(held[0]!, health)).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      for (const s of held) s.destroy();
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(await exchange(await open('127.0.0.5'), health)).toMatch(/^HTTP\/1\.1 200 /);
    expect(await daemon.stop()).toBe(0);
  });

  it('refuses requests past requestsPerSourcePerSecond from one address before authentication, and serves other addresses', async () => {
    const daemon = await ownDaemon({ requestsPerSourcePerSecond: 20 });
    const sockets = await Promise.all(Array.from({ length: 4 }, () => openTo('127.0.0.7', daemon.url)));
    try {
      // 80 requests at once from one address, 20 per connection, one after another on each.
      const answers = (
        await Promise.all(
          sockets.map(async (s) => {
            const out: string[] = [];
            for (let i = 0; i < 20; i++) out.push(await exchange(s, health));
            return out;
          }),
        )
      ).flat();
      const refused = answers.filter((a) => a.startsWith('HTTP/1.1 503 '));
      expect(refused.length).toBeGreaterThanOrEqual(10);
      for (const a of refused) expect(a).toMatch(/retry-after: 1\r\n[\s\S]*more than 20 requests a second from this address/i);
      expect(answers.filter((a) => a.startsWith('HTTP/1.1 200 ')).length).toBeGreaterThanOrEqual(20);
      // Another address has its own.
      expect(await exchange(await openTo('127.0.0.8', daemon.url), health)).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      for (const s of sockets) s.destroy();
    }
    expect(await daemon.stop()).toBe(0);
  });

  it('refuses requests past requestsPerPrincipalPerSecond of one principal, and serves another meanwhile', async () => {
    await new Promise((r) => setTimeout(r, 1_100));
    const [alice, bob] = [shared.as('alice'), shared.as('bob')];
    const replies = await Promise.all(Array.from({ length: 30 }, () => alice.get('/v1/accounts/did:ledger:acct:alice')));
    const refused = replies.filter((r) => r.status !== 200);
    expect(refused.length).toBeGreaterThanOrEqual(5);
    for (const r of refused) expectOverloaded(r, /more than 20 requests a second from this principal|too soon/);
    expect((await bob.get('/v1/accounts/did:ledger:acct:bob')).status).toBe(200);
  });

  it('holds a principal resending through its refusals to a trickle until its Retry-After has passed, refusing the rest at the edge, and serves it after', async () => {
    await new Promise((r) => setTimeout(r, 1_100));
    const alice = shared.as('alice');
    const read = () => alice.get('/v1/accounts/did:ledger:acct:alice');
    // Waves of 400 reads at once, past her rate (20 a second), until over 256 refusals land within a second and the
    // edge holds her to its trickle: then what is past the trickle is refused as too soon (a few waves on a slow machine).
    let tooSoon: Reply[] = [];
    for (let wave = 0; wave < 5 && tooSoon.length === 0; wave++) {
      const replies = await Promise.all(Array.from({ length: 400 }, read));
      for (const r of replies) if (r.status !== 200) expectOverloaded(r, /more than 20 requests a second from this principal|too soon/);
      tooSoon = replies.filter((r) => r.status === 503 && /too soon/.test(r.body.description));
    }
    expect(tooSoon.length).toBeGreaterThan(0);
    for (const r of tooSoon) expectOverloaded(r, /told to retry later/);
    // Once her last Retry-After has passed (and her rate refilled), she is served.
    await new Promise((r) => setTimeout(r, 1_200));
    expect((await read()).status).toBe(200);
  });

  it('answers a too-soon refusal no sooner than its Retry-After: a principal resending at once through its refusals waits as long as it was told to', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { flood: 0n });
    addConfig(dir, { requestsPerPrincipalPerSecond: 20 });
    const daemon = await startDaemon({ dataDir: dir });
    const flooder = client(daemon.url, keys.customers.flood!);
    const read = () => flooder.get('/v1/accounts/did:ledger:acct:flood');
    // 50 connections sending again at once whatever they are answered, from a process of their own, hold the principal
    // past its refusals; the test's own requests as that principal time what a too-soon refusal costs its sender.
    const flood = startFlood({ url: daemon.url, token: keys.customers.flood!, method: 'GET', path: '/v1/accounts/did:ledger:acct:flood', connections: 50, durationMaxMs: 60_000 }, repoRoot);
    const tooSoonMs: number[] = [];
    try {
      await flood.ready;
      const untilMs = Date.now() + 20_000;
      while (tooSoonMs.length < 5 && Date.now() < untilMs) {
        const startedMs = Date.now();
        const r = await read();
        if (r.status === 503 && /too soon/.test(r.body.description)) {
          expectOverloaded(r, /told to retry later/);
          tooSoonMs.push(Date.now() - startedMs);
        }
      }
    } finally {
      const report = await flood.stop();
      expect({ failures: report.failures, badRefusals: report.badRefusals }).toEqual({ failures: 0, badRefusals: 0 });
    }
    console.log(`too-soon refusals answered after ${tooSoonMs.join(', ')} ms (Retry-After: 1 s)`);
    expect(tooSoonMs.length).toBe(5);
    // Held for its Retry-After (1 s), less a timer's slack: the sender waits, not the daemon's other callers.
    for (const ms of tooSoonMs) expect(ms).toBeGreaterThanOrEqual(990);
    expect(await daemon.stop()).toBe(0);
  });
});
