/**
 * A poison command (its decision trips an assertion) cannot hold ledgerd down: it is
 * Rejected with ERR-Internal and logged at error level, the rest of its round is
 * decided, the daemon stays up, and the same holds when the poison is found under
 * cmd/ on restart. The poison is made by the test-only LEDGERD_TEST_POISON hook.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keyedIds } from '../../src/model/ids.js';
import { daemonKeys } from '../../daemon/book.js';
import { Kernel } from '../../src/book/kernel.js';
import { LevelStore } from '../../src/store/level.js';
import type { BatchOp } from '../../src/store/port.js';
import { actorOf, submission, transfer } from '../support/book.js';
import { type Client, type Daemon, client, decided, removeDir, startDaemon, tempDir, writeBook } from './support.js';
import { keys } from '../../src/model/keys.js';

const marker = 'POISON-7f3a';
const env = { LEDGERD_TEST_POISON: marker, LEDGERD_LOG_LEVEL: 'error' };
const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

const body = (amount: string, reference: string) => ({ legs: [{ amount, asset: 'USD', from: alice, to: bob }], reference });

async function expectDecided(api: Client, daemon: Daemon, refs: { good: string[]; poison: string }) {
  for (const ref of refs.good) expect((await decided(api, ref)).body.state).toBe('Completed');
  const poison = await decided(api, refs.poison);
  expect(poison.body).toMatchObject({ state: 'Rejected', terminal: true, error: { error: 'ERR-Internal' } });
  expect(poison.body.result).toBeUndefined();
  // Loud: one error-level line naming the operation and the assertion.
  const logged = daemon.stderr.map((line) => JSON.parse(line) as Record<string, unknown>).filter((l) => l.operation === refs.poison);
  expect(logged).toHaveLength(1);
  expect(logged[0]).toMatchObject({ level: 50, command: 'transfer' });
  expect(String(logged[0]!.assertion)).toContain('assertion failed: test poison');
  // The daemon is up and goes on deciding.
  expect(daemon.process.exitCode).toBeNull();
  expect((await api.get('/v1/health')).status).toBe(200);
  const later = await api.post('/v1/transfers', body('1', '"after"'));
  expect(later.status).toBe(202);
  expect((await decided(api, later.body.operation_reference)).body.state).toBe('Completed');
  const tb = await api.get('/v1/trial-balance');
  expect(tb.status).toBe(200);
  expect(tb.body.unbalanced).toEqual([]);
}

describe('poison commands', () => {
  it('rejects the poison with ERR-Internal, decides the rest of its round, and stays up', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const keysOf = await writeBook(dir, { alice: 1_000n, bob: 0n });
    const daemon = await startDaemon({ dataDir: dir, env });
    try {
      const api = client(daemon.url, keysOf.customers.alice!);
      // Sent together, they share a decision round.
      const replies = await Promise.all([body('1', '"one"'), body('2', `"${marker}"`), body('4', '"three"')].map((b) => api.post('/v1/transfers', b)));
      for (const r of replies) expect(r.status).toBe(202);
      const [one, poison, three] = replies.map((r) => r.body.operation_reference as string);
      await expectDecided(client(daemon.url, keysOf.operator), daemon, { good: [one!, three!], poison: poison! });
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  });

  it('does the same on restart with the poison still under cmd/', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const keysOf = await writeBook(dir, { alice: 1_000n, bob: 0n });
    // A crash between acknowledgement and decision, in-process: the decision writes fail.
    const level = await LevelStore.open(join(dir, 'book'));
    const store = Object.assign(Object.create(level) as LevelStore, {
      write: (ops: readonly BatchOp[], sync: boolean) => (ops.some((op) => op.key === keys.head) ? Promise.reject(new Error('EIO: i/o error')) : level.write(ops, sync)),
    });
    // The ids the daemon draws under its own key, so it finds these commands by reference.
    const kernel = await Kernel.open({ store, clock: Date.now, ids: keyedIds((await daemonKeys(dir)).ids) });
    const actor = actorOf('did:ledger:id:alice');
    const acks = await Promise.all(
      [['1', '"one"'], ['2', `"${marker}"`], ['4', '"three"']].map(([amount, reference]) => kernel.submit(submission(actor, transfer(alice, bob, BigInt(amount!)), { reference }))),
    );
    await kernel.idle();
    await kernel.close();

    const daemon = await startDaemon({ dataDir: dir, env });
    try {
      const [one, poison, three] = acks.map((a) => a.operation.ref);
      await expectDecided(client(daemon.url, keysOf.operator), daemon, { good: [one!, three!], poison: poison! });
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  });
});
