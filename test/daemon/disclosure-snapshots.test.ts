/**
 * A disclosure reads one snapshot of the book, like a query, so it counts against the
 * caller's `snapshotsPerPrincipalMax` (daemon/snapshot-slots.ts): one principal making
 * disclosures in parallel cannot hold unbounded snapshots (on PostgreSQL each holds a
 * pool connection). With a bound of 1 and no queue (so a read past the share is refused
 * at once, not made to wait), a flood of disclosures by one principal overlaps
 * (each waits on several reads of the store), so some are refused at once while the
 * others and other principals are served.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, type Daemon, type Reply, client, decided, refusalOf, startDaemon, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();
let daemon: Daemon;
let op: Client;
let alice: Client;
let bob: Client;
let transfer = '';
let key = 0;

beforeAll(async () => {
  const dir = newDir();
  const keys = await writeBook(dir, { alice: 1_000n, bob: 1_000n });
  writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ snapshotsPerPrincipalMax: 1, snapshotQueuePerPrincipalMax: 0, settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0, finalityDepth: 1 } }));
  daemon = await startDaemon({ dataDir: dir });
  op = client(() => daemon.url, keys.operator);
  alice = client(() => daemon.url, keys.customers.alice!);
  bob = client(() => daemon.url, keys.customers.bob!);
  const r = await alice.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '100' }] });
  expect((await decided(alice, r.body.operation_reference)).body.state).toBe('Completed');
  transfer = r.body.operation_reference;
  expect((await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-1' })).status).toBe(200);
  await op.post('/v1/ops/layer/blocks', { count: 2 });
});
afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
});

const disclose = (who: Client, name: string): Promise<Reply> =>
  who.post('/v1/disclosures', { subject: `did:ledger:acct:${name}`, assertion: { shape: 'operation_occurred', operation: transfer }, recipient_reference: 'ab'.repeat(32) }, undefined, { 'client-key': `d-${++key}` });

describe('disclosures under the per-principal bound on snapshots', () => {
  it("refuses one principal's disclosures past its bound at once (503 ERR-DecisionUnavailable, Retry-After) and serves the rest", async () => {
    expect((await disclose(alice, 'alice')).status).toBe(200);
    // Floods until one overlaps another (the first flood nearly always does; before the bound, none ever was refused).
    let refusals: Reply[] = [];
    let served = 0;
    for (let round = 0; round < 10 && refusals.length === 0; round++) {
      const [aliceReplies, bobReply] = await Promise.all([Promise.all(Array.from({ length: 20 }, () => disclose(alice, 'alice'))), disclose(bob, 'bob')]);
      // Bob's one disclosure at a time is within his own bound, whatever alice holds.
      expect(bobReply.status).toBe(200);
      refusals = aliceReplies.filter((r) => r.status !== 200);
      served += aliceReplies.length - refusals.length;
    }
    expect(refusals.length).toBeGreaterThan(0);
    expect(served).toBeGreaterThan(0);
    for (const r of refusals) {
      expect(refusalOf(r)).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
      expect(r.headers['retry-after']).toBe('1');
    }
    // The slots were given back: she discloses again.
    expect((await disclose(alice, 'alice')).status).toBe(200);
  });
});
