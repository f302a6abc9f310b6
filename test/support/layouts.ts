/**
 * Books of an earlier store layout made from one this ledgerd wrote, for a migration to be
 * tested on a book of any size and on either store: the inverse of a migration step, done
 * on the store's entries.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { expect } from 'vitest';
import { placeOf } from '../../daemon/book.js';
import type { StoreConfig } from '../../daemon/config.js';
import { migrateEntriesPerWrite } from '../../src/constants.js';
import { encodeLeafIndexedPosting } from '../../src/book/migrate-layout.js';
import { decodeIndexedPosting, encodeLeaf } from '../../src/model/codec.js';
import { keySpaces, keys, prefixEnd } from '../../src/model/keys.js';
import type { BatchOp, ReadView, Store } from '../../src/store/port.js';
import { ledgerd, ledgerdRun } from '../daemon/support.js';

/** Writes a layout-4 book's account index entries as layout 3 wrote them (the leaf and the reference) and marks it 3; the count rewritten. */
export async function asLayout3(store: Store): Promise<number> {
  const ops: BatchOp[] = [{ type: 'put', key: keys.layout, value: '3' }];
  for await (const [key, value] of store.entries({ gte: keySpaces.accountAsset, lt: prefixEnd(keySpaces.accountAsset), limit: Number.MAX_SAFE_INTEGER })) {
    const posting = decodeIndexedPosting(key, value);
    ops.push({ type: 'put', key, value: encodeLeafIndexedPosting(encodeLeaf(posting), posting.reference) });
  }
  await store.write(ops, true);
  return ops.length - 1;
}

/** SHA-256 over every key and value of a store, in key order. */
export async function storeDigest(store: ReadView): Promise<string> {
  const hash = createHash('sha256');
  for await (const [key, value] of store.entries({ limit: Number.MAX_SAFE_INTEGER })) hash.update(JSON.stringify([key, value]));
  return hash.digest('hex');
}

/** How many account index entries are in layout 4's compact form, and how many in layout 3's. */
export async function indexForms(store: ReadView): Promise<{ compact: number; leaf: number }> {
  const forms = { compact: 0, leaf: 0 };
  for await (const [, value] of store.entries({ gte: keySpaces.accountAsset, lt: prefixEnd(keySpaces.accountAsset), limit: Number.MAX_SAFE_INTEGER })) {
    if (value.startsWith('[')) forms.compact++;
    else forms.leaf++;
  }
  return forms;
}

/** `ledgerd migrate` on `dir`, stopped after its `writes`-th write (LEDGERD_TEST_MIGRATE_PAUSE); resolves once paused, with what kills it (SIGKILL: a crash at that point). */
export async function pausedMigrate(dir: string, writes: number): Promise<() => Promise<void>> {
  const child = spawn(process.execPath, [ledgerd, 'migrate', '--data-dir', dir], { env: { ...process.env, LEDGERD_TEST_MIGRATE_PAUSE: String(writes) }, stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on('line', (line) => line.includes('paused') && resolve());
    void exited.then(() => reject(new Error('migrate ended before its pause')));
  });
  return async () => {
    child.kill('SIGKILL');
    await exited;
  };
}

/**
 * `ledgerd migrate` 3 → 4 killed mid-move and run again, on the book in `dir` (written by
 * writeBook with `postings` > migrateEntriesPerWrite account index entries, in `store`): the
 * book stays marked and served by no ledgerd, holds both forms while moving, and ends byte
 * for byte the book this ledgerd wrote, checked clean.
 */
export async function migratedFromLayout3AfterAKill(dir: string, store: StoreConfig, postings: number): Promise<void> {
  const place = placeOf(dir, store);
  const withStore = async <T>(use: (s: Store) => Promise<T>): Promise<T> => {
    const opened = await place.openToRead();
    try {
      return await use(opened);
    } finally {
      await opened.close();
    }
  };
  const written = await withStore(storeDigest);
  expect(await withStore(asLayout3)).toBe(postings);
  expect((await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0'])).stderr).toMatch(/store layout 3; this ledgerd reads layout 4: run ledgerd migrate/);

  // Killed after its second write (the mark, then the first page): part of the index is moved.
  await (await pausedMigrate(dir, 2))();
  expect(await withStore(async (s) => [await s.get(keys.layout), await indexForms(s)])).toEqual(['3-4', { compact: migrateEntriesPerWrite, leaf: postings - migrateEntriesPerWrite }]);
  expect((await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0'])).stderr).toMatch(/store layout 3-4; this ledgerd reads layout 4: run ledgerd migrate/);

  const migrated = await ledgerdRun(['migrate', '--data-dir', dir]);
  expect(migrated.code, migrated.stderr).toBe(0);
  expect(migrated.stdout).toMatch(new RegExp(`book migrated from store layout 3-4 to 4 in place: ${postings - migrateEntriesPerWrite} account index entries made compact`));
  expect(await withStore(storeDigest)).toBe(written);
  const checked = await ledgerdRun(['check', '--data-dir', dir]);
  expect(checked.code, checked.stdout + checked.stderr).toBe(0);
}
