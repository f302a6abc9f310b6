/**
 * `ledgerd migrate` on PostgreSQL (issue 10): books there began in store layout 2, so a
 * book of this ledgerd's layout has nothing to migrate and the command says so without
 * touching it; a layout-3 book has its account index made compact in place, a layout-4
 * book each decided operation stored once, in its event chunk, and a layout-5 book keeps its
 * journal's chunks of leaves beside the compact ones written after (issue 28).
 */
import { expect, it } from 'vitest';
import { addConfig, daemonsOnPostgres, ledgerdRun, postgresStore, useTempDirs, writeBook } from '../support.js';
import { migratedFromLayout3AfterAKill, migratedFromLayout4AfterAKill, migratedFromLayout5, writeBookWithEvents } from '../../support/layouts.js';

daemonsOnPostgres();
const newDir = useTempDirs();

it('has nothing to migrate in a book on PostgreSQL', async () => {
  const dir = newDir();
  const store = await postgresStore();
  addConfig(dir, { store: { kind: 'postgres', url: store.url, durability: store.durability } });
  expect((await ledgerdRun(['init', '--data-dir', dir])).code).toBe(0);
  const migrated = await ledgerdRun(['migrate', '--data-dir', dir]);
  expect(migrated.code).toBe(0);
  expect(migrated.stdout).toMatch(/the book is in store layout 7 already: nothing to do/);
  expect((await ledgerdRun(['check', '--data-dir', dir])).code).toBe(0);
});

it('makes the account index of a layout-3 book compact in place, resumes after a kill, and ends with the book this ledgerd writes', async () => {
  const dir = newDir();
  const store = await postgresStore();
  await writeBook(dir, Object.fromEntries(Array.from({ length: 700 }, (_, i) => [`c${i}`, 10n])), store);
  await migratedFromLayout3AfterAKill(dir, store, 1400);
}, 120_000);

it('stores each decided operation of a layout-4 book once, in its event chunk, in place; resumes after a kill, and ends with the book this ledgerd writes', async () => {
  const dir = newDir();
  const store = await postgresStore();
  await writeBookWithEvents(dir, store);
  await migratedFromLayout4AfterAKill(dir, store);
}, 120_000);

it('takes a layout-5 book to layout 7 by its mark alone; its chunks of leaves read as they stand beside the compact chunks written after', async () => {
  const dir = newDir();
  const store = await postgresStore();
  await writeBookWithEvents(dir, store);
  await migratedFromLayout5(dir, store);
}, 120_000);
