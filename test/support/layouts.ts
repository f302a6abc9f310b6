/**
 * Books of an earlier store layout made from one this ledgerd wrote, for a migration to be
 * tested on a book of any size and on either store: the inverse of a migration step, done
 * on the store's entries.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from 'vitest';
import { placeOf } from '../../daemon/book.js';
import type { StoreConfig } from '../../daemon/config.js';
import { migrateEntriesPerWrite } from '../../src/constants.js';
import { encodeLeafIndexedPosting } from '../../src/book/migrate-layout.js';
import { commandChunkTexts } from '../../src/book/command-chunks.js';
import { decodeHead, decodeIndexedPosting, decodeOperation, encodeLeaf, encodeOperation, encodeOperationJson, journalChunkLeaves, journalChunkMark } from '../../src/model/codec.js';
import { journalLeaves } from '../../src/queries/journal.js';
import { decodeOperationPointer, encodeEventChunk, eventChunkText, eventChunkTexts } from '../../src/model/event-chunk.js';
import { keySpaces, keys, parseSeqHex, prefixEnd } from '../../src/model/keys.js';
import type { BatchOp, ReadView, Store } from '../../src/store/port.js';
import { client, decided, ledgerd, ledgerdRun, startDaemon, writeBook } from '../daemon/support.js';

/**
 * Writes a layout-7 book's journal chunks as layouts 2-5 wrote them (the leaves, one per line),
 * and its event and intake chunks' operations as layouts 2-6 wrote them (operationsAsJson), and
 * marks it 5; returns how many journal chunks it rewrote.
 */
export async function asLayout5(store: Store): Promise<number> {
  await operationsAsJson(store);
  const ops: BatchOp[] = [{ type: 'put', key: keys.layout, value: '5' }];
  for await (const [key, value] of store.entries({ gte: keySpaces.journal, lt: prefixEnd(keySpaces.journal), limit: Number.MAX_SAFE_INTEGER })) {
    ops.push({ type: 'put', key, value: journalChunkLeaves(value, parseSeqHex(key.slice(keySpaces.journal.length))).join('\n') });
  }
  await store.write(ops, true);
  return ops.length - 1;
}

/** Rewrites the operation states of a book's event and intake chunks (`ev/`, `cmd/`) in layouts 2-6's form (encodeOperationJson, a JSON object each); returns how many chunks changed. */
export async function operationsAsJson(store: Store): Promise<number> {
  const ops: BatchOp[] = [];
  for (const space of [keySpaces.event, keySpaces.command]) {
    for await (const [key, value] of store.entries({ gte: space, lt: prefixEnd(space), limit: Number.MAX_SAFE_INTEGER })) {
      const rewritten = encodeEventChunk(commandChunkTexts(value).map((text) => encodeOperationJson(decodeOperation(text))));
      if (rewritten !== value) ops.push({ type: 'put', key, value: rewritten });
    }
  }
  await store.write(ops, true);
  return ops.length;
}

/**
 * Writes a layout-6 book as layout 4 wrote it: layout 5's records (asLayout5), the event chunks
 * and operations as layout 4 wrote them (each chunk a JSON list, each decided operation whole
 * under `op/`); marks it 4; the event chunks rewritten.
 */
export async function asLayout4(store: Store): Promise<number> {
  await asLayout5(store);
  const ops: BatchOp[] = [{ type: 'put', key: keys.layout, value: '4' }];
  let chunks = 0;
  for await (const [key, value] of store.entries({ gte: keySpaces.event, lt: prefixEnd(keySpaces.event), limit: Number.MAX_SAFE_INTEGER })) {
    ops.push({ type: 'put', key, value: `[${eventChunkTexts(value).join(',')}]` });
    chunks++;
  }
  for await (const [key, value] of store.entries({ gte: keySpaces.operation, lt: prefixEnd(keySpaces.operation), limit: Number.MAX_SAFE_INTEGER })) {
    const pointer = decodeOperationPointer(value)!;
    ops.push({ type: 'put', key, value: eventChunkText((await store.get(keys.eventChunk(pointer.chunk)))!, pointer.index) });
  }
  await store.write(ops, true);
  return chunks;
}

/** Writes a layout-6 book as layout 3 wrote it: layout 4's records (asLayout4), the account index entries as the leaf and the reference; marks it 3; the index entries rewritten. */
export async function asLayout3(store: Store): Promise<number> {
  await asLayout4(store);
  const ops: BatchOp[] = [{ type: 'put', key: keys.layout, value: '3' }];
  for await (const [key, value] of store.entries({ gte: keySpaces.accountAsset, lt: prefixEnd(keySpaces.accountAsset), limit: Number.MAX_SAFE_INTEGER })) {
    const posting = decodeIndexedPosting(key, value);
    ops.push({ type: 'put', key, value: encodeLeafIndexedPosting(encodeLeaf(posting), posting.reference) });
  }
  await store.write(ops, true);
  return ops.length - 1;
}

/**
 * SHA-256 over every key and value of a store, in key order; a journal chunk as its leaves
 * (a move in place keeps layouts 2-5's chunks of leaves, which layouts 6 and 7 read as they stand),
 * an event or intake chunk as its operations in layout 7's form (layouts 2-6's, kept by a move, read as they stand).
 */
