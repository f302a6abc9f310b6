/**
 * The store port's contract, on each store: ordered keys (bytewise, as LevelDB orders
 * UTF-8), atomic batches where the last op on a key wins, snapshots that do not move,
 * and range reads that page correctly past the PostgreSQL store's page size.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { isPostgresUnavailable, pgRangePageEntries } from '../../src/store/postgres.js';
import { type Range, type ReadView, type Store, batchOf } from '../../src/store/port.js';
import { clusterUrl, storeKinds, useStores } from '../support/stores.js';

const stores = useStores();

async function read(view: ReadView, range: Range): Promise<string[]> {
  const out: string[] = [];
  for await (const [key, value] of view.entries(range)) out.push(`${key}=${value}`);
  return out;
}

const key = (i: number) => `k/${String(i).padStart(5, '0')}`;

describe.each(storeKinds)('the %s store', (kind) => {
  it('applies a batch whole, the last op on a key deciding it, and keeps it across a reopen', async () => {
    let store: Store = await stores.open(kind);
    await store.write([{ type: 'put', key: 'a', value: 'old' }, { type: 'put', key: 'gone', value: 'x' }], true);
    await store.write(
      [
        { type: 'put', key: 'a', value: 'one' },
        { type: 'del', key: 'a' },
        { type: 'put', key: 'a', value: 'two' },
        { type: 'put', key: 'b', value: 'three' },
        { type: 'del', key: 'b' },
        { type: 'del', key: 'gone' },
        { type: 'del', key: 'never' },
        { type: 'put', key: 'nul\u0000key', value: 'a\u0000value é' },
      ],
      true,
    );
    await store.close();
    store = await stores.reopen(kind, store);
    expect(await store.get('a')).toBe('two');
    expect(await store.get('b')).toBeUndefined();
    expect(await store.getMany(['gone', 'nul\u0000key', 'a', 'a'])).toEqual([undefined, 'a\u0000value é', 'two', 'two']);
    expect(await store.getMany([])).toEqual([]);
    await store.close();
  });

  it('applies a batch built op by op (batchOf: LevelDB\'s own chained batch) only once written, whole, the last op on a key deciding it', async () => {
    const store = await stores.open(kind);
    await store.write([{ type: 'put', key: 'gone', value: 'x' }], true);
    const batch = batchOf(store);
    batch.put('a', 'one');
    batch.del('a');
    batch.put('a', 'two');
    batch.del('gone');
    expect(batch.length).toBe(4);
    expect(await store.getMany(['a', 'gone'])).toEqual([undefined, 'x']);
    await batch.write(true);
    expect(await store.getMany(['a', 'gone'])).toEqual(['two', undefined]);
    await batchOf(store).write(true);
    expect(await read(store, { limit: 10 })).toEqual(['a=two']);
    await store.close();
  });

  it('reads ranges by every bound, forwards and backwards, past the PostgreSQL page size', async () => {
    const store = await stores.open(kind);
    const n = 2 * pgRangePageEntries + 345;
    await store.write(Array.from({ length: n }, (_, i) => ({ type: 'put' as const, key: key(i), value: String(i) })), true);
    await store.write([{ type: 'put', key: 'j', value: 'before' }, { type: 'put', key: 'l', value: 'after' }], true);
    const all = Array.from({ length: n }, (_, i) => `${key(i)}=${i}`);
    expect(await read(store, { gte: 'k/', lt: 'k0', limit: Number.MAX_SAFE_INTEGER })).toEqual(all);
    expect(await read(store, { gt: 'k/', lt: 'k0', reverse: true, limit: Number.MAX_SAFE_INTEGER })).toEqual(all.slice().reverse());
    expect(await read(store, { gt: key(10), lte: key(2010), limit: 1500 })).toEqual(all.slice(11, 1511));
    expect(await read(store, { gte: key(10), lt: key(2010), reverse: true, limit: 1001 })).toEqual(all.slice(1009, 2010).reverse());
    expect(await read(store, { gte: key(pgRangePageEntries - 1), limit: pgRangePageEntries + 1 })).toEqual(all.slice(pgRangePageEntries - 1, 2 * pgRangePageEntries));
    expect(await read(store, { limit: 1 })).toEqual(['j=before']);
    expect(await read(store, { reverse: true, limit: 2 })).toEqual(['l=after', `${key(n - 1)}=${n - 1}`]);
    expect(await read(store, { lte: 'j', limit: 5 })).toEqual(['j=before']);
    expect(await read(store, { gt: 'l', limit: 5 })).toEqual([]);
    expect(await read(store, { gte: key(5), lt: key(5), limit: 5 })).toEqual([]);
    await store.close();
  });

  it('gives a snapshot that stays at its instant while the store moves on', async () => {
    const store = await stores.open(kind);
    await store.write([{ type: 'put', key: 'x', value: '1' }, { type: 'put', key: 'y', value: '1' }], true);
    const snap = store.snapshot();
    expect(await snap.get('x')).toBe('1');
    await store.write([{ type: 'put', key: 'x', value: '2' }, { type: 'del', key: 'y' }, { type: 'put', key: 'z', value: '2' }], true);
    expect(await snap.getMany(['x', 'y', 'z'])).toEqual(['1', '1', undefined]);
    expect(await read(snap, { limit: 10 })).toEqual(['x=1', 'y=1']);
    expect(await read(store, { limit: 10 })).toEqual(['x=2', 'z=2']);
    await snap.close();
    // A snapshot asked for after a write sees it.
    const later = store.snapshot();
    expect(await later.get('x')).toBe('2');
    await later.close();
    await store.close();
  });
});

describe('key order', () => {
  it('is the same bytewise UTF-8 order on PostgreSQL as on LevelDB, for any keys', async () => {
    const level = await stores.open('leveldb');
    const postgres = await stores.open('postgres');
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 40 }), async (keys) => {
        // Lone surrogates are not UTF-8: both stores would write U+FFFD for them, merging keys.
        const clean = keys.filter((k) => !/\p{Cs}/u.test(k));
        const ops = clean.map((k) => ({ type: 'put' as const, key: k, value: k }));
        await level.write(ops, false);
        await postgres.write(ops, false);
        const order = async (s: Store) => {
          const out: string[] = [];
          for await (const [k] of s.entries({ limit: Number.MAX_SAFE_INTEGER })) out.push(k);
          return out;
        };
        const expected = await order(level);
        expect(await order(postgres)).toEqual(expected);
        expect(expected).toEqual(expected.slice().sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
        const dels = clean.map((k) => ({ type: 'del' as const, key: k }));
        await level.write(dels, false);
        await postgres.write(dels, false);
      }),
      { numRuns: 40 },
    );
    await level.close();
    await postgres.close();
  });
});

describe('the PostgreSQL store when its server ends a connection', () => {
  it('answers a held snapshot\'s reads as unavailable, never with an unhandled error, and serves on', async () => {
    const store = await stores.open('postgres');
    await store.write([{ type: 'put', key: 'x', value: '1' }], true);
    const snap = store.snapshot();
    expect(await snap.get('x')).toBe('1');
    // The snapshot's connection is ended by the server while the snapshot is held, idle between reads.
    const sql = new pg.Client({ connectionString: clusterUrl(stores.cluster()) });
    sql.on('error', () => {});
    await sql.connect();
    const ended = await sql.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE state = 'idle in transaction'");
    await sql.end();
    expect(ended.rowCount).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    const failure = await snap.get('x').then(() => null, (e: unknown) => e);
    expect(isPostgresUnavailable(failure)).toBe(true);
    await snap.close();
    expect(await store.get('x')).toBe('1');
    const again = store.snapshot();
    expect(await again.get('x')).toBe('1');
    await again.close();
    await store.close();
  });
});
