/**
 * Durability watched all the time (issue 26, item 3), on a real cluster: the server's
 * settings are read at start and every `durabilityCheckMs`; when they may lose an
 * acknowledged commit (synchronous_commit off after a reload), ledgerd refuses every write
 * with 503 until they are mended (the default), or serves degraded when the config says
 * so; the metric ledgerd_store_durable says which, and the log names the setting.
 */
import { describe, expect, it } from 'vitest';
import { clusterUrl } from '../../support/stores.js';
import { withPgClient } from '../../support/pg-books.js';
import { type Client, addConfig, client, daemonsOnPostgres, decided, postgresStore, refusalOf, startDaemon, until, useTempDirs, writeBook } from '../support.js';

const matrix = daemonsOnPostgres({ durable: true });
const newDir = useTempDirs();
const transfer = { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '1' }] };

function setSynchronousCommit(value: 'off' | null): Promise<void> {
  return withPgClient(clusterUrl(matrix.cluster()), async (c) => {
    await c.query(value === null ? 'ALTER SYSTEM RESET synchronous_commit' : `ALTER SYSTEM SET synchronous_commit = ${value}`);
    await c.query('SELECT pg_reload_conf()');
  });
}

const durableGauge = async (op: Client) => /^ledgerd_store_durable (\d)$/m.exec((await op.get('/metrics')).text)?.[1];

async function bookWith(durability: 'refuse' | 'degraded') {
  const dir = newDir();
  const store = await postgresStore();
  const keysOf = await writeBook(dir, { alice: 1_000n, bob: 0n }, store);
  addConfig(dir, { store: { ...store, durability, durabilityCheckMs: 1_000 } });
  const daemon = await startDaemon({ dataDir: dir });
  return { daemon, asAlice: client(daemon.url, keysOf.customers.alice!), op: client(daemon.url, keysOf.operator) };
}

describe('ledgerd on PostgreSQL when the server stops keeping what it acknowledges', () => {
  it('refuses every write with 503 until the setting is mended, and says so in the metric and the log', async () => {
    const { daemon, asAlice, op } = await bookWith('refuse');
    try {
      const ok = await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'durable' });
      expect((await decided(asAlice, ok.body.operation_reference)).body.state).toBe('Completed');
      expect(await durableGauge(op)).toBe('1');

      await setSynchronousCommit('off');
      await until(() => durableGauge(op), (v) => v === '0');
      const refused = await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'not-durable' });
      expect(refusalOf(refused)).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
      expect(refused.headers['retry-after']).toBeDefined();
      expect(daemon.stderr.join('\n')).toMatch(/"settings":"synchronous_commit = off".*refusing every write/);
      // Where the operator reads it: the store's status names the setting; the public health answer stays as CONTRACT 1 pins it.
      expect((await op.get('/v1/ops/store')).body).toEqual({ kind: 'postgres', durable: false, durability_risk: 'synchronous_commit = off', on_risk: 'refuse', deciding: false, writes_failing_ms: 0 });
      expect((await client(daemon.url, '').get('/v1/health')).body).toEqual({ status: 'ok' });

      await setSynchronousCommit(null);
      let after = refused;
      for (let i = 0; i < 100 && after.status !== 202; i++) {
        await new Promise((r) => setTimeout(r, 200));
        after = await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'not-durable' });
      }
      expect(after.status, after.text).toBe(202);
      expect((await decided(asAlice, after.body.operation_reference)).body.state).toBe('Completed');
      expect(await durableGauge(op)).toBe('1');
      expect((await op.get('/v1/ops/store')).body).toEqual({ kind: 'postgres', durable: true, durability_risk: null, on_risk: 'refuse', deciding: true, writes_failing_ms: 0 });
    } finally {
      await setSynchronousCommit(null);
      expect(await daemon.stop()).toBe(0);
    }
  }, 120_000);

  it('serves degraded when the config says so, logging it and showing 0 in the metric', async () => {
    const { daemon, asAlice, op } = await bookWith('degraded');
    try {
      await setSynchronousCommit('off');
      await until(() => durableGauge(op), (v) => v === '0');
      const r = await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'degraded' });
      expect(r.status, r.text).toBe(202);
      expect((await decided(asAlice, r.body.operation_reference)).body.state).toBe('Completed');
      expect(daemon.stderr.join('\n')).toMatch(/serving degraded/);
      expect((await op.get('/v1/ops/store')).body).toMatchObject({ durable: false, durability_risk: 'synchronous_commit = off', on_risk: 'degraded', deciding: true });
    } finally {
      await setSynchronousCommit(null);
      expect(await daemon.stop()).toBe(0);
    }
  }, 120_000);
});