export async function storeDigest(store: ReadView): Promise<string> {
  const hash = createHash('sha256');
  for await (const [key, value] of store.entries({ limit: Number.MAX_SAFE_INTEGER })) {
    const read = key.startsWith(keySpaces.journal)
      ? journalChunkLeaves(value, parseSeqHex(key.slice(keySpaces.journal.length))).join('\n')
      : key.startsWith(keySpaces.event) || key.startsWith(keySpaces.command)
        ? commandChunkTexts(value).map((text) => encodeOperation(decodeOperation(text))).join('\n')
        : value;
    hash.update(JSON.stringify([key, read]));
  }
  return hash.digest('hex');
}

/** How many values of `space` begin with `newForm` (a layout's new form), and how many do not. */
async function formsIn(store: ReadView, space: string, newForm: string): Promise<[number, number]> {
  const forms: [number, number] = [0, 0];
  for await (const [, value] of store.entries({ gte: space, lt: prefixEnd(space), limit: Number.MAX_SAFE_INTEGER })) forms[value.startsWith(newForm) ? 0 : 1]++;
  return forms;
}

/** How many account index entries are in layout 4's compact form, and how many in layout 3's. */
export async function indexForms(store: ReadView): Promise<{ compact: number; leaf: number }> {
  const [compact, leaf] = await formsIn(store, keySpaces.accountAsset, '[');
  return { compact, leaf };
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
  const withStore = storeOf(dir, store);
  const written = await withStore(storeDigest);
  expect(await withStore(asLayout3)).toBe(postings);
  expect((await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0'])).stderr).toMatch(/store layout 3; this ledgerd reads layout 7: run ledgerd migrate/);

  // Killed after its second write (the mark, then the first page): part of the index is moved.
  await (await pausedMigrate(dir, 2))();
  expect(await withStore(async (s) => [await s.get(keys.layout), await indexForms(s)])).toEqual(['3-4', { compact: migrateEntriesPerWrite, leaf: postings - migrateEntriesPerWrite }]);
  expect((await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0'])).stderr).toMatch(/store layout 3-4; this ledgerd reads layout 7: run ledgerd migrate/);

  const migrated = await ledgerdRun(['migrate', '--data-dir', dir]);
  expect(migrated.code, migrated.stderr).toBe(0);
  expect(migrated.stdout).toMatch(new RegExp(`book migrated from store layout 3-4 to 7 in place: ${postings - migrateEntriesPerWrite} account index entries made compact`));
  expect(await withStore(storeDigest)).toBe(written);
  const checked = await ledgerdRun(['check', '--data-dir', dir]);
  expect(checked.code, checked.stdout + checked.stderr).toBe(0);
}

/** Runs `use` on the book of `dir` in `store`, opened to read and closed after. */
function storeOf(dir: string, store: StoreConfig): <T>(use: (s: Store) => Promise<T>) => Promise<T> {
  const place = placeOf(dir, store);
  return async (use) => {
    const opened = await place.openToRead();
    try {
      return await use(opened);
    } finally {
      await opened.close();
    }
  };
}

/** How many event chunks are in layout 5's form, and how many in layout 4's. */
export async function eventChunkForms(store: ReadView): Promise<{ sliced: number; list: number }> {
  const [sliced, list] = await formsIn(store, keySpaces.event, '#');
  return { sliced, list };
}

/**
 * `ledgerd migrate` 4 → 5 killed mid-move and run again, on the book in `dir` (in `store`,
 * its daemon stopped, with more than two event chunks):
 * the book stays marked and served by no ledgerd, holds both forms while moving, and ends
 * byte for byte the book this ledgerd wrote, checked clean.
 */
export async function migratedFromLayout4AfterAKill(dir: string, store: StoreConfig): Promise<void> {
  const withStore = storeOf(dir, store);
  const written = await withStore(storeDigest);
  const chunks = await withStore(asLayout4);
  expect(chunks).toBeGreaterThan(2);
  expect((await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0'])).stderr).toMatch(/store layout 4; this ledgerd reads layout 7: run ledgerd migrate/);

  // Killed after its second write (the mark, then the oldest chunk): part of the events are moved.
  await (await pausedMigrate(dir, 2))();
  expect(await withStore(async (s) => [await s.get(keys.layout), await eventChunkForms(s)])).toEqual(['4-5', { sliced: 1, list: chunks - 1 }]);
  expect((await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0'])).stderr).toMatch(/store layout 4-5; this ledgerd reads layout 7: run ledgerd migrate/);

  const migrated = await ledgerdRun(['migrate', '--data-dir', dir]);
  expect(migrated.code, migrated.stderr).toBe(0);
  expect(migrated.stdout).toMatch(new RegExp(`book migrated from store layout 4-5 to 7 in place: ${chunks - 1} event chunks rewritten, \\d+ operations stored once \\(0 kept whole`));
  expect(await withStore(storeDigest)).toBe(written);
  const checked = await ledgerdRun(['check', '--data-dir', dir]);
  expect(checked.code, checked.stdout + checked.stderr).toBe(0);
}

/** How many journal chunks are in layout 6's compact form, and how many hold layouts 2-5's leaves. */
export async function journalChunkForms(store: ReadView): Promise<{ compact: number; leaves: number }> {
  const [compact, leaves] = await formsIn(store, keySpaces.journal, `${journalChunkMark}\n`);
  return { compact, leaves };
}

/**
 * `ledgerd migrate` 5 → 6 on the book in `dir` (in `store`, its daemon stopped, with more
 * than one journal chunk), made layout 5 by asLayout5: the mark alone moves, the chunks of
 * leaves are kept and read as they stand (the book reads as the one this ledgerd wrote, checked
 * clean); a transfer then adds a compact chunk after them, and the book still checks clean.
 */
export async function migratedFromLayout5(dir: string, store: StoreConfig): Promise<void> {
  const withStore = storeOf(dir, store);
  const written = await withStore(storeDigest);
  const chunks = await withStore(asLayout5);
  expect(chunks).toBeGreaterThan(1);
  expect(await withStore(journalChunkForms)).toEqual({ compact: 0, leaves: chunks });
  expect((await ledgerdRun(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0'])).stderr).toMatch(/store layout 5; this ledgerd reads layout 7: run ledgerd migrate/);

  const migrated = await ledgerdRun(['migrate', '--data-dir', dir]);
  expect(migrated.code, migrated.stderr).toBe(0);
  expect(migrated.stdout).toMatch(/book migrated from store layout 5 to 7 in place: the older records kept as they stand\n$/);
  expect(await withStore(async (s) => [await s.get(keys.layout), await journalChunkForms(s)])).toEqual(['7', { compact: 0, leaves: chunks }]);
  expect(await withStore(storeDigest)).toBe(written);
  const checked = await ledgerdRun(['check', '--data-dir', dir]);
  expect(checked.code, checked.stdout + checked.stderr).toBe(0);

  const { head: before, leaves: old } = await withStore(async (s) => ({ head: (await s.get(keys.head))!, leaves: await journalOf(s) }));
  const daemon = await startDaemon({ dataDir: dir });
  try {
    const operator = client(daemon.url, readFileSync(join(dir, 'operator.key'), 'utf8').trim());
    const sent = await operator.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '3' }] }, undefined, { 'client-key': 'after-layout-5' });
    expect((await decided(operator, sent.body.operation_reference)).body.state).toBe('Completed');
  } finally {
    expect(await daemon.stop()).toBe(0);
  }
  // The old chunks read as before, the new one after them in the compact form.
  const after = await withStore(async (s) => ({ forms: await journalChunkForms(s), leaves: await journalOf(s) }));
  expect(after.forms).toEqual({ compact: 1, leaves: chunks });
  expect(after.leaves.slice(0, old.length)).toEqual(old);
  expect(after.leaves.slice(old.length).map((leaf) => JSON.parse(leaf).seq)).toEqual([JSON.parse(before).postingSeq + 1, JSON.parse(before).postingSeq + 2]);
  const again = await ledgerdRun(['check', '--data-dir', dir]);
  expect(again.code, again.stdout + again.stderr).toBe(0);
}

/** Every leaf of the journal of `store`, in order. */
async function journalOf(store: ReadView): Promise<string[]> {
  const leaves: string[] = [];
  for await (const leaf of journalLeaves(store, 1, decodeHead((await store.get(keys.head))!).postingSeq)) leaves.push(leaf);
  return leaves;
}

/**
 * A book this ledgerd wrote in `dir` (in `store`, else LevelDB) with events in several chunks:
 * a reservation, 40 transfers in one batch (a round of more events than a chunk holds), then
 * the reservation captured (its operation's latest event in a later chunk than its first).
 */
export async function writeBookWithEvents(dir: string, store?: Extract<StoreConfig, { kind: 'postgres' }>): Promise<void> {
  const keys = await writeBook(dir, { alice: 100_000n, bob: 0n }, store);
  const daemon = await startDaemon({ dataDir: dir });
  try {
    const alice = client(daemon.url, keys.customers.alice!);
    const leg = { from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '1' };
    const held = await alice.post('/v1/reservations', { payer: leg.from, asset: 'USD', amount: '10' }, undefined, { 'client-key': 'events-hold' });
    expect((await decided(alice, held.body.operation_reference)).body.state).toBe('Reserved');
    const sent = await alice.post('/v1/batches', { commands: Array.from({ length: 40 }, (_, i) => ({ command: 'transfer', body: { legs: [leg] }, client_key: `events-${i}` })) });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    for (const item of sent.body.items) expect((await decided(alice, item.operation_reference)).body.state).toBe('Completed');
    const captured = await alice.post(`/v1/reservations/${held.body.operation_reference}/capture`, { to: leg.to }, undefined, { 'client-key': 'events-capture' });
    expect((await decided(alice, captured.body.operation_reference)).body.state).toBe('Completed');
    expect((await decided(alice, held.body.operation_reference)).body.state).toBe('Captured');
  } finally {
    expect(await daemon.stop()).toBe(0);
  }
}
