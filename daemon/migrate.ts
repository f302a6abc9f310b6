/**
 * `ledgerd migrate --data-dir DIR`: brings a stopped book written by an older ledgerd to
 * the store layout this one reads. From layout 1 (src/book/migrate-layout.ts), like
 * restore, the new book is built beside the old one (`DIR/book.migrate`), verified, taken
 * on to this layout, and only then put in place; the old book is kept as `DIR/book.layout-1`.
 * A crash or a refusal before that leaves the old book as it was, for the old ledgerd to
 * serve. From layout 2 (LevelDB or PostgreSQL) the held-grant index moves, in place
 * (src/book/migrate-grant-index.ts), and from layout 3 the account index is made compact, in
 * place (src/book/migrate-compact-index.ts), and from layout 4 each decided operation is
 * stored once, in its event chunk (src/book/migrate-operation-pointers.ts), in place: a crash
 * leaves the book marked, served by no ledgerd, and the next run resumes; from layouts 5
 * and 6 the mark alone moves, the older records kept as they stand (src/book/migrate-mark-only.ts).
 * A book already in this layout has nothing to do (exit 0).
 */
import { existsSync } from 'node:fs';
import { AssertionFailure } from '../src/assert.js';
import { MigrationRefused, type MigrationReport, layoutOf, migrateLayout1 } from '../src/book/migrate-layout.js';
import { type GrantIndexReport, layoutBeforeHeldOver, layoutMovingHeldOver, migrateLayout2 } from '../src/book/migrate-grant-index.js';
import { type CompactIndexReport, layoutBeforeCompactIndex, layoutMovingCompactIndex, migrateLayout3 } from '../src/book/migrate-compact-index.js';
import { type OperationPointerReport, layoutBeforeOperationPointers, layoutMovingOperationPointers, migrateLayout4 } from '../src/book/migrate-operation-pointers.js';
import { layoutsMovedByMark, migrateByMark } from '../src/book/migrate-mark-only.js';
import { keySpaces, storeLayout } from '../src/model/keys.js';
import { pagedEntries } from '../src/store/paged.js';
import type { ReadView, Store } from '../src/store/port.js';
import { type BookBuild, migratedFromDir } from './book-place.js';
import { bookIdentity, placeOf } from './book.js';
import { bookPaths } from './data-dir.js';
import type { StoreConfig } from './config.js';
import { migrateCountPageEntries } from './constants.js';
import { StartupFailure, exitCodes } from './failures.js';
import { type Progress, countingReads } from './progress.js';

export type MigrateOutcome =
  | { readonly migrated: false; readonly layout: string }
  | {
      readonly migrated: true;
      readonly from: string;
      readonly report: MigrationReport | null;
      /** Null for a book already past layout 2. */
      readonly grants: GrantIndexReport | null;
      /** Null for a book already past layout 3. */
      readonly index: CompactIndexReport | null;
      /** Null for a book already past layout 4. */
      readonly operations: OperationPointerReport | null;
      readonly keptIn: string | null;
    };

/** What the migration does after each batch it writes: nothing, unless a test stops it there to crash it (LEDGERD_TEST_MIGRATE_PAUSE). */
export type AfterBatch = () => Promise<void>;

