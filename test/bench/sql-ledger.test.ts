import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBook, installFundedLedger, transfer, transferBatch, treasuryAccount } from '../../bench/versus-postgres/sql-ledger.js';
import { type PostgresCluster, startPostgresCluster } from '../support/postgres-cluster.js';

// The PostgreSQL ledger bench/versus-postgres measures ledgerd against: it must be a
// correct ledger for the comparison to mean anything.
describe('the SQL ledger of bench/versus-postgres', () => {
  let cluster: PostgresCluster;
  let db: pg.Pool;
  const balance = async (account: string) => BigInt(((await db.query('SELECT balance FROM accounts WHERE id = $1', [account])).rows[0] as { balance: string }).balance);
  const sqlState = (promise: Promise<unknown>) => promise.then(() => 'none', (error: { code?: string }) => error.code);
  // pg-pool's end() resolves before its sockets close, so the server's shutdown can still
  // reach a closing connection as an 'error' on the pool: harmless then, a fault before.
  const poolErrors: Error[] = [];
  let ending = false;

  beforeAll(async () => {
    cluster = await startPostgresCluster();
    db = new pg.Pool({ host: cluster.host, port: cluster.port, user: cluster.user, password: cluster.password, database: cluster.database, max: 8 });
    db.on('error', (error) => {
      if (!ending) poolErrors.push(error);
    });
    const client = await db.connect();
    try {
      await installFundedLedger(client, ['a', 'b', 'c'], 100n);
    } finally {
      client.release();
    }
  });
  afterAll(async () => {
    ending = true;
    await db?.end();
    await cluster?.stop();
  });

  it('funds the accounts from the treasury down to its floor, balanced', async () => {
    expect(await balance('a')).toBe(100n);
    expect(await balance(treasuryAccount)).toBe(-300n);
    expect(await sqlState(transfer(db, treasuryAccount, 'a', 'USD', 1n, 'past-the-floor'))).toBe('LD001');
    expect(await checkBook(db)).toMatchObject({ balancesMinor: 0n, unbalancedTransfers: 0n, driftedAccounts: 0n });
  });

  it('moves funds once per idempotency key and refuses the key for another transfer', async () => {
    const first = await transfer(db, 'a', 'b', 'USD', 30n, 'k1');
    const again = await transfer(db, 'a', 'b', 'USD', 30n, 'k1');
    expect(first.replayed).toBe(false);
    expect(again).toEqual({ transferId: first.transferId, replayed: true });
    expect([await balance('a'), await balance('b')]).toEqual([70n, 130n]);
    expect(await sqlState(transfer(db, 'a', 'b', 'USD', 31n, 'k1'))).toBe('LD002');
    expect([await balance('a'), await balance('b')]).toEqual([70n, 130n]);
  });

  it('refuses short funds, unknown accounts, self-transfers and non-positive amounts, changing nothing', async () => {
    const before = await checkBook(db);
    expect(await sqlState(transfer(db, 'c', 'a', 'USD', 101n, 'short'))).toBe('LD001');
    expect(await sqlState(transfer(db, 'c', 'nobody', 'USD', 1n, 'unknown'))).toBe('LD003');
    expect(await sqlState(transfer(db, 'c', 'a', 'EUR', 1n, 'other-asset'))).toBe('LD003');
    expect(await sqlState(transfer(db, 'c', 'c', 'USD', 1n, 'self'))).toBe('22023');
    expect(await sqlState(transfer(db, 'c', 'a', 'USD', 0n, 'zero'))).toBe('22023');
    expect(await sqlState(transfer(db, 'c', 'a', 'USD', -5n, 'negative'))).toBe('22023');
    expect(await checkBook(db)).toEqual(before);
    expect(await balance('c')).toBe(100n);
    // A refused transfer does not take its key: the same key works once funds allow.
    expect((await transfer(db, 'c', 'a', 'USD', 100n, 'short')).replayed).toBe(false);
  });

  it('runs opposite transfers between the same accounts concurrently without deadlock or lost updates', async () => {
    const [a0, b0] = [await balance('a'), await balance('b')];
    const rounds = 100;
    const results = await Promise.allSettled(
      Array.from({ length: rounds }, (_, i) => [transfer(db, 'a', 'b', 'USD', 1n, `ab${i}`), transfer(db, 'b', 'a', 'USD', 2n, `ba${i}`)]).flat(),
    );
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason)).toEqual([]);
    expect([await balance('a'), await balance('b')]).toEqual([a0 + BigInt(rounds), b0 - BigInt(rounds)]);
    expect(await checkBook(db)).toMatchObject({ balancesMinor: 0n, unbalancedTransfers: 0n, driftedAccounts: 0n });
  });

  it('replays concurrent twins under one key as one transfer', async () => {
    const a0 = await balance('a');
    const twins = await Promise.all(Array.from({ length: 8 }, () => transfer(db, 'a', 'c', 'USD', 5n, 'twin')));
    expect(new Set(twins.map((t) => t.transferId)).size).toBe(1);
    expect(twins.filter((t) => !t.replayed)).toHaveLength(1);
    expect(await balance('a')).toBe(a0 - 5n);
  });

  it('decides a batch in one call item by item: a refused item rolled back alone, a replay replayed, the rest applied', async () => {
    const [a0, b0, c0] = [await balance('a'), await balance('b'), await balance('c')];
    const item = (from: string, to: string, amountMinor: bigint, idempotencyKey: string) => ({ from, to, asset: 'USD', amountMinor, idempotencyKey });
    const first = await transferBatch(db, [item('a', 'b', 3n, 'batch-1'), item('c', 'a', c0 + 1000n, 'batch-short'), item('b', 'c', 2n, 'batch-2'), item('a', 'nobody', 1n, 'batch-unknown')]);
    expect(first.map((o) => ('refusal' in o ? o.refusal : o.replayed))).toEqual([false, 'LD001', false, 'LD003']);
    expect([await balance('a'), await balance('b'), await balance('c')]).toEqual([a0 - 3n, b0 + 1n, c0 + 2n]);
    // The same batch again: the applied items replay, the refused ones are refused again.
    const again = await transferBatch(db, [item('a', 'b', 3n, 'batch-1'), item('c', 'a', c0 + 1000n, 'batch-short'), item('b', 'c', 2n, 'batch-2'), item('a', 'nobody', 1n, 'batch-unknown')]);
    expect(again.map((o) => ('refusal' in o ? o.refusal : o.replayed))).toEqual([true, 'LD001', true, 'LD003']);
    expect(again[0]).toEqual(first[0] && 'transferId' in first[0] ? { transferId: first[0].transferId, replayed: true } : null);
    expect([await balance('a'), await balance('b'), await balance('c')]).toEqual([a0 - 3n, b0 + 1n, c0 + 2n]);
    expect(await checkBook(db)).toMatchObject({ balancesMinor: 0n, unbalancedTransfers: 0n, driftedAccounts: 0n });
  });

  it('runs batches over the same accounts in opposite orders concurrently without deadlock', async () => {
    const [a0, b0, c0] = [await balance('a'), await balance('b'), await balance('c')];
    const item = (from: string, to: string, idempotencyKey: string) => ({ from, to, asset: 'USD', amountMinor: 1n, idempotencyKey });
    const batches = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0 ? [item('a', 'b', `fwd-${i}-1`), item('b', 'c', `fwd-${i}-2`), item('c', 'a', `fwd-${i}-3`)] : [item('c', 'b', `rev-${i}-1`), item('b', 'a', `rev-${i}-2`), item('a', 'c', `rev-${i}-3`)],
    );
    const results = await Promise.allSettled(batches.map((items) => transferBatch(db, items)));
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason)).toEqual([]);
    // Every item moved 1 round a cycle: each account's balance is where it started.
    expect([await balance('a'), await balance('b'), await balance('c')]).toEqual([a0, b0, c0]);
    expect(await checkBook(db)).toMatchObject({ balancesMinor: 0n, unbalancedTransfers: 0n, driftedAccounts: 0n });
  });

  it('kept every pooled connection healthy while the tests ran', () => {
    expect(poolErrors).toEqual([]);
  });
});
