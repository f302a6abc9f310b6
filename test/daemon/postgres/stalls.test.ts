/**
 * A database that freezes or a link that breaks under a serving ledgerd (issue 26, item 1),
 * on a real cluster: PostgreSQL paused (SIGSTOP of the postmaster and its backends, then
 * SIGCONT), ledgerd's connections terminated by an administrator, and a TCP proxy between
 * ledgerd and the database that resets or silently drops the link. Commands and queries get
 * 503 with Retry-After within the bounds, never a hang; a primary cut off for longer than its
 * lease lets a standby take the book over; and once the database or link is back the book
 * heals with nothing acknowledged lost.
 */
import { cpSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { withPgClient } from '../../support/pg-books.js';
import { type TcpProxy, startTcpProxy } from '../../support/tcp-proxy.js';
import { type Client, type Daemon, type Reply, client, daemonsOnPostgres, postgresStore, refusalOf, startDaemon, useTempDirs, writeBook } from '../support.js';

// Durable: what the database acknowledged must survive what is done to it here.
const matrix = daemonsOnPostgres({ durable: true });
const newDir = useTempDirs();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const transfer = { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '1' }] };
/** A request's bound here: the statement bound (500 ms) plus the client's 2 s margin on an answer, and slack for a loaded machine. */
const answerBoundMs = 5_000;

const proxies: TcpProxy[] = [];
afterEach(async () => {
  matrix.cluster().resume();
  for (const p of proxies.splice(0)) await p.close();
});

/** Starts a daemon that must wait as the standby: resolves once it waits (and `ready` once it serves). */
/** A book on the cluster under a lease of `leaseMs`, in a primary's data dir and a copy of it for a standby. */
async function primaryAndStandbyDirs(leaseMs: number) {
  const primaryDir = newDir();
  const store = await postgresStore(leaseMs, 500);
  const keys = await writeBook(primaryDir, { alice: 1_000n, bob: 0n }, store);
  const standbyDir = newDir();
  cpSync(primaryDir, standbyDir, { recursive: true });
  return { primaryDir, standbyDir, store, keys };
}

async function waitingStandby(dataDir: string): Promise<{ ready: Promise<Daemon>; said: string[] }> {
  let waits: () => void = () => {};
  const waiting = new Promise<void>((resolve) => (waits = resolve));
  const said: string[] = [];
  const ready = startDaemon({
    dataDir,
    onStderr: (line) => {
      said.push(line);
      if (line.includes('standby: the book is served by')) waits();
    },
  });
  ready.catch(() => {});
  await Promise.race([waiting, ready.then(() => Promise.reject(new Error('the standby served at once')))]);
  return { ready, said };
}

