/**
 * `ledgerd migrate --data-dir DIR`: brings a stopped book written by an older ledgerd to
 * the store layout this one reads (src/book/migrate-layout.ts). Like restore, the new
 * book is built beside the old one (`DIR/book.migrate`), verified, and only then put in
 * place; the old book is kept as `DIR/book.layout-1`. A crash or a refusal before that
 * leaves the old book as it was, for the old ledgerd to serve.
 * A book already in this layout has nothing to do (exit 0). On PostgreSQL there is never
 * anything to do: books there were introduced with layout 2.
 */
import { existsSync } from 'node:fs';
import { AssertionFailure } from '../src/assert.js';
import { MigrationRefused, type MigrationReport, layoutOf, migrateLayout1 } from '../src/book/migrate-layout.js';
import { storeLayout } from '../src/model/keys.js';
import { type BookBuild, migratedFromDir } from './book-place.js';
import { bookIdentity, placeOf } from './book.js';
import { bookPaths } from './data-dir.js';
import type { StoreConfig } from './config.js';
import { StartupFailure, exitCodes } from './failures.js';
import { type Progress, countingReads } from './progress.js';

export type MigrateOutcome = { readonly migrated: false; readonly layout: string } | { readonly migrated: true; readonly report: MigrationReport; readonly keptIn: string };

/** What the migration does after each batch it writes: nothing, unless a test stops it there to crash it (LEDGERD_TEST_MIGRATE_PAUSE). */
export type AfterBatch = () => Promise<void>;

/** `progress`: counts the entries read from the old book. */
export async function migrateBook(dataDir: string, storeConfig: StoreConfig, afterBatch?: AfterBatch, progress?: Progress): Promise<MigrateOutcome> {
  const place = placeOf(dataDir, storeConfig);
  if (!(await place.exists())) throw new StartupFailure(`${place.name} holds no book`, exitCodes.dataDir);
  const old = await place.openToRead();
  const keptIn = migratedFromDir(bookPaths(dataDir).book);
  let built: { readonly building: BookBuild; readonly report: MigrationReport };
  try {
    const layout = await layoutOf(old);
    if (layout === storeLayout) return { migrated: false, layout };
    if (layout !== '1') throw new StartupFailure(`${place.name} holds a book in store layout ${layout}, which this ledgerd neither reads nor migrates (it reads ${storeLayout})`, exitCodes.dataDir);
    if (storeConfig.kind !== 'leveldb') throw new StartupFailure(`${place.name} holds a layout-1 book, which no ledgerd writes on PostgreSQL`, exitCodes.damaged);
    if (existsSync(keptIn)) throw new StartupFailure(`${keptIn} exists (the book an earlier migration replaced): move it away first`, exitCodes.dataDir);
    const building = await place.build('migrate');
    try {
      built = { building, report: await migrateLayout1(progress === undefined ? old : countingReads(old, progress), building.store, afterBatch) };
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
  return { migrated: true, report: built.report, keptIn };
}
