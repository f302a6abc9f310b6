/**
 * What a disclosure makes the daemon keep is small (issue 20 item 5): its reply is kept
 * as what it was made at, not whole, and a repeat under its client key, even after a
 * restart, answers the same disclosure byte for byte.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bookRecords, client, decided, startDaemon, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();

describe('a disclosure kept for repeats', () => {
  it('is kept in far fewer bytes than it has, and rebuilt byte for byte on a repeat, across a restart', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 1_000n, bob: 0n });
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0, finalityDepth: 1 } }));
    let daemon = await startDaemon({ dataDir: dir });
    const alice = client(() => daemon.url, keys.customers.alice!);
    const op = client(() => daemon.url, keys.operator);
    // Forty transfers out of alice: a flows_bound disclosure over them carries forty entries with their proofs.
    for (let i = 0; i < 40; i++) {
      const r = await alice.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '1' }] }, undefined, { 'client-key': `t-${i}` });
      expect((await decided(alice, r.body.operation_reference)).body.state).toBe('Completed');
    }
    expect((await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-1' })).status).toBe(200);
    await op.post('/v1/ops/layer/blocks', { count: 2 });
    const head = (await op.get('/v1/checkpoints/1')).body;
    expect(head.status).toBe('final');
    const body = {
      subject: 'did:ledger:acct:alice',
      assertion: { shape: 'flows_bound', asset: 'USD', bound: '40', bound_kind: 'at_least', direction: 'out', from_sequence: 1, to_sequence: head.entry_sequence },
      recipient_reference: 'ab'.repeat(32),
    };
    const first = await alice.post('/v1/disclosures', body, undefined, { 'client-key': 'kept' });
    expect(first.status).toBe(200);
    const disclosure = first.body.result.disclosure as string;
    expect(disclosure.length).toBeGreaterThan(20_000);
    await new Promise((r) => setTimeout(r, 5));
    expect((await alice.post('/v1/disclosures', body, undefined, { 'client-key': 'kept' })).body).toEqual(first.body);
    expect(await daemon.stop()).toBe(0);
    const kept = await bookRecords(dir, 'dck/');
    expect(kept.records).toBe(2);
    // The checkpoint's reply and the disclosure's: each well under a kilobyte, whatever the disclosure's size.
    expect(kept.bytes).toBeLessThan(2_000);
    daemon = await startDaemon({ dataDir: dir });
    try {
      const again = await alice.post('/v1/disclosures', body, undefined, { 'client-key': 'kept' });
      expect(again.text).toBe(first.text);
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  });
});
