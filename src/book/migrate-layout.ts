/**
 * Store layout 1 → 2 (`ledgerd migrate`, docs/operations.md "Upgrades"). Layout 1 is what
 * stage 1 wrote (the last such code: commit c1eb7cc): no `meta/layout`, one journal entry
 * per posting (`j/<seq>`, the posting as JSON), an account index of empty values
 * (`aa/…/<seq>` → ''), no per-asset totals, no deposit references. Layout 2 (this code,
 * model/codec.ts) differs in exactly these key spaces:
 * - `j/<first seq>`: chunks of CONTRACT 9 leaves, entries of one time, at most
 *   journalChunkEntriesMax each, and `jt/<time>/<first seq>` for each chunk (written here
 *   in layout 6's compact form, which the layouts after 2 read and their moves keep);
 * - `aa/<acct>/<asset>/<seq>`: the leaf and the reference (encodeLeafIndexedPosting; layout 4
 *   makes them compact: migrate-compact-index.ts);
 * - `tb/<asset>`: every asset's totals, layer by layer;
 * - `dref/<deposit ref>`: the account each deposit reference names;
 * - `meta/layout` = 2.
 * Every other record (head, operations, events, balances, accounts, identities, auth and
 * grant records and their indexes) is the same in both and is copied as it stands, each
 * decoded by this code's checked decoders on the way, so a record this code could not
 * read refuses the migration instead of the served book.
 *
 * One pass over the old store in key order, a page at a time, written in batches of
 * migrateEntriesPerWrite: memory holds a page, a journal chunk and the per-asset sums
 * (bounded by assetsMax), whatever the book's size. Then the new store is verified on
 * its own: its totals against a full pass over its balances and against the sums of the
 * old book's, its journal leaves counted against the head, every old index entry found.
 */
import { assetsMax, journalChunkEntriesMax, migrateEntriesPerWrite } from '../constants.js';
import {
  decodeAccount,
  decodeAsset,
  decodeBalanceText,
  decodeHead,
  decodeIdentity,
  decodeOperation,
  decodeOperationJson,
  encodeIndexedPosting,
  encodeLeaf,
  JournalChunkText,
} from '../model/codec.js';
import { keySpaces, keys, parseSeqHex, prefixEnd, settlementKeys } from '../model/keys.js';
import { DamagedRecord, type Json, check, damaged, parsed, recordJson, recordJsonList } from '../model/decode.js';
import { type Authority, type Balance, type Head, type Posting, layers, zeroBalance } from '../model/model.js';
import { journalLeaves } from '../queries/journal.js';
import { depositRefOf } from '../settlement/book.js';
import type { BatchOp, ReadView, Store } from '../store/port.js';
import { plusBalance, sameBalance, totalMinor, totalsWrite, verifyTotals } from './totals.js';

/** The layout a book was written in: `meta/layout`, or 1 for a book from before it was kept. */
export async function layoutOf(view: ReadView): Promise<string> {
  return (await view.get(keys.layout)) ?? '1';
}

/** The layouts of an in-place move (migrate-grant-index.ts, migrate-compact-index.ts): from, the mark while moving, to. */
export interface InPlaceMove {
  readonly from: string;
  readonly moving: string;
  readonly to: string;
}

/**
 * Moves a book in place from one layout to the next: marks it `moving` (which no ledgerd
 * serves), runs `move` (each of its writes atomic and leaving the book whole), then marks it
 * `to`. A book found marked resumes at `move`, which must skip what an earlier run did.
 * A record `move` cannot read refuses the migration; the book stays marked.
 */
export async function moveInPlace<T>(store: Store, layouts: InPlaceMove, afterWrite: () => Promise<void>, move: () => Promise<T>): Promise<T> {
  const layout = await layoutOf(store);
  if (layout !== layouts.from && layout !== layouts.moving) throw new MigrationRefused(`the book is in store layout ${layout}, not ${layouts.from}`);
  if (layout === layouts.from) {
    await store.write([{ type: 'put', key: keys.layout, value: layouts.moving }], true);
    await afterWrite();
  }
  try {
    const report = await move();
    await store.write([{ type: 'put', key: keys.layout, value: layouts.to }], true);
    return report;
  } catch (error) {
    if (error instanceof DamagedRecord) throw new MigrationRefused(error.message);
    throw error;
  }
}