/** `progress`: counts the entries read from the old book. */
export async function migrateBook(dataDir: string, storeConfig: StoreConfig, afterBatch?: AfterBatch, progress?: Progress): Promise<MigrateOutcome> {
  const place = placeOf(dataDir, storeConfig);
  if (!(await place.exists())) throw new StartupFailure(`${place.name} holds no book`, exitCodes.dataDir);
  const old = await place.openToRead();
  const keptIn = migratedFromDir(bookPaths(dataDir).book);
  let built: { readonly building: BookBuild; readonly report: MigrationReport; readonly grants: GrantIndexReport; readonly index: CompactIndexReport; readonly operations: OperationPointerReport };
  // The in-place steps from layout 4 on, which every in-place start ends with: each decided operation stored once, then the mark.
  const fromLayout4 = async (store: Store): Promise<OperationPointerReport> => {
    const operations = await refusedAsFailure(migrateLayout4(store, afterBatch));
    await refusedAsFailure(migrateByMark(store));
    return operations;
  };
  try {
    const layout = await layoutOf(old);
    if (layout === storeLayout) return { migrated: false, layout };
    if (layout === layoutBeforeHeldOver || layout === layoutMovingHeldOver) {
      const store = await inPlaceProgress(old, [[keySpaces.heldGrant, 1], [keySpaces.revokedHeld, 1], [keySpaces.accountAsset, 1], ...operationPointerReads], progress);
      const grants = await refusedAsFailure(migrateLayout2(store, afterBatch));
      const index = await refusedAsFailure(migrateLayout3(store, afterBatch));
      const operations = await fromLayout4(store);
      return { migrated: true, from: layout, report: null, grants, index, operations, keptIn: null };
    }
    if (layout === layoutBeforeCompactIndex || layout === layoutMovingCompactIndex) {
      const store = await inPlaceProgress(old, [[keySpaces.accountAsset, 1], ...operationPointerReads], progress);
      const index = await refusedAsFailure(migrateLayout3(store, afterBatch));
      const operations = await fromLayout4(store);
      return { migrated: true, from: layout, report: null, grants: null, index, operations, keptIn: null };
    }
    if (layout === layoutBeforeOperationPointers || layout === layoutMovingOperationPointers) {
      const store = await inPlaceProgress(old, operationPointerReads, progress);
      const operations = await fromLayout4(store);
      return { migrated: true, from: layout, report: null, grants: null, index: null, operations, keptIn: null };
    }
    if (layoutsMovedByMark.includes(layout)) {
      await refusedAsFailure(migrateByMark(old));
      return { migrated: true, from: layout, report: null, grants: null, index: null, operations: null, keptIn: null };
    }
    if (layout !== '1') throw new StartupFailure(`${place.name} holds a book in store layout ${layout}, which this ledgerd neither reads nor migrates (it reads ${storeLayout})`, exitCodes.dataDir);
    if (storeConfig.kind !== 'leveldb') throw new StartupFailure(`${place.name} holds a layout-1 book, which no ledgerd writes on PostgreSQL`, exitCodes.damaged);
    if (existsSync(keptIn)) throw new StartupFailure(`${keptIn} exists (the book an earlier migration replaced): move it away first`, exitCodes.dataDir);
    if (progress !== undefined) {
      const reads = await migrationReads(old, (key) => (key.startsWith(keySpaces.accountAsset) ? 2 : 1));
      progress.measure((read) => (reads === 0 ? null : read / reads));
    }
    const building = await place.build('migrate');
    try {
      const report = await migrateLayout1(progress === undefined ? old : countingReads(old, progress), building.store, afterBatch);
      const grants = await migrateLayout2(building.store, afterBatch);
      const index = await migrateLayout3(building.store, afterBatch);
      const operations = await migrateLayout4(building.store, afterBatch);
      await migrateByMark(building.store);
      built = { building, report, grants, index, operations };
    } catch (error) {
      await building.discard();
      if (error instanceof MigrationRefused || error instanceof AssertionFailure) {
        throw new StartupFailure(`the book was not migrated (it is left as it was): ${error.message}`, exitCodes.damaged);
      }
      throw error;
    }
  } finally {
    await old.close();
  }
  // Verified and closed: now the old book goes aside and the new one in (book-place.ts).
  await built.building.place(await bookIdentity(dataDir));
  return { migrated: true, from: '1', report: built.report, grants: built.grants, index: built.index, operations: built.operations, keptIn };
}

/**
 * The entries a migration reads, for its time left, counted by one pass over the keys first,
 * which decodes and writes nothing: a small part of the migration's time (docs/operations.md).
 * `weigh` says how many times the migration reads an entry: the layout-1 rebuild reads each
 * once and its account index once more (the verification); a move in place reads the space it
 * moves (`prefix`) once.
 */
async function migrationReads(old: ReadView, weigh: (key: string) => number, prefix = ''): Promise<number> {
  let reads = 0;
  for await (const [key] of pagedEntries(old, prefix, migrateCountPageEntries)) reads += weigh(key);
  return reads;
}

/**
 * The reads of the 4 → 5 move: each event chunk once, and each operation about three times
 * (its record beside its chunk, then its record and its chunk again when verified).
 */
const operationPointerReads: readonly (readonly [string, number])[] = [[keySpaces.event, 1], [keySpaces.operation, 3]];

/** `old` with its reads counted toward the time left of moving `spaces` in place (each entry read `weight` times). */
async function inPlaceProgress(old: Store, spaces: readonly (readonly [string, number])[], progress: Progress | undefined): Promise<Store> {
  if (progress === undefined) return old;
  let reads = 0;
  for (const [space, weight] of spaces) reads += await migrationReads(old, () => weight, space);
  progress.measure((read) => (reads === 0 ? null : read / reads));
  return countingReads(old, progress);
}

/** An in-place move refused: the book stays marked for the next run (it is whole). */
async function refusedAsFailure<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof MigrationRefused || error instanceof AssertionFailure) throw new StartupFailure(`the book's index was not moved: ${error.message}`, exitCodes.damaged);
    throw error;
  }
}
