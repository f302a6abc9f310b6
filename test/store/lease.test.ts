/**
 * The lease on one PostgreSQL book: one holder at a time, a standby that waits, and
 * fenced writes: once another daemon holds the lease, the old holder's writes commit
 * nothing, even one that was about to be sent when it stalled.
 */
import { describe, expect, it } from 'vitest';
import { PgLease, leaseTimings } from '../../src/store/postgres-lease.js';
import { LeaseLost, PgStore, pgPool } from '../../src/store/postgres.js';
import { useStores } from '../support/stores.js';

const stores = useStores();
const timings = leaseTimings(60_000);

describe('the PostgreSQL lease', () => {
  it('lets one daemon write at a time; a lapsed holder writes nothing once another took over', async () => {
    const connection = await stores.database();
    const poolA = pgPool(connection, 1);
    const poolB = pgPool(connection, 1);
    const a = (await PgLease.acquire(poolA, 'daemon-a', timings))!;
    let fencedA = 0;
    const storeA = await PgStore.open({ connection, create: true, fence: () => a.fence, onFenced: () => fencedA++ });
    await storeA.write([{ type: 'put', key: 'k', value: 'from a' }], true);

    // B waits while A holds the lease.
    const waiting: string[] = [];
    const give = new AbortController();
    const tried = PgLease.acquire(poolB, 'daemon-b', { ...timings, pollEveryMs: 20 }, { onWaiting: (h) => waiting.push(h.holder) }, give.signal);
    await new Promise((r) => setTimeout(r, 200));
    give.abort();
    expect(await tried).toBeNull();
    expect(waiting).toEqual(['daemon-a']);

    // A stalls past its lease (made to lapse here); B takes over with a higher epoch.
    await poolB.query("UPDATE ledgerd_lease SET expires_at = clock_timestamp() - interval '1 second'");
    const b = (await PgLease.acquire(poolB, 'daemon-b', timings))!;
    expect(b.epoch).toBe(a.epoch + 1n);
    const storeB = await PgStore.open({ connection, fence: () => b.fence });

    // A wakes: its write is refused whole and commits nothing; its renewal finds the lease gone.
    await expect(storeA.write([{ type: 'put', key: 'k', value: 'stale' }, { type: 'put', key: 'k2', value: 'stale' }], true)).rejects.toBeInstanceOf(LeaseLost);
    expect(fencedA).toBe(1);
    expect(await storeB.getMany(['k', 'k2'])).toEqual(['from a', undefined]);
    expect(await a.renew()).toBe(false);
    await storeB.write([{ type: 'put', key: 'k', value: 'from b' }], true);
    expect(await storeB.get('k')).toBe('from b');

    // A graceful stop hands the lease on at once.
    await b.release();
    const c = (await PgLease.acquire(poolA, 'daemon-c', timings))!;
    expect(c.epoch).toBe(b.epoch + 1n);
    await expect(storeB.write([{ type: 'put', key: 'k', value: 'after release' }], true)).rejects.toBeInstanceOf(LeaseLost);
    await c.release();
    await Promise.all([storeA.close(), storeB.close(), poolA.end(), poolB.end()]);
  });

  it('tells the holder when a renewal finds the lease taken', async () => {
    const connection = await stores.database();
    const pool = pgPool(connection, 1);
    const lost: string[] = [];
    const a = (await PgLease.acquire(pool, 'daemon-a', { leaseMs: 60_000, renewEveryMs: 20, pollEveryMs: 20 }, { onLost: () => lost.push('a') }))!;
    await pool.query("UPDATE ledgerd_lease SET holder = 'daemon-b', epoch = epoch + 1");
    for (let i = 0; i < 100 && lost.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(lost).toEqual(['a']);
    await a.release();
    await pool.end();
  });
});
