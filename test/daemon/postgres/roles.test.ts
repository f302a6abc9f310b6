/**
 * Two roles on the book's database (issue 26, item 2), on a real cluster: the owner role
 * prepares it (`ledgerd init`, the daemon's first start), and a role with data rights
 * alone (SELECT, INSERT, UPDATE, DELETE on the book's table; SELECT, UPDATE on the lease)
 * serves an existing book; a role lacking one of them is refused at start, naming it.
 */
import { withPgClient } from '../../support/pg-books.js';
import { describe, expect, it } from 'vitest';
import { addConfig, client, daemonsOnPostgres, decided, ledgerdRun, postgresStore, startDaemon, useTempDirs, writeBook } from '../support.js';

daemonsOnPostgres();
const newDir = useTempDirs();

const asOwner = withPgClient;

/** The store's URL with another role's name and password in it. */
function urlAs(url: string, role: string, password: string): string {
  const u = new URL(url);
  u.username = role;
  u.password = password;
  return u.toString();
}

describe('ledgerd on PostgreSQL under a least-privilege role', () => {
  it('serves an existing book with data rights only, and names a missing right at start', async () => {
    const dir = newDir();
    const store = await postgresStore();
    const keysOf = await writeBook(dir, { alice: 100n, bob: 0n }, store);
    const role = `ledgerd_app_${Date.now() % 1_000_000}`;
    await asOwner(store.url, async (c) => {
      await c.query(`CREATE ROLE ${role} LOGIN PASSWORD 'app-secret'`);
      await c.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ledgerd_kv TO ${role}`);
      await c.query(`GRANT SELECT, UPDATE ON ledgerd_lease TO ${role}`);
    });
    addConfig(dir, { store: { ...store, url: urlAs(store.url, role, 'app-secret') } });
    const daemon = await startDaemon({ dataDir: dir });
    try {
      const asAlice = client(daemon.url, keysOf.customers.alice!);
      const r = await asAlice.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '5' }] }, undefined, { 'client-key': 'least-privilege' });
      expect(r.status, r.text).toBe(202);
      expect((await decided(asAlice, r.body.operation_reference)).body.state).toBe('Completed');
    } finally {
      expect(await daemon.stop()).toBe(0);
    }

    await asOwner(store.url, (c) => c.query(`REVOKE UPDATE ON ledgerd_lease FROM ${role}`));
    const refused = await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('lacks UPDATE on ledgerd_lease');
    expect(refused.stderr).not.toContain('app-secret');
  });
});
