/**
 * Backups and checks on PostgreSQL: `ledgerctl ops backup` from a ledgerd on PostgreSQL
 * under load, `ledgerd restore` into another database (and into LevelDB: the format is
 * the store's entries, whichever store), `ledgerd check` clean on the served book and on both restored ones, naming a
 * balance planted wrong in the database; restore refuses a database that holds a book.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { decodeBalance, encodeBalance } from '../../../src/model/codec.js';
import { configDir, ledgerctl } from '../../cli/support/ledgerctl.js';
import { addConfig, client, daemonsOnPostgres, decided, ledgerdRun, movements, postgresStore, startDaemon, useDaemon, useTempDirs } from '../support.js';

daemonsOnPostgres();
const newDir = useTempDirs();
const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const shared = useDaemon({ alice: 1_000_000n, bob: 1_000_000n }, { backup: { allowPlaintext: true } });
const op = shared.as('operator');

describe('backup, restore and check on PostgreSQL', () => {
  it('backs up under load, restores into another database and into LevelDB, and checks both', async () => {
    let stopping = false;
    const refs: string[] = [];
    const worker = async (who: 'alice' | 'bob', from: string, to: string) => {
      for (let n = 0; !stopping; n++) {
        const r = await shared.as(who).post('/v1/transfers', { legs: [{ from, to, asset: 'USD', amount: '3' }] }, undefined, { 'client-key': `load-${who}-${n}` });
        if (r.status === 202) refs.push(r.body.operation_reference);
      }
    };
    const workers = [worker('alice', alice, bob), worker('bob', bob, alice)];
    await new Promise((r) => setTimeout(r, 300));
    const dir = newDir();
    const file = join(dir, 'book.backup');
    const taken = await ledgerctl(['ops', 'backup', '--out', file, '--json'], { LEDGER_URL: shared.daemon.url, LEDGER_TOKEN: shared.keys.operator, LEDGERCTL_CONFIG_DIR: configDir() });
    // A book on PostgreSQL is checked while it is served, under load: one snapshot holds still for the check.
    const live = await ledgerdRun(['check', '--data-dir', shared.dir]);
    stopping = true;
    await Promise.all(workers);
    expect(taken.code, taken.stderr).toBe(0);
    expect(live.code, live.stdout).toBe(0);
    expect(live.stdout).toMatch(/: consistent\n$/);
    for (const ref of refs) await decided(op, ref);
    const position: number = JSON.parse(readFileSync(file, 'utf8').split('\n')[0]!).head.postingSeq;
    expect(refs.length).toBeGreaterThan(0);

    // Into another PostgreSQL database, then into LevelDB.
    const toPostgres = join(dir, 'pg');
    mkdirSync(toPostgres);
    const store = await postgresStore();
    addConfig(toPostgres, { store: { kind: 'postgres', url: store.url, durability: store.durability } });
    const toLevel = join(dir, 'level');
    for (const target of [toPostgres, toLevel]) {
      const restored = await ledgerdRun(['restore', '--from', file, '--data-dir', target, '--verify-key', join(shared.dir, 'backup.pub')]);
      expect(restored.code, restored.stderr).toBe(0);
      const checked = await ledgerdRun(['check', '--data-dir', target]);
      expect(checked.code, checked.stdout).toBe(0);
      expect(checked.stdout).toMatch(/: consistent\n$/);
    }
    expect(readFileSync(join(toPostgres, 'daemon.key'), 'utf8')).toBe(readFileSync(join(shared.dir, 'daemon.key'), 'utf8'));

    const daemon = await startDaemon({ dataDir: toPostgres });
    try {
      const copy = client(daemon.url, shared.keys.operator);
      expect((await copy.get('/v1/trial-balance')).body.unbalanced).toEqual([]);
      for (const account of [alice, bob]) {
        expect((await movements(copy, account)).filter((m) => m.seq <= position)).toEqual((await movements(op, account)).filter((m) => m.seq <= position));
      }
    } finally {
      expect(await daemon.stop()).toBe(0);
    }

    // A database that holds a book is refused, and nothing of it changes.
    const again = await ledgerdRun(['restore', '--from', file, '--data-dir', toPostgres, '--verify-key', join(shared.dir, 'backup.pub')]);
    expect(again.code).toBe(4);
    expect(again.stderr).toContain('already holds a book');

    // A balance planted wrong in the database: check names it and exits 6.
    const sql = new pg.Client({ connectionString: store.url });
    sql.on('error', () => {});
    await sql.connect();
    try {
      const key = Buffer.from(`bal/${bob}/USD`);
      const text = ((await sql.query('SELECT v FROM ledgerd_kv WHERE k = $1', [key])).rows[0] as { v: Buffer }).v.toString();
      const balance = decodeBalance(JSON.parse(text));
      await sql.query('UPDATE ledgerd_kv SET v = $2 WHERE k = $1', [key, Buffer.from(JSON.stringify(encodeBalance({ ...balance, available: balance.available + 5n })))]);
    } finally {
      await sql.end();
    }
    const damaged = await ledgerdRun(['check', '--data-dir', toPostgres]);
    expect(damaged.code).toBe(6);
    expect(damaged.stdout).toContain(`${bob} USD: balance is available`);
    // Four checks (one under load) and two restores, each a ledgerd of its own.
  }, 180_000);
});