/** The book cannot be migrated as it stands (a record this code cannot read, or the migrated book failed its verification): nothing is placed. */
export class MigrationRefused extends Error {
  override name = 'MigrationRefused';
}

export interface MigrationReport {
  /** Store entries read from the layout-1 book. */
  readonly entriesRead: number;
  readonly postings: number;
  readonly journalChunks: number;
  readonly accounts: number;
  readonly assets: number;
}

/**
 * Layout-1 key spaces kept as they are (stage 1's codec, auth, grants, parties), with the
 * decoder that must read each record; `null`: copied unread (indexes, hashes).
 */
const copied: ReadonlyMap<string, ((value: string, key: string) => unknown) | null> = new Map<string, ((value: string, key: string) => unknown) | null>([
  [keySpaces.asset, decodeAsset],
  [keySpaces.identity, decodeIdentity],
  [keySpaces.operation, decodeOperation],
  [keySpaces.command, decodeOperation],
  [keySpaces.event, (value) => recordJsonList(value, 'event chunk').map(decodeOperationJson)],
  [keySpaces.clientKey, null],
  [keySpaces.expiry, null],
  [keySpaces.alias, null],
  [keySpaces.archived, null],
  [keySpaces.credential, (value) => recordJson(value, 'credential')],
  [keySpaces.token, null],
  [keySpaces.tokenExpiry, null],
  [keySpaces.challenge, null],
  [keySpaces.challengeExpiry, null],
  [keySpaces.grant, (value) => recordJson(value, 'grant')],
  [keySpaces.grantChild, null],
  [keySpaces.grantWindow, null],
  [keySpaces.heldGrant, null],
  [keySpaces.revokedHeld, null],
  [keySpaces.givenGrant, null],
  [keySpaces.overGrant, null],
  [keySpaces.partyGrant, null],
  [keySpaces.party, null],
]);
const copiedMeta: ReadonlySet<string> = new Set([keys.cseq, keys.sealed, keys.idsEpoch]);

/** A layout-1 journal entry (`j/<seq>`: the posting as JSON, `after` as {a, r, e}), checked field by field. */
function decodeLayout1Posting(text: string): Posting {
  const what = 'layout-1 journal entry';
  const j = recordJson(text, what);
  const after = check.object(j, 'after', what);
  if (!Array.isArray(j.authorities)) damaged(what, 'authorities is not a list');
  const authorities = (j.authorities as unknown[]).map((a): Authority => {
    if (typeof a !== 'object' || a === null) damaged(what, 'an authority is not an object');
    const r = a as Json;
    return {
      credential: check.string(r, 'credential', what) as Authority['credential'],
      grant: check.nullableString(r, 'grant', what) as Authority['grant'],
      kind: check.string(r, 'kind', what) as Authority['kind'],
      onBehalfOf: check.nullableString(r, 'onBehalfOf', what) as Authority['onBehalfOf'],
      principal: check.string(r, 'principal', what) as Authority['principal'],
    };
  });
  return {
    seq: check.integer(j, 'seq', what),
    atMs: check.integer(j, 'atMs', what),
    account: check.string(j, 'account', what) as Posting['account'],
    asset: check.string(j, 'asset', what) as Posting['asset'],
    amountMinor: check.decimal(j, 'amountMinor', what),
    direction: check.oneOf(j, 'direction', ['debit', 'credit'] as const, what),
    layer: check.oneOf(j, 'layer', layers, what),
    kind: check.string(j, 'kind', what) as Posting['kind'],
    status: check.string(j, 'status', what) as Posting['status'],
    operation: check.string(j, 'operation', what),
    counterparty: check.nullableString(j, 'counterparty', what) as Posting['counterparty'],
    authorities,
    reference: check.nullableString(j, 'reference', what) as Posting['reference'],
    after: { available: check.decimal(after, 'a', what), reserved: check.decimal(after, 'r', what), encumbered: check.decimal(after, 'e', what) },
  };
}

