/**
 * The store matrix: tests that run against each store behind the port. PostgreSQL is a
 * private cluster per test file (postgres-cluster.ts), each store a table of its own in
 * it (or a database of its own, for daemons: the lease is per database).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { LevelStore } from '../../src/store/level.js';
import { PgStore, type PgConnection } from '../../src/store/postgres.js';
import type { Store } from '../../src/store/port.js';
import { type PostgresCluster, startPostgresCluster } from './postgres-cluster.js';
import { clusterUrl, createBookDatabase } from './pg-books.js';

export { clusterUrl, createBookDatabase };

export const storeKinds = ['leveldb', 'postgres'] as const;
export type StoreKind = (typeof storeKinds)[number];

/** Snapshot connections of a test store. */
const testPoolSize = 4;


export interface StoreMatrix {
  readonly cluster: () => PostgresCluster;
  /** A fresh, empty store of `kind` (removed after the file's tests). */
  open(kind: StoreKind): Promise<Store>;
  /** Reopens a store `open` made (after closing it), as a restarted process would. */
  reopen(kind: StoreKind, store: Store): Promise<Store>;
  /** A fresh database on the cluster, its schema prepared: what a daemon is pointed at. */
  database(): Promise<PgConnection>;
}

/**
 * Stores for one test file. The cluster runs without fsync: these tests check what the
 * store does (order, atomic batches, snapshots, client crashes), not the disk's
 * durability, which is PostgreSQL's own and the failover test's concern.
 */
export function useStores(options: { durable?: boolean } = {}): StoreMatrix {
  let cluster: PostgresCluster | null = null;
  const dirs: string[] = [];
  const where = new Map<Store, string>();
  let tables = 0;
  let databases = 0;
  beforeAll(async () => {
    cluster = await startPostgresCluster({ settings: options.durable ? {} : { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' } });
  });
  afterAll(async () => {
    await cluster?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const connection = (database?: string): PgConnection => ({ url: clusterUrl(cluster!, database), poolSize: testPoolSize });
  return {
    cluster: () => cluster!,
    async open(kind) {
      if (kind === 'leveldb') {
        const dir = mkdtempSync(join(tmpdir(), 'ledger-store-'));
        dirs.push(dir);
        const store = await LevelStore.open(dir);
        where.set(store, dir);
        return store;
      }
      const table = `book_${++tables}`;
      const store = await PgStore.open({ connection: connection(), table, create: true });
      where.set(store, table);
      return store;
    },
    async reopen(kind, store) {
      const place = where.get(store)!;
      const reopened = kind === 'leveldb' ? await LevelStore.open(place) : await PgStore.open({ connection: connection(), table: place });
      where.set(reopened, place);
      return reopened;
    },
    async database() {
      const name = `book_db_${++databases}`;
      await createBookDatabase(cluster!, name);
      return connection(name);
    },
  };
}
