/**
 * A flipped byte in LevelDB's write-ahead log (issue 21, item 8), black-box: LevelDB
 * replays the log past the damage and silently drops what stood in the damaged block, and
 * opens without a word (classic-level 3 exposes no `paranoid_checks`, which would make the
 * damage an error on open: passing it changes nothing). `ledgerd check` then compares what
 * is left against independent evidence (the head's counters, the settlement layer's chain
 * against its meta) and names the loss.
 */
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import { expect, it } from 'vitest';
import { addConfig, client, decided, ledgerdRun, startDaemon, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();

it('names what a damaged write-ahead log lost, which LevelDB drops silently on open', async () => {
  const dir = newDir();
  const keys = await writeBook(dir, { alice: 1_000n, bob: 0n });
  addConfig(dir, { settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0 } });
  const daemon = await startDaemon({ dataDir: dir });
  try {
    const op = client(daemon.url, keys.operator);
    const alice = client(daemon.url, keys.customers.alice!);
    // A few transfers, then settlement-layer blocks (and the book taking them in) filling several of the log's 32 KiB blocks:
    // what the damage drops is settlement state alone, which no balance or journal entry shows.
    for (let i = 0; i < 3; i++) {
      const moved = await alice.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '1' }] }, undefined, { 'client-key': `wal-${i}` });
      await decided(op, moved.body.operation_reference);
    }
    const bind = await op.post('/v1/ops/assets/USD/binding', { location: 'ab'.repeat(32) }, undefined, { 'client-key': 'wal-bind' });
    await decided(op, bind.body.operation_reference);
    for (let i = 0; i < 50 && ((await op.get('/v1/assets')).body as { id: string; binding: string }[]).find((a) => a.id === 'USD')!.binding !== 'bound'; i++) {
      await op.post('/v1/ops/layer/blocks', { count: 1 });
    }
    // Each block carries a deposit: a run of empty blocks is one record rewritten in place, which a lost log block would not show.
    for (let i = 0; i < 150; i++) {
      expect((await op.post('/v1/ops/layer/deposits', { asset: 'USD', amount: '1', account_ref: 'ee'.repeat(32) }, undefined, { 'client-key': `wal-deposit-${i}` })).status).toBe(200);
      expect((await op.post('/v1/ops/layer/blocks', { count: 1 })).status).toBe(200);
    }
  } finally {
    expect(await daemon.stop()).toBe(0);
  }
  // A copy, checked whole (opening the book replays its log into a table: the damage must come first).
  const copy = newDir();
  cpSync(dir, copy, { recursive: true });
  const healthy = await ledgerdRun(['check', '--data-dir', copy]);
  expect(healthy.code, healthy.stdout).toBe(0);

  // The daemon's writes since it opened are in the newest log, not yet in a table.
  const book = join(dir, 'book');
  const log = readdirSync(book).filter((name) => name.endsWith('.log')).sort().pop()!;
  const path = join(book, log);
  expect(statSync(path).size).toBeGreaterThan(3 * 32 * 1024);
  const bytes = readFileSync(path);
  bytes[32 * 1024 + 1000]! ^= 0x10;
  writeFileSync(path, bytes);

  // Opened with the option asked for: LevelDB takes the log as it is, no error.
  const db = new Level(book, { createIfMissing: false, paranoidChecks: true } as ConstructorParameters<typeof Level>[1]);
  await db.open();
  await db.close();

  const checked = await ledgerdRun(['check', '--data-dir', dir]);
  expect(checked.code, checked.stdout).toBe(6);
  expect(checked.stdout).toMatch(/^settlement layer: block \d+(\.\.\d+)? missing before block \d+ \(its meta says height \d+\): records were lost$/m);
});