/** Layouts 2 and 3's index entry: the leaf, a newline (a leaf holds none: JSON escapes it), the reference as JSON. */
export function encodeLeafIndexedPosting(leaf: string, reference: Posting['reference']): string {
  return [leaf, reference === null ? 'null' : JSON.stringify(reference)].join('\n');
}

/** A key's top-level space, with its '/'. */
const spaceOf = (key: string): string => key.slice(0, key.indexOf('/') + 1);

/**
 * Writes the layout-2 form of the layout-1 book `from` into the empty store `to`, then
 * verifies it. `afterWrite` runs after each batch (a test hook may stop there).
 * Throws MigrationRefused when a record cannot be read or the result does not verify;
 * `to` is then to be discarded.
 */
export async function migrateLayout1(from: ReadView, to: Store, afterWrite: () => Promise<void> = async () => {}): Promise<MigrationReport> {
  const layout = await layoutOf(from);
  if (layout !== '1') throw new MigrationRefused(`the book is in store layout ${layout}, not 1`);
  const headText = await from.get(keys.head);
  if (headText === undefined || (await from.get(keys.sealed)) === undefined) throw new MigrationRefused('the store holds no sealed book');
  const head = decodeHead(headText);

  let batch: BatchOp[] = [];
  const put = async (key: string, value: string) => {
    batch.push({ type: 'put', key, value });
    if (batch.length < migrateEntriesPerWrite) return;
    await to.write(batch, false);
    batch = [];
    await afterWrite();
  };

  const summed = new Map<string, Balance>();
  const assets = new Set<string>();
  let accounts = 0;
  let indexEntries = 0;
  let postings = 0;
  let journalChunks = 0;
  let lastAtMs = 0;
  /** The journal chunk being filled: consecutive entries of one time. */
  let chunk: { firstSeq: number; atMs: number; entries: JournalChunkText } | null = null;
  const flushChunk = async () => {
    if (chunk === null) return;
    await put(keys.journal(chunk.firstSeq), chunk.entries.take());
    await put(keys.journalTime(chunk.atMs, chunk.firstSeq), '');
    journalChunks++;
    chunk = null;
  };
  const journalEntry = async (key: string, value: string) => {
    const posting = decodeLayout1Posting(value);
    const seq = parseSeqHex(key.slice(keys.journalPrefix.length));
    if (posting.seq !== seq || seq !== postings + 1) throw new MigrationRefused(`journal entry ${key} is not entry ${postings + 1} of a gapless journal`);
    if (posting.atMs < lastAtMs) throw new MigrationRefused(`journal entry ${seq} is dated before the entry preceding it`);
    lastAtMs = posting.atMs;
    postings++;
    const leaf = encodeLeaf(posting);
    await put(keys.accountAsset(posting.account, posting.asset, seq), encodeLeafIndexedPosting(leaf, posting.reference));
    // A chunk's entries share one time (the time index finds a period's first entry in one seek).
    if (chunk !== null && (chunk.atMs !== posting.atMs || chunk.entries.entries === journalChunkEntriesMax)) await flushChunk();
    if (chunk === null) chunk = { firstSeq: seq, atMs: posting.atMs, entries: new JournalChunkText() };
    // The chunk in the form this ledgerd writes (layout 6's; the moves in place after this one leave `j/` as it is).
    chunk.entries.add(posting.account, posting.asset, encodeIndexedPosting(posting));
  };

  /** One entry of the old book: copied as it stands (once its decoder reads it), rebuilt, or refused. */
  const migrateEntry = async (key: string, value: string): Promise<void> => {
    const space = spaceOf(key);
    if (space === keySpaces.journal) {
      await journalEntry(key, value);
    } else if (space === keySpaces.accountAsset) {
      // Rebuilt from the journal, carrying the posting; checked below to be the same set.
      if (value !== '') throw new MigrationRefused(`index entry ${key} is not a layout-1 one (it holds a value)`);
      indexEntries++;
    } else if (space === keySpaces.balance) {
      const asset = key.slice(key.lastIndexOf('/') + 1);
      summed.set(asset, plusBalance(summed.get(asset) ?? zeroBalance, decodeBalanceText(value)));
      await put(key, value);
    } else if (space === keySpaces.account) {
      const account = decodeAccount(value, key);
      accounts++;
      await put(key, value);
      await put(settlementKeys.depositRef(depositRefOf(account.id)), account.id);
    } else if (space === keySpaces.meta) {
      if (key !== keys.head && !copiedMeta.has(key)) throw new MigrationRefused(`${key} is not a layout-1 key`);
      await put(key, value);
    } else if (copied.has(space)) {
      copied.get(space)?.(value, key);
      if (space === keySpaces.asset) {
        assets.add(key.slice(keys.assetPrefix.length));
        if (assets.size > assetsMax) throw new MigrationRefused(`the book registers more than ${assetsMax} assets`);
      }
      await put(key, value);
    } else {
      // tb/, jt/, dref/ and the rest are layout 2's or later: this book is not a layout-1 one.
      throw new MigrationRefused(`${key} is not a layout-1 key`);
    }
  };

  let entriesRead = 0;
  let after: string | null = null;
  for (;;) {
    const page: [string, string][] = [];
    for await (const entry of from.entries(after === null ? { limit: migrateEntriesPerWrite } : { gt: after, limit: migrateEntriesPerWrite })) page.push(entry);
    if (page.length === 0) break;
    after = page[page.length - 1]![0];
    entriesRead += page.length;
    for (const [key, value] of page) {
      try {
        await migrateEntry(key, value);
      } catch (error) {
        if (error instanceof DamagedRecord) throw new MigrationRefused(`${key}: ${error.message}`);
        throw error;
      }
    }
  }
  await flushChunk();
  if (postings !== head.postingSeq) throw new MigrationRefused(`the journal holds ${postings} entries; the head's position is ${head.postingSeq}`);
  if (indexEntries !== postings) throw new MigrationRefused(`the account index holds ${indexEntries} entries; the journal ${postings}`);
  for (const asset of summed.keys()) if (!assets.has(asset)) throw new MigrationRefused(`balances are kept in ${asset}, which is not registered`);
  for (const asset of assets) await put(keys.tb(asset), totalsWrite(asset, summed.get(asset) ?? zeroBalance).value);
  // Layout 2; migrate-grant-index.ts takes it on from there.
  batch.push({ type: 'put', key: keys.layout, value: '2' });
  await to.write(batch, true);
  await afterWrite();

  await verify(from, to, head, summed);
  return { entriesRead, postings, journalChunks, accounts, assets: assets.size };
}

