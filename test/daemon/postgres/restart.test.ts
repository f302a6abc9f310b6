/**
 * Restarting ledgerd on PostgreSQL on the same host (issue 26, item 4), on a real
 * cluster: the data dir is locked while served, so a second ledgerd on it is refused at
 * start; a ledgerd killed and started again on its own data dir takes its dead
 * predecessor's lease at once instead of waiting it out, while one on another data dir
 * (a standby's copy) still waits for the lease to lapse.
 */
import { cpSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { client, daemonsOnPostgres, decided, ledgerdRun, postgresStore, startDaemon, useTempDirs, writeBook } from '../support.js';

daemonsOnPostgres();
const newDir = useTempDirs();
// Long enough that a restart on a busy 2-core machine is told from waiting the lease out.
const leaseMs = 15_000;
const transfer = { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '1' }] };

describe('ledgerd on PostgreSQL restarted on the same host', () => {
  it('refuses a second ledgerd on a served data dir', async () => {
    const dir = newDir();
    await writeBook(dir, { alice: 10n, bob: 0n }, await postgresStore(leaseMs));
    const first = await startDaemon({ dataDir: dir });
    try {
      const second = await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0']);
      expect(second.code).toBe(4);
      expect(second.stderr).toMatch(/in use by another ledgerd/);
    } finally {
      expect(await first.stop()).toBe(0);
    }
  });

  it('takes its own dead predecessor\'s lease at once after SIGKILL, where another data dir waits the lease out', async () => {
    const dir = newDir();
    const keysOf = await writeBook(dir, { alice: 1_000n, bob: 0n }, await postgresStore(leaseMs));
    const copy = newDir();
    cpSync(dir, copy, { recursive: true });

    const first = await startDaemon({ dataDir: dir });
    const acked = await client(first.url, keysOf.customers.alice!).post('/v1/transfers', transfer, undefined, { 'client-key': 'before-kill' });
    expect(acked.status).toBe(202);
    await first.stop('SIGKILL');
    const t0 = performance.now();
    const again = await startDaemon({ dataDir: dir });
    const sameDirMs = performance.now() - t0;
    const asAlice = client(again.url, keysOf.customers.alice!);
    expect((await decided(asAlice, acked.body.operation_reference)).body.state).toBe('Completed');
    const after = await asAlice.post('/v1/transfers', transfer, undefined, { 'client-key': 'after-restart' });
    expect((await decided(asAlice, after.body.operation_reference)).body.state).toBe('Completed');

    await again.stop('SIGKILL');
    const t1 = performance.now();
    const standby = await startDaemon({ dataDir: copy });
    const otherDirMs = performance.now() - t1;
    console.log(`restart to readiness after SIGKILL, lease ${leaseMs} ms: same data dir ${sameDirMs.toFixed(0)} ms, another data dir ${otherDirMs.toFixed(0)} ms`);
    expect(sameDirMs).toBeLessThan(leaseMs / 2);
    expect(otherDirMs).toBeGreaterThan(leaseMs / 2);
    expect(await standby.stop()).toBe(0);
  }, 120_000);
});
