/**
 * Where the book is kept (CONTRACT 1 `store`): `DIR/book` on LevelDB, or the table
 * `ledgerd_kv` in a PostgreSQL database. Either way a new book (init, restore) is built
 * aside and put in place in one step (a directory rename; a table rename in one
 * transaction), so a failure at any instant leaves a whole book or none.
 */
import { existsSync } from 'node:fs';
import { open, readFile, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { LevelStore, type LevelTuning } from '../src/store/level.js';
import { leaseTimings, openLeasedStore } from '../src/store/postgres-lease.js';
import { PgStore, bookTable, dropBookTable, holdClient, missingServingRights, pgPool, prepareSchema, tableExists } from '../src/store/postgres.js';
import type { Store } from '../src/store/port.js';
import type { StoreConfig } from './config.js';
import { StartupFailure, dataDirFailure, exitCodes } from './failures.js';
import { lockServeDir } from './serve-lock.js';

export class BookExists extends Error {
  override name = 'BookExists';
}

export interface BookBuild {
  readonly store: Store;
  /** Closes the built book and puts it in place, bound to the data dir's book identity; BookExists if one appeared meanwhile. */
  place(identity: string): Promise<void>;
  /** Closes and removes the built book. */
  discard(): Promise<void>;
}

export interface BookPlace {
  /** For messages: the data dir, or the database without its credentials. */
  readonly name: string;
  exists(): Promise<boolean>;
  /** An empty book to build in, aside from the real one ('migrate': LevelDB only; placing it keeps the book it replaces, migratedFromDir). */
  build(purpose: 'init' | 'restore' | 'migrate'): Promise<BookBuild>;
  /** The book, to read (check); nothing decides through it. */
  openToRead(): Promise<Store>;
}

export function bookPlace(dataDir: string, bookDir: string, store: StoreConfig): BookPlace {
  return store.kind === 'leveldb' ? levelPlace(dataDir, bookDir, store) : postgresPlace(store);
}

/** Where `ledgerd migrate` keeps the layout-1 book it replaced (LevelDB), for the operator to remove once the migrated one serves. */
export const migratedFromDir = (bookDir: string): string => `${bookDir}.layout-1`;
const migratingDir = (bookDir: string): string => `${bookDir}.migrate`;

/** Makes a rename in `dir` durable. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * A migrated book is put in place by two renames (the old book aside, then the new one
 * in): a crash between them leaves no book but both of those. The migrated one was
 * closed and verified before the first rename, so the swap is finished. Every way to
 * the book on LevelDB passes here first, so `serve` never makes a fresh book there.
 */
async function finishMigrationSwap(bookDir: string): Promise<void> {
  if (existsSync(bookDir) || !existsSync(migratedFromDir(bookDir)) || !existsSync(migratingDir(bookDir))) return;
  await rename(migratingDir(bookDir), bookDir);
  await syncDir(dirname(bookDir));
}

/**
 * Why a LevelDB book that would not open is damaged, when it is: its CURRENT file or the
 * manifest CURRENT names is gone, or LevelDB reports corruption. Null for anything else
 * (a directory this user cannot read, a lock), which is the data dir's failure.
 */
async function levelDamage(bookDir: string, error: unknown): Promise<string | null> {
  let names: string[];
  let current: string;
  try {
    names = await readdir(bookDir);
    if (!names.includes('CURRENT')) return 'its CURRENT file (naming the manifest of its tables) is missing';
    current = (await readFile(join(bookDir, 'CURRENT'), 'utf8')).trim();
  } catch {
    return null;
  }
  if (!/^MANIFEST-[0-9]+$/.test(current)) return 'its CURRENT file does not name a manifest';
  if (!names.includes(current)) return `its manifest ${current} (the list of its tables, named by CURRENT) is missing`;
  const cause = (error as { cause?: { message?: unknown } }).cause?.message;
  return typeof cause === 'string' && cause.startsWith('Corruption:') ? `LevelDB reports ${cause}` : null;
}

function levelPlace(dataDir: string, bookDir: string, { openFilesMax, writeBufferBytes }: LevelTuning): BookPlace {
  const tuning: LevelTuning = { openFilesMax, writeBufferBytes };
  const openBook = async () => {
    try {
      await finishMigrationSwap(bookDir);
      return await LevelStore.open(bookDir, { createIfMissing: false, ...tuning });
    } catch (error) {
      const damage = await levelDamage(bookDir, error);
      if (damage !== null) throw new StartupFailure(`the book in ${bookDir} is damaged: ${damage}; it cannot be opened or checked: restore it from a backup (ledgerd restore)`, exitCodes.damaged);
      throw dataDirFailure(dataDir, error);
    }
  };
  return {
    name: dataDir,
    async exists() {
      await finishMigrationSwap(bookDir);
      return existsSync(bookDir);
    },
    async build(purpose) {
      const building = `${bookDir}.${purpose}`;
      await rm(building, { recursive: true, force: true });
      const store = await LevelStore.open(building, tuning);
      return {
        store,
        async place() {
          await store.close();
          if (purpose === 'migrate') {
            await rename(bookDir, migratedFromDir(bookDir));
            await syncDir(dirname(bookDir));
          }
          await rename(building, bookDir);
          await syncDir(dirname(bookDir));
        },
        async discard() {
          await store.close();
          await rm(building, { recursive: true, force: true });
        },
      };
    },
    openToRead: openBook,
  };
}

/** The database named without user or password (URLs carry them). */
export function databaseName(url: string): string {
  try {
    const u = new URL(url);
    return `postgres://${u.host}${u.pathname}`;
  } catch {
    return 'the configured PostgreSQL database';
  }
}

type PostgresStoreConfig = Extract<StoreConfig, { kind: 'postgres' }>;

/** The database cannot be reached or used: a start-up failure naming it (never its URL's password). */
export function databaseFailure(config: PostgresStoreConfig, error: unknown): StartupFailure {
  return new StartupFailure(`cannot use the book's database ${databaseName(config.url)}: ${(error as Error).message}`, exitCodes.dataDir);
}

async function withPool<T>(config: PostgresStoreConfig, use: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = pgPool(config, 1);
  try {
    return await use(pool);
  } catch (error) {
    if (error instanceof BookExists || error instanceof StartupFailure) throw error;
    throw databaseFailure(config, error);
  } finally {
    await pool.end();
  }
}

function postgresPlace(config: PostgresStoreConfig): BookPlace {
  return {
    name: databaseName(config.url),
    exists: () => withPool(config, (pool) => tableExists(pool, bookTable)),
    async build(purpose) {
      // Each builder its own table: two inits racing on one database never write into one table.
      const table = `${bookTable}_${purpose}_${randomBytes(6).toString('hex')}`;
      await withPool(config, prepareSchema);
      const store = await PgStore.open({ connection: config, table, create: true }).catch((error: unknown) => {
        throw databaseFailure(config, error);
      });
      return {
        store,
        async place(identity) {
          await store.close();
          await withPool(config, async (pool) => {
            const held = await holdClient(pool);
            const { client } = held;
            try {
              await client.query('BEGIN');
              await client.query(`ALTER TABLE ${table} RENAME TO ${bookTable}`);
              await client.query('UPDATE ledgerd_lease SET book = $1 WHERE id = 1', [identity]);
              await client.query('COMMIT');
            } catch (error) {
              await client.query('ROLLBACK').catch(() => {});
              if ((error as { code?: string }).code === '42P07') throw new BookExists(`${databaseName(config.url)} already holds a book`);
              throw error;
            } finally {
              held.release();
            }
          }).catch(async (error: unknown) => {
            await withPool(config, (pool) => dropBookTable(pool, table)).catch(() => {});
            throw error;
          });
        },
        async discard() {
          await store.close();
          await withPool(config, (pool) => dropBookTable(pool, table));
        },
      };
    },
    async openToRead() {
      return PgStore.open({ connection: config }).catch((error: unknown) => {
        throw databaseFailure(config, error);
      });
    },
  };
}

export interface ServedBook {
  readonly store: Store;
  /** Closes the store (if still open) and gives up the lease. */
  release(): Promise<void>;
}

export interface ServeEvents {
  /** Another daemon serves the book: this one is the standby, waiting for its lease to lapse. */
  readonly onWaiting: (holder: string, expiresAtMs: number) => void;
  /** The database did not answer while this daemon waits for the lease: it waits on (told once per run of failures). */
  readonly onWaitFailure: (error: Error) => void;
  /** This daemon lost the book to another (a stall past its lease): it must stop deciding. */
  readonly onLost: () => void;
  readonly onConnectionError: (error: Error) => void;
  /** Writes have been stuck for longer than the lease, so the lease is no longer renewed (true), or they work again (false). */
  readonly onRenewalHeld: (held: boolean) => void;
  /** The database may lose commits it acknowledged (the settings named), or may not any longer (null): read at start and every `durabilityCheckMs`. */
  readonly onDurability: (risk: string | null) => void;
}

/**
 * Opens the book for `serve`. On PostgreSQL: checks that the data dir's keys are this
 * book's, then waits for the lease (a standby waits here), then opens the store with
 * every write fenced by it. Resolves null when `signal` aborts the wait.
 */
export async function openServedBook(dataDir: string, bookDir: string, store: StoreConfig, identity: string, events: ServeEvents, signal: AbortSignal): Promise<ServedBook | null> {
  if (store.kind === 'leveldb') {
    const opened = await levelPlace(dataDir, bookDir, store).openToRead();
    return { store: opened, release: async () => {} };
  }
  const pool = pgPool(store, 1, events.onConnectionError);
  try {
    await prepareSchema(pool);
    if (await tableExists(pool, bookTable)) {
      const missing = await missingServingRights(pool);
      if (missing.length > 0) {
        throw new StartupFailure(
          `the role ledgerd connects to ${databaseName(store.url)} as lacks ${missing.join(', ')}: grant them (docs/operations.md, "PostgreSQL roles")`,
          exitCodes.dataDir,
        );
      }
    }
    const bound = ((await pool.query('SELECT book FROM ledgerd_lease WHERE id = 1')).rows[0] as { book: string }).book;
    if (bound !== identity) {
      throw new StartupFailure(
        `the data dir ${dataDir} is not this book's (its daemon.key differs from the one the book in ${databaseName(store.url)} was made with): give every ledgerd of one book a copy of the data dir that made it`,
        exitCodes.dataDir,
      );
    }
  } catch (error) {
    if (error instanceof StartupFailure) throw error;
    throw databaseFailure(store, error);
  } finally {
    await pool.end();
  }
  // No other process serves from this dir while this lock is held: a lease naming this host and dir is a dead predecessor's.
  const lock = await lockServeDir(dataDir);
  const holder = `${lock.place}/${process.pid}/${randomBytes(4).toString('hex')}`;
  const ownPlace = `${lock.place}/`;
  try {
    const leased = await openLeasedStore(store, holder, leaseTimings(store.leaseMs), {
      reclaimable: (current) => current.startsWith(ownPlace),
      onWaiting: (current) => events.onWaiting(current.holder, current.expiresAtMs),
      onWaitFailure: events.onWaitFailure,
      onLost: events.onLost,
      onRenewFailure: events.onConnectionError,
      onRenewalHeld: events.onRenewalHeld,
      // An acknowledged command must outlive a crash of the database: watched all the time, not at start alone.
      durability: { refuse: store.durability === 'refuse', checkMs: store.durabilityCheckMs, onChange: events.onDurability },
      onConnectionError: events.onConnectionError,
    }, signal);
    if (leased === null) {
      await lock.release();
      return null;
    }
    return {
      store: leased,
      release: async () => {
        await leased.close();
        await lock.release();
      },
    };
  } catch (error) {
    await lock.release();
    throw databaseFailure(store, error);
  }
}
