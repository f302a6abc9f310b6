/** Books' databases on a test cluster (no test runner here: benches use it too). */
import pg from 'pg';
import { prepareSchema } from '../../src/store/postgres.js';
import type { PostgresCluster } from './postgres-cluster.js';

export function clusterUrl(cluster: PostgresCluster, database: string = cluster.database): string {
  return `postgres://${cluster.user}:${encodeURIComponent(cluster.password)}@${cluster.host}:${cluster.port}/${database}`;
}

/** A new database on `cluster` with a book's schema prepared (the lease row): what a ledgerd is pointed at. Its URL. */
export async function createBookDatabase(cluster: PostgresCluster, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: clusterUrl(cluster) });
  admin.on('error', () => {});
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = clusterUrl(cluster, name);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on('error', () => {});
  try {
    await prepareSchema(pool);
  } finally {
    await pool.end();
  }
  return url;
}

/** Runs `use` on a client of its own connected to `url` (an administrator's session in a test), closed after. */
export async function withPgClient<T>(url: string, use: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {});
  await c.connect();
  try {
    return await use(c);
  } finally {
    await c.end();
  }
}
