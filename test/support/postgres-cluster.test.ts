import { existsSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startPostgresCluster } from './postgres-cluster.js';

describe('startPostgresCluster', () => {
  it('runs a durable private cluster on loopback with a password, then stops it and removes its dir', async () => {
    const cluster = await startPostgresCluster({ settings: { max_connections: '20' } });
    try {
      expect(cluster.port).toBeGreaterThan(0);
      const client = new pg.Client({ host: cluster.host, port: cluster.port, user: cluster.user, password: cluster.password, database: cluster.database });
      await client.connect();
      const setting = async (name: string) => ((await client.query('SELECT current_setting($1) AS value', [name])).rows[0] as { value: string }).value;
      expect(await setting('fsync')).toBe('on');
      expect(await setting('synchronous_commit')).toBe('on');
      expect(await setting('listen_addresses')).toBe('127.0.0.1');
      expect(await setting('max_connections')).toBe('20');
      expect(await setting('port')).toBe(String(cluster.port));
      await client.end();

      const wrongPassword = new pg.Client({ host: cluster.host, port: cluster.port, user: cluster.user, password: 'not-the-password', database: cluster.database });
      await expect(wrongPassword.connect()).rejects.toThrow(/password authentication failed/);
    } finally {
      await cluster.stop();
    }
    expect(existsSync(cluster.dir)).toBe(false);
    const afterStop = new pg.Client({ host: cluster.host, port: cluster.port, user: cluster.user, password: cluster.password, database: cluster.database, connectionTimeoutMillis: 5_000 });
    await expect(afterStop.connect()).rejects.toThrow();
    await cluster.stop();
  });

  it('refuses a setting name that is not one', async () => {
    await expect(startPostgresCluster({ settings: { 'fsync = off\nport': '1' } })).rejects.toThrow(/bad PostgreSQL setting name/);
  });
});
