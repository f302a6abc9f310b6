/**
 * The benches' books on each store: LevelDB in a temp dir, or PostgreSQL in a private
 * durable cluster (test/support/postgres-cluster.ts: fsync and synchronous_commit on), a
 * database per book, opened as ledgerd opens it (under the lease, every write fenced).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PostgresCluster, startPostgresCluster } from '../test/support/postgres-cluster.js';
import { LevelStore } from '../src/store/level.js';
import { leaseTimings, openLeasedStore } from '../src/store/postgres-lease.js';
import { type PgConnection, bookTable, createBookTable, pgPool } from '../src/store/postgres.js';
import { createBookDatabase } from '../test/support/pg-books.js';
import type { Store } from '../src/store/port.js';

export const benchStoreKinds = ['leveldb', 'postgres'] as const;
export type BenchStoreKind = (typeof benchStoreKinds)[number];

/** `--stores leveldb,postgres`: the stores a bench runs on, in that order. */
export function parseStores(text: string): BenchStoreKind[] {
  const kinds = text.split(',').map((s) => s.trim());
  for (const kind of kinds) if (!(benchStoreKinds as readonly string[]).includes(kind)) throw new Error(`--stores: unknown store ${kind} (leveldb, postgres)`);
  return kinds as BenchStoreKind[];
}

/** Snapshot connections of a bench book on PostgreSQL (the daemon's default). */
const benchPoolSize = 8;
/** The lease of a bench's decider (ledgerd's default). */
const benchLeaseMs = 10_000;

export class BenchStores {
  private cluster: PostgresCluster | null = null;
  private databases = 0;

  /** A fresh, empty database with the book's schema: what a ledgerd on PostgreSQL is pointed at. */
  async database(): Promise<PgConnection> {
    this.cluster ??= await startPostgresCluster({ settings: { max_connections: '200' } });
    return { url: await createBookDatabase(this.cluster, `bench_${++this.databases}`), poolSize: benchPoolSize };
  }

  /** An empty book's store, and how to remove it once closed; on LevelDB its directory (its LOG counts what it flushed and compacted). */
  async open(kind: BenchStoreKind): Promise<{ store: Store; remove: () => void; levelDir?: string }> {
    if (kind === 'leveldb') {
      const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-'));
      return { store: await LevelStore.open(dir), remove: () => rmSync(dir, { recursive: true, force: true }), levelDir: dir };
    }
    const connection = await this.database();
    const pool = pgPool(connection, 1);
    try {
      await createBookTable(pool, bookTable);
    } finally {
      await pool.end();
    }
    const store = await openLeasedStore(connection, 'bench', leaseTimings(benchLeaseMs));
    return { store: store!, remove: () => {} };
  }

  get leaseMs(): number {
    return benchLeaseMs;
  }

  async stop(): Promise<void> {
    await this.cluster?.stop();
  }
}