/** The standby once it serves, within `ms` (or what both daemons said, to see why not). */
async function takenOver(standby: { ready: Promise<Daemon>; said: string[] }, primary: Daemon, ms: number): Promise<Daemon> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the standby did not take over within ${ms} ms:\n${standby.said.join('\n')}\n--- primary:\n${primary.lastLines()}`)), ms);
  });
  try {
    return await Promise.race([standby.ready, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A request, and how long its answer took. */
async function timed(request: Promise<Reply>): Promise<{ reply: Reply; ms: number }> {
  const t0 = performance.now();
  const reply = await request;
  return { reply, ms: performance.now() - t0 };
}

/** Asserts the answer was a refusal to come back later, in time. */
function unavailableInTime({ reply, ms }: { reply: Reply; ms: number }): void {
  expect(refusalOf(reply)).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
  expect(reply.headers['retry-after']).toBeDefined();
  expect(ms).toBeLessThan(answerBoundMs);
}

/** Retries the command under its client key until acknowledged (as a client told Retry-After does), then waits for its decision. */
async function acknowledged(api: Client, key: string): Promise<string> {
  let r = await api.post('/v1/transfers', transfer, undefined, { 'client-key': key }).catch(() => null);
  for (let i = 0; i < 150 && (r === null || (r.status !== 200 && r.status !== 202)); i++) {
    await sleep(200);
    r = await api.post('/v1/transfers', transfer, undefined, { 'client-key': key }).catch(() => null);
  }
  expect(r === null ? 'no answer' : [r.status, r.text].join(' ')).toMatch(/^20[02] /);
  const ref = r!.body.operation_reference as string;
  let view = await read(api, `/v1/operations/${ref}`);
  for (let i = 0; i < 150 && view.body.state === 'Received'; i++) {
    await sleep(100);
    view = await read(api, `/v1/operations/${ref}`);
  }
  expect(view.body.state).toBe('Completed');
  return ref;
}

/** A read answered 200, retried while the daemon is still healing (a connection the outage broke may fail once more). */
async function read(api: Client, path: string): Promise<Reply> {
  let r = await api.get(path).catch(() => null);
  for (let i = 0; i < 100 && (r === null || r.status === 503); i++) {
    await sleep(200);
    r = await api.get(path).catch(() => null);
  }
  expect(r === null ? 'no answer' : [r.status, r.text].join(' ')).toMatch(/^200 /);
  return r!;
}

/** Every acknowledged operation is Completed and bob holds one unit per such transfer. */
async function nothingLost(op: Client, refs: string[]): Promise<void> {
  for (const ref of refs) expect((await read(op, `/v1/operations/${ref}`)).body.state).toBe('Completed');
  const balances = await read(op, '/v1/accounts/did:ledger:acct:bob/balances');
  expect(balances.body.balances.find((b: { asset: string }) => b.asset === 'USD').available).toBe(String(refs.length));
  expect((await read(op, '/v1/trial-balance')).body.unbalanced).toEqual([]);
}

describe('ledgerd on PostgreSQL when the database freezes', () => {
  it('answers 503 with Retry-After in time while PostgreSQL is paused, and heals after SIGCONT with nothing lost', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 1_000n, bob: 0n }, await postgresStore(10_000, 500));
    const daemon = await startDaemon({ dataDir: dir });
    const asAlice = client(daemon.url, keys.customers.alice!);
    const op = client(daemon.url, keys.operator);
    const refs = [await acknowledged(asAlice, 'before')];

    matrix.cluster().pause();
    try {
      unavailableInTime(await timed(asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'during' })));
      unavailableInTime(await timed(op.get('/v1/trial-balance')));
      unavailableInTime(await timed(asAlice.get('/v1/accounts/did:ledger:acct:alice/balances')));
      // Shorter than the lease: the daemon waits it out rather than give the book up.
      await sleep(2_000);
      unavailableInTime(await timed(asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'during' })));
      expect(daemon.process.exitCode).toBeNull();
    } finally {
      matrix.cluster().resume();
    }
    refs.push(await acknowledged(asAlice, 'during'));
    refs.push(await acknowledged(asAlice, 'after'));
    await nothingLost(op, refs);
    expect((await read(op, '/v1/ops/store')).body).toMatchObject({ deciding: true, writes_failing_ms: 0 });
    expect(await daemon.stop()).toBe(0);
  });

  it('keeps the standby waiting through a pause longer than the lease; after SIGCONT one daemon serves, and the standby takes over with everything acknowledged', async () => {
    const leaseMs = 2_000;
    const { primaryDir, standbyDir, keys } = await primaryAndStandbyDirs(leaseMs);
    const primary = await startDaemon({ dataDir: primaryDir });
    const asAlice = client(primary.url, keys.customers.alice!);
    const refs = [await acknowledged(asAlice, 'before-1'), await acknowledged(asAlice, 'before-2')];
    const waiting = await waitingStandby(standbyDir);
    let standbyFailure: Error | null = null;
    waiting.ready.catch((error: Error) => (standbyFailure = error));

    matrix.cluster().pause();
    try {
      unavailableInTime(await timed(asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'during' })));
      await sleep(3 * leaseMs);
      unavailableInTime(await timed(asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'during' })));
    } finally {
      matrix.cluster().resume();
    }
    // The lease lapsed by the database's clock, but no one could take it while it was frozen: after SIGCONT
    // either the standby takes it (and the primary, fenced off, stops) or the primary writes first and keeps it.
    const tookOver = await Promise.race([waiting.ready.then(() => true), sleep(2 * leaseMs).then(() => false)]);
    expect(standbyFailure, waiting.said.join('\n')).toBeNull();
    if (!tookOver) {
      refs.push(await acknowledged(asAlice, 'during'));
      // The standby lived through the frozen database: it takes over as soon as the holder is gone.
      await primary.stop('SIGKILL');
    }
    const standby = await takenOver(waiting, primary, 30_000);
    try {
      const viaStandby = client(standby.url, keys.customers.alice!);
      refs.push(await acknowledged(viaStandby, 'after-takeover'));
      await nothingLost(client(standby.url, keys.operator), refs);
      // An old holder still running is fenced off at its next write and stops.
      for (let i = 0; i < 50 && primary.process.exitCode === null && primary.process.signalCode === null; i++) {
        await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': `late-${i}` }).catch(() => null);
        await sleep(200);
      }
      expect(primary.process.exitCode ?? primary.process.signalCode).not.toBeNull();
    } finally {
      await primary.stop('SIGKILL');
      await standby.stop();
    }
  }, 120_000);
});

describe('ledgerd on PostgreSQL when its connections are dropped', () => {
  it('heals by itself when an administrator terminates its connections, and when the link is reset under it', async () => {
    const dir = newDir();
    const store = await postgresStore(10_000, 500);
    const keys = await writeBook(dir, { alice: 1_000n, bob: 0n }, store);
    const proxy = await startTcpProxy('127.0.0.1', matrix.cluster().port);
    proxies.push(proxy);
    const daemon = await startDaemon({ dataDir: dir, env: { LEDGERD_STORE_URL: proxy.via(store.url) } });
    const asAlice = client(daemon.url, keys.customers.alice!);
    const op = client(daemon.url, keys.operator);
    const refs = [await acknowledged(asAlice, 'before')];

    const terminated = await withPgClient(store.url, async (c) => (await c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'ledgerd'")).rowCount);
    expect(terminated).toBeGreaterThan(0);
    refs.push(await acknowledged(asAlice, 'after-terminate'));

    proxy.cut();
    refs.push(await acknowledged(asAlice, 'after-cut'));
    await nothingLost(op, refs);
    expect(daemon.process.exitCode).toBeNull();
    expect(await daemon.stop()).toBe(0);
  });

  it('answers 503 in time while its link is silently dropped; cut off past its lease, the standby takes over and nothing acknowledged is lost', async () => {
    const leaseMs = 2_000;
    const { primaryDir, standbyDir, store, keys } = await primaryAndStandbyDirs(leaseMs);
    const proxy = await startTcpProxy('127.0.0.1', matrix.cluster().port);
    proxies.push(proxy);
    // Only the primary's link goes through the proxy: the standby still reaches the database.
    const primary = await startDaemon({ dataDir: primaryDir, env: { LEDGERD_STORE_URL: proxy.via(store.url) } });
    const asAlice = client(primary.url, keys.customers.alice!);
    const refs = [await acknowledged(asAlice, 'before')];
    const waiting = await waitingStandby(standbyDir);

    proxy.blackhole();
    let standby: Daemon | null = null;
    try {
      unavailableInTime(await timed(asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'during' })));
      unavailableInTime(await timed(client(primary.url, keys.operator).get('/v1/trial-balance')));
      // The primary renews nothing through the dead link: the standby takes over meanwhile.
      standby = await takenOver(waiting, primary, 30_000);
      const viaStandby = client(standby.url, keys.customers.alice!);
      refs.push(await acknowledged(viaStandby, 'during'));
      await nothingLost(client(standby.url, keys.operator), refs);
    } finally {
      proxy.heal();
    }
    try {
      // Its link back, the old primary finds the lease gone and stops.
      for (let i = 0; i < 50 && primary.process.exitCode === null; i++) {
        await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': `late-${i}` }).catch(() => null);
        await sleep(200);
      }
      expect(primary.process.exitCode).not.toBeNull();
      await nothingLost(client(standby.url, keys.operator), refs);
    } finally {
      await primary.stop('SIGKILL');
      await standby.stop();
    }
  }, 120_000);
});
