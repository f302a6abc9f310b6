/**
 * The book's database goes away under a serving ledgerd (PostgreSQL crashes, then comes
 * back): meanwhile commands and queries are answered ERR-DecisionUnavailable (503), never
 * an unhandled error; once it is back, ledgerd decides again without a restart, and
 * nothing acknowledged before is lost.
 */
import { describe, expect, it } from 'vitest';
import { client, daemonsOnPostgres, decided, postgresStore, refusalOf, startDaemon, useTempDirs, writeBook } from '../support.js';

// Durable: the database crashes here, and what it acknowledged must survive that.
const matrix = daemonsOnPostgres({ durable: true });
const newDir = useTempDirs();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('ledgerd on PostgreSQL when the database goes away and comes back', () => {
  it('answers 503 meanwhile and decides again afterwards, losing nothing', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 1_000n, bob: 0n }, await postgresStore());
    const daemon = await startDaemon({ dataDir: dir });
    const asAlice = client(daemon.url, keys.customers.alice!);
    const op = client(daemon.url, keys.operator);
    const transfer = { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '10' }] };
    const before = await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'before' });
    expect((await decided(asAlice, before.body.operation_reference)).body.state).toBe('Completed');

    await matrix.cluster().crash();
    const during = await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'during' });
    expect(refusalOf(during)).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
    expect(during.headers['retry-after']).toBeDefined();
    expect(refusalOf(await op.get('/v1/trial-balance'))).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
    await sleep(1_500);
    expect(daemon.process.exitCode).toBeNull();

    await matrix.cluster().restart();
    // The client retries under its key, as told: acknowledged once the database is back.
    let after = during;
    for (let i = 0; i < 100 && after.status !== 202; i++) {
      await sleep(200);
      after = await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'during' });
    }
    expect(after.status, after.text).toBe(202);
    expect((await decided(asAlice, after.body.operation_reference)).body.state).toBe('Completed');
    expect((await asAlice.get(`/v1/operations/${before.body.operation_reference}`)).body.state).toBe('Completed');
    const balances = await op.get('/v1/accounts/did:ledger:acct:bob/balances');
    expect(balances.body.balances.find((b: { asset: string }) => b.asset === 'USD').available).toBe('20');
    expect((await op.get('/v1/trial-balance')).body.unbalanced).toEqual([]);
    expect(await daemon.stop()).toBe(0);
    // A durable database: no warning that acknowledged commands are at risk.
    expect(daemon.stderr.join('\n')).not.toContain('may lose what it acknowledges');
  });
});
