/**
 * One decider at a time: two ledgerd on one PostgreSQL book. The second waits as the
 * standby while the first holds the lease; when the first is paused (SIGSTOP) past its
 * lease, the second takes over and decides; the first, resumed, commits nothing of what
 * was sent to it meanwhile, and stops.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { client, daemonsOnPostgres, ledgerdRun, postgresStore, decided, ledgerd, startDaemon, tempDir, writeBook, removeDir, type Reply } from '../support.js';

daemonsOnPostgres();
const leaseMs = 1_000;
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs) await removeDir(dir);
});

/** `ledgerd serve` that may wait as the standby: its lines as they come, and its URL once it serves. */
function serveInBackground(dataDir: string) {
  const child = spawn(process.execPath, [ledgerd, 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], { env: { ...process.env, LEDGERD_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => stderr.push(line));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let url: string | null = null;
  const ready = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^ledgerd listening on (http:\/\/\S+)$/.exec(line);
      if (m) resolve((url = m[1]!));
    });
    void exited.then((code) => reject(new Error(`exited with ${code}: ${stderr.join('\n')}`)));
  });
  ready.catch(() => {});
  return { child, stderr, exited, ready, url: () => url };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('two ledgerd on one PostgreSQL book', () => {
  it('lets only the lease holder decide; a paused holder loses the book to the standby and, resumed, commits nothing', async () => {
    const dirA = tempDir();
    dirs.push(dirA);
    const keys = await writeBook(dirA, { alice: 1_000_000n, bob: 0n }, await postgresStore(leaseMs));
    // The standby runs on a copy of the data dir that made the book (its keys are the book's).
    const dirB = tempDir();
    dirs.push(dirB);
    cpSync(dirA, dirB, { recursive: true });

    const a = await startDaemon({ dataDir: dirA });
    children.push(a.process);
    const b = serveInBackground(dirB);
    const asAliceOnA = client(a.url, keys.customers.alice!);
    const transfer = (amount: string) => ({ legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount }] });

    // While A holds the lease (renewing it) B only waits, however long: three leases here.
    const first = await asAliceOnA.post('/v1/transfers', transfer('1'), undefined, { 'client-key': 'on-a-1' });
    expect(first.status).toBe(202);
    expect((await decided(asAliceOnA, first.body.operation_reference)).body.state).toBe('Completed');
    await sleep(3 * leaseMs);
    expect(b.url()).toBeNull();
    expect(b.stderr.join('\n')).toMatch(/standby: the book is served by/);

    // A pauses past its lease; what is sent to it meanwhile waits in its sockets.
    a.process.kill('SIGSTOP');
    const sentWhilePaused: Promise<Reply | 'failed'>[] = Array.from({ length: 5 }, (_, i) =>
      asAliceOnA.post('/v1/transfers', transfer('1000'), undefined, { 'client-key': `while-paused-${i}` }).catch(() => 'failed' as const),
    );
    const urlB = await b.ready;
    const asAliceOnB = client(urlB, keys.customers.alice!);
    const onB = await asAliceOnB.post('/v1/transfers', transfer('10'), undefined, { 'client-key': 'on-b-1' });
    expect(onB.status).toBe(202);
    expect((await decided(asAliceOnB, onB.body.operation_reference)).body.state).toBe('Completed');

    // A resumes: it finds the lease gone, commits nothing, and stops (its supervisor would restart it as the standby).
    a.process.kill('SIGCONT');
    const replies = await Promise.all(sentWhilePaused);
    expect(replies.filter((r) => r !== 'failed' && r.status === 202)).toEqual([]);
    for (const r of replies) if (r !== 'failed') expect(r.body.error).toBe('ERR-DecisionUnavailable');
    expect(await a.stop()).toBe(1);
    // This file's cluster runs without fsync (speed): ledgerd says at start that acknowledged commands are at risk there.
    expect(a.stderr.join('\n')).toMatch(/"settings":"fsync = off, synchronous_commit = off".*may lose what it acknowledges on a crash: serving degraded/);
    expect(a.stderr.join('\n')).toMatch(/another ledgerd holds the lease now/);

    // The book holds B's decisions and A's from before its pause, nothing else: alice paid 1 + 10.
    await sleep(leaseMs);
    const balances = await asAliceOnB.get('/v1/accounts/did:ledger:acct:alice/balances');
    expect(balances.status).toBe(200);
    const usd = balances.body.balances.find((x: { asset: string }) => x.asset === 'USD');
    expect(usd.available).toBe(String(1_000_000 - 11));
    for (let i = 0; i < 5; i++) {
      // A key sent to A while it was paused is new to the book: its first submission here is acknowledged, not a repeat.
      const again = await asAliceOnB.post('/v1/transfers', transfer('1000'), undefined, { 'client-key': `while-paused-${i}` });
      expect(again.status).toBe(202);
    }
    const tb = await client(urlB, keys.operator).get('/v1/trial-balance');
    expect(tb.body.rows.every((row: { openings: string }) => row.openings === '0')).toBe(true);

    // A standby told to stop while it waits stops at once, cleanly, having opened nothing.
    const dirC = tempDir();
    dirs.push(dirC);
    cpSync(dirA, dirC, { recursive: true });
    const c = serveInBackground(dirC);
    for (let i = 0; i < 200 && !c.stderr.some((line) => line.includes('standby')); i++) await sleep(20);
    c.child.kill('SIGTERM');
    expect(await c.exited).toBe(0);
    expect(c.url()).toBeNull();
    b.child.kill('SIGTERM');
    expect(await b.exited).toBe(0);
  });

  it('refuses to serve a book from a data dir that did not make it (another daemon.key, or none)', async () => {
    const dirA = tempDir();
    dirs.push(dirA);
    const store = await postgresStore(leaseMs);
    await writeBook(dirA, { alice: 1n }, store);
    const foreign = tempDir();
    dirs.push(foreign);
    await writeBook(foreign, { alice: 1n }, await postgresStore(leaseMs));
    // The foreign dir's own config and keys, pointed at A's book.
    const bare = tempDir();
    dirs.push(bare);
    for (const [dir, expected] of [[foreign, /is not this book's \(its daemon.key differs/], [bare, /has no daemon.key, and the book in postgres:\/\/127\.0\.0\.1:\d+\/book_db_\d+ exists/]] as const) {
      const r = await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0'], { LEDGERD_STORE_URL: store.url, LEDGERD_CONFIG: join(foreign, 'ledgerd.json') });
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toMatch(expected);
      expect(r.stderr).not.toContain(new URL(store.url).password);
    }
  });
});
