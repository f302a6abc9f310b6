/**
 * The `store` setting (CONTRACT 1): LevelDB by default, PostgreSQL when the config file
 * says so, `$LEDGERD_STORE_URL` overriding its url; anything else refused at start. A
 * database out of reach is a start-up failure naming it, never echoing its password.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../daemon/config.js';
import { exitCodes } from '../../../daemon/failures.js';
import { ledgerdRun, useTempDirs } from '../support.js';

const newDir = useTempDirs();
const withFile = (settings: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => loadConfig({ flags: {}, env, readFile: () => JSON.stringify(settings) });

describe('the store setting', () => {
  it('is LevelDB by default, PostgreSQL with its defaults when named, and the url may come from the environment', () => {
    expect(loadConfig({ flags: {}, env: {}, readFile: () => null }).store).toEqual({ kind: 'leveldb', openFilesMax: 1000, writeBufferBytes: 64 * 1024 * 1024 });
    expect(withFile({ store: { kind: 'leveldb', openFilesMax: 200, writeBufferBytes: 4 << 20 } }).store).toEqual({ kind: 'leveldb', openFilesMax: 200, writeBufferBytes: 4 << 20 });
    expect(withFile({ store: { kind: 'postgres', url: 'postgres://u:p@db:5432/book' } }).store).toEqual({ kind: 'postgres', url: 'postgres://u:p@db:5432/book', poolSize: 8, leaseMs: 10_000, statementTimeoutMs: 5_000, durabilityCheckMs: 10_000, durability: 'refuse' });
    expect(withFile({ store: { kind: 'postgres', url: 'postgres://a/x', poolSize: 2, leaseMs: 1_000 } }, { LEDGERD_STORE_URL: 'postgresql://b/y' }).store).toMatchObject({ url: 'postgresql://b/y', poolSize: 2, leaseMs: 1_000 });
    expect(withFile({ store: { kind: 'postgres' } }, { LEDGERD_STORE_URL: 'postgres://b/y' }).store).toMatchObject({ url: 'postgres://b/y' });
  });

  it('derives the read slots from the store: 64 on LevelDB, the pool on PostgreSQL; a quarter reserved for the operator, half per principal', () => {
    const bounds = (settings: Record<string, unknown>) => {
      const { snapshotsMax, snapshotsOperatorReserved, snapshotsPerPrincipalMax } = withFile(settings);
      return [snapshotsMax, snapshotsOperatorReserved, snapshotsPerPrincipalMax];
    };
    const pgStore = (poolSize: number) => ({ store: { kind: 'postgres', url: 'postgres://x', poolSize } });
    expect(bounds({})).toEqual([64, 16, 32]);
    expect(bounds(pgStore(8))).toEqual([8, 2, 4]);
    expect(bounds(pgStore(20))).toEqual([20, 5, 10]);
    expect(bounds(pgStore(2))).toEqual([2, 0, 1]);
    expect(bounds({ ...pgStore(8), snapshotsPerPrincipalMax: 2 })).toEqual([8, 2, 2]);
    expect(bounds({ ...pgStore(8), snapshotsMax: 4 })).toEqual([4, 1, 2]);
    // Every pool the store takes gives defaults that start: a principal's share below what the others share.
    for (let pool = 2; pool <= 100; pool++) expect(() => withFile(pgStore(pool))).not.toThrow();
  });

  it('refuses an unknown kind or setting, a missing or foreign url, bounds crossed, and a store url for a LevelDB book', () => {
    const refusals: [Record<string, unknown>, NodeJS.ProcessEnv, RegExp][] = [
      [{ store: { kind: 'mysql' } }, {}, /store.kind must be leveldb or postgres/],
      [{ store: 'postgres' }, {}, /store must be an object/],
      [{ store: { kind: 'postgres' } }, {}, /store.url .* is required/],
      [{ store: { kind: 'postgres', url: 'mysql://x' } }, {}, /postgres:\/\/ URL/],
      [{ store: { kind: 'postgres', url: 'postgres://x', pool: 3 } }, {}, /unknown setting pool/],
      [{ store: { kind: 'postgres', url: 'postgres://x', poolSize: 1 } }, {}, /store.poolSize must be an integer in 2..100/],
      [{ store: { kind: 'postgres', url: 'postgres://x', leaseMs: 999 } }, {}, /store.leaseMs must be an integer in 1000..600000/],
      [{ store: { kind: 'leveldb', url: 'postgres://x' } }, {}, /unknown setting url/],
      [{ store: { kind: 'leveldb', openFilesMax: 73 } }, {}, /store.openFilesMax must be an integer in 74..50000/],
      [{ store: { kind: 'leveldb', openFilesMax: '1000' } }, {}, /store.openFilesMax must be an integer/],
      [{ store: { kind: 'leveldb', writeBufferBytes: (1 << 20) - 1 } }, {}, /store.writeBufferBytes must be an integer in 1048576..1073741824/],
      [{ store: { kind: 'postgres', url: 'postgres://x', writeBufferBytes: 1 << 20 } }, {}, /unknown setting writeBufferBytes/],
      [{}, { LEDGERD_STORE_URL: 'postgres://x' }, /LEDGERD_STORE_URL is set but the store is leveldb/],
    ];
    for (const [settings, env, message] of refusals) {
      expect(() => withFile(settings, env)).toThrow(ConfigError);
      expect(() => withFile(settings, env)).toThrow(message);
    }
  });

  it('fails to start on a database out of reach, naming it without its password', async () => {
    const dir = newDir();
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ store: { kind: 'postgres', url: 'postgres://ledger:s3cret-pw@127.0.0.1:1/book' } }));
    for (const args of [['init'], ['serve', '--listen', '127.0.0.1:0'], ['check']]) {
      const r = await ledgerdRun([...args, '--data-dir', dir]);
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(exitCodes.dataDir);
      expect(r.stderr).toMatch(/postgres:\/\/127\.0\.0\.1:1\/book/);
      expect(r.stderr + r.stdout).not.toContain('s3cret-pw');
    }
  });
});