/** The migrated book against the old one, read back through this code's own readers. */
async function verify(from: ReadView, to: Store, head: Head, summed: ReadonlyMap<string, Balance>): Promise<void> {
  const totals = await verifyTotals(to);
  for (const { asset, stored, summed: full } of totals.assets) {
    const old = summed.get(asset) ?? zeroBalance;
    if (stored === null || !sameBalance(stored, full) || !sameBalance(full, old) || totalMinor(full) !== 0n) {
      throw new MigrationRefused(`the trial balance of ${asset} does not verify: totals ${stored === null ? 'missing' : totalMinor(stored)}, full pass ${totalMinor(full)}, the old book's ${totalMinor(old)}`);
    }
  }
  let leaves = 0;
  for await (const leaf of journalLeaves(to, 1, head.postingSeq)) {
    leaves++;
    parsed(leaf, 'journal leaf');
  }
  if (leaves !== head.postingSeq) throw new MigrationRefused(`the migrated journal holds ${leaves} leaves; the head's position is ${head.postingSeq}`);
  // Every old index entry has its migrated one (the counts matched in the pass).
  let after = keySpaces.accountAsset as string;
  for (;;) {
    const page: string[] = [];
    for await (const [key] of from.entries({ gt: after, lt: prefixEnd(keySpaces.accountAsset), limit: migrateEntriesPerWrite })) page.push(key);
    if (page.length === 0) return;
    after = page[page.length - 1]!;
    const found = await to.getMany(page);
    const missing = page.find((_, i) => found[i] === undefined);
    if (missing !== undefined) throw new MigrationRefused(`index entry ${missing} has no journal entry`);
  }
}
