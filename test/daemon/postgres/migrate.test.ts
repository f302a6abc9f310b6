/**
 * `ledgerd migrate` on PostgreSQL (issue 10): books there began in store layout 2, so there
 * is never anything to migrate, and the command says so without touching the book.
 */
import { expect, it } from 'vitest';
import { addConfig, daemonsOnPostgres, ledgerdRun, postgresStore, useTempDirs } from '../support.js';

daemonsOnPostgres();
const newDir = useTempDirs();

it('has nothing to migrate in a book on PostgreSQL', async () => {
  const dir = newDir();
  const store = await postgresStore();
  addConfig(dir, { store: { kind: 'postgres', url: store.url, durability: store.durability } });
  expect((await ledgerdRun(['init', '--data-dir', dir])).code).toBe(0);
  const migrated = await ledgerdRun(['migrate', '--data-dir', dir]);
  expect(migrated.code).toBe(0);
  expect(migrated.stdout).toMatch(/the book is in store layout 3 already: nothing to do/);
  expect((await ledgerdRun(['check', '--data-dir', dir])).code).toBe(0);
});
