/**
 * The initial state (CONTRACT 2): a genesis document (a prior system's book, or the
 * embedded defaults) imported section by section into an empty store, each entry
 * checked against the book being built, in bounded writes, then sealed by the last
 * write. Until sealed the kernel does not open the book. The documents themselves are
 * genesis-document.ts; one entry's checks, genesis-entries.ts.
 */
import { assert } from '../assert.js';
import { builtInPrincipals, type Principals } from '../auth/authority.js';
import { depositRefOf } from '../settlement/book.js';
import {
  decodeAccount,
  decodeBalanceText,
  decodeIdentity,
  encodeAccount,
  encodeAsset,
  encodeBalanceText,
  encodeHead,
  encodeIdentity,
  encodeIndexedOpening,
  JournalChunkText,
} from '../model/codec.js';
import { assetsMax, genesisEntriesMax, genesisEntriesPerRead, genesisEntriesPerWrite, genesisIdentityRewriteAccountsMax, journalChunkEntriesMax } from '../constants.js';
import type { Account, Asset, Balance, Head } from '../model/model.js';
import { moved, zeroBalance } from '../model/model.js';
import { type BatchOp, type Store, type WriteBatch, batchOf } from '../store/port.js';
import { totalsWrite } from './totals.js';
import type { AccountId, IdentityId } from '../model/values.js';
import { KeyFilter } from './genesis-filter.js';
import { keys, prefixEnd, seqHex, settlementKeys, storeLayout } from '../model/keys.js';
import {
  type Genesis,
  type GenesisAlias,
  type GenesisOpening,
  checkBalanceCeiling,
  checkHeldCeiling,
  entryError,
  genesisSections,
  heldMinor,
  parseAccountEntry,
  parseAliasEntry,
  parseArchivedEntry,
  parseAssetEntry,
  parseIdentityEntry,
  parseOpeningEntry,
  shown,
} from './genesis-entries.js';
import { type GenesisSource, genesisSource } from './genesis-document.js';

export { type Genesis, type GenesisAlias, type GenesisOpening, genesisSections } from './genesis-entries.js';
export { type GenesisSource, defaultGenesis, genesisSource, parseGenesis } from './genesis-document.js';

/** Extra records the caller seals in with the book (the built-in principals' credentials). */
export type SealedExtras = readonly BatchOp[];

/**
 * Writes a parsed initial state into an empty store and seals it, through the same
 * checks and writes as a document read section by section.
 */
export async function importGenesis(store: Store, genesis: Genesis, nowMs: number, extras: SealedExtras = []): Promise<void> {
  await importGenesisSource(store, genesisSource(genesis), nowMs, extras);
}

/**
 * The import's writes: bounded batches, one written while the next chunks are checked (one
 * write in flight at a time, in order). A write the import never reads back goes into the
 * store's batch at once (LevelDB copies it out, so its strings die young instead of being
 * held, and copied by the garbage collector, until the batch is written); one it reads back
 * is held, and goes in as the batch goes out. The keys of the section being read that its later
 * entries read back (an account's id, a balance, an alias) are also kept with their
 * values until the store has them, and noted in `filter`, so a key the filter does not
 * hold was never written and is not read at all. Every section's writes are in the store
 * before the next section is read, so a read of an earlier section's key goes to the store.
 */
class BoundedWriter {
  private batch: WriteBatch;
  /**
   * The writes of the section's own keys in the pending batch and the batch being written,
   * by key. A key written again while its batch is pending has its one write's value
   * replaced (a treasury's balance, moved by every customer's opening, is written once a batch).
   */
  private pendingOwn = new Map<string, PutOp>();
  /** How many of pendingOwn's keys are `inBatch` (their write counted in the batch's length already). */
  private pendingInBatch = 0;
  private writingOwn = new Map<string, PutOp>();
  /** The batch written last, kept one batch longer: a chunk's reads were planned before it was in the store (chunks, in importSections). */
  private landedOwn = new Map<string, PutOp>();
  /** The chunk's read in flight while the chunk before it is checked (a refused import waits for it too). */
  private read: Promise<unknown> = Promise.resolve();
  private written: Promise<unknown> = Promise.resolve();
  private failure: { error: unknown } | null = null;
  readonly filter = new KeyFilter();
  /** Puts what the section holds back until its batch goes out (identities' new accounts). */
  beforeWrite: () => void = () => {};
  constructor(readonly store: Store) {
    this.batch = batchOf(store);
  }

  put(key: string, value: string): void {
    this.batch.put(key, value);
  }
  del(key: string): void {
    this.batch.del(key);
  }
  /** A write the section reads back by key from its own writes (never from the filter). */
  putKept(key: string, value: string): void {
    const pending = this.pendingOwn.get(key);
    if (pending !== undefined && pending !== inBatch) pending.value = value;
    else {
      if (pending === inBatch) this.pendingInBatch--;
      this.pendingOwn.set(key, { type: 'put', key, value });
    }
  }
  /**
   * A write of the section's own key space whose later entries ask only whether it was
   * written (an account, an alias): into the batch at once like `put`, its key kept as
   * written (`inBatch`) and noted in the filter.
   */
  putSeen(key: string, value: string): void {
    this.batch.put(key, value);
    if (this.pendingOwn.get(key) !== inBatch) this.pendingInBatch++;
    this.pendingOwn.set(key, inBatch);
    this.filter.add(key);
  }
  /** A write of the section's own key space, which its later entries look up. */
  putOwn(key: string, value: string): void {
    this.putKept(key, value);
    this.filter.add(key);
  }
  /** What the section's own batches (pending, or being written) hold under `key`. */
  kept(key: string): string | undefined {
    return (this.pendingOwn.get(key) ?? this.writingOwn.get(key) ?? this.landedOwn.get(key))?.value;
  }
  /**
   * Whether a chunk must read the store for one of the section's own keys: it may have
   * been written, and is not in a batch that will still be held when the chunk is checked
   * (one batch may start in between: the pending one is then being written, the one being
   * written landed).
   */
  mustRead(key: string): boolean {
    return this.filter.mayHave(key) && !this.pendingOwn.has(key) && !this.writingOwn.has(key);
  }
  /** The section's own key as its entries so far left it: `stored` is what the chunk read from the store for it, if it did. */
  own(key: string, stored: string | undefined): string | undefined {
    if (!this.filter.mayHave(key)) return undefined;
    return this.kept(key) ?? stored;
  }
  /** Between chunks: at most two batches of genesisEntriesPerWrite entries (one being written) plus one chunk's writes are ever held. */
  async flushIfFull(): Promise<void> {
    if (this.batch.length + this.pendingOwn.size - this.pendingInBatch >= genesisEntriesPerWrite) await this.startWrite(false);
  }
  /** Writes what is buffered, and waits until the store has every write. */
  async flush(sync: boolean): Promise<void> {
    await this.startWrite(sync);
    await this.settled();
  }
  /** Ends a section: its writes are in the store and forgotten here; the filter starts again unless `keepFilter` (a later section reads these keys). */
  async endSection(keepFilter = false): Promise<void> {
    await this.flush(false);
    this.landedOwn.clear();
    this.writingOwn.clear();
    this.beforeWrite = () => {};
    if (!keepFilter) this.filter.clear();
  }
  /** A chunk's read, followed so that a refused import waits for it (and never leaves its rejection unhandled). */
  reading(read: Promise<void>): Promise<void> {
    this.read = read.catch(() => {});
    return read;
  }
  /** The write in flight, ended (a refused import waits for it, and for a read in flight, before the store is discarded). */
  async settled(): Promise<void> {
    await this.written;
    await this.read;
    if (this.failure !== null) throw this.failure.error;
  }
  private async startWrite(sync: boolean): Promise<void> {
    this.beforeWrite();
    await this.written;
    if (this.failure !== null) throw this.failure.error;
    const batch = this.batch;
    this.batch = batchOf(this.store);
    for (const op of this.pendingOwn.values()) if (op !== inBatch) batch.put(op.key, op.value);
    const cleared = this.landedOwn;
    cleared.clear();
    this.landedOwn = this.writingOwn;
    this.writingOwn = this.pendingOwn;
    this.pendingOwn = cleared;
    this.pendingInBatch = 0;
    this.written = batch.write(sync).catch((error: unknown) => (this.failure = { error }));
  }
}

type PutOp = Extract<BatchOp, { type: 'put' }>;
/** A key of the section's own writes that went into the batch at once (putSeen): written, its value not kept. */
const inBatch: PutOp = { type: 'put', key: '', value: '' };

/** One chunk's store reads, in one `getMany`: each wanted key gets a slot, its value read by slot. */
class ChunkReads {
  private readonly wanted: string[] = [];
  private values: readonly (string | undefined)[] = [];
  want(key: string): number {
    return this.wanted.push(key) - 1;
  }
  /** A slot only when `read` (else -1: nothing to read). */
  wantIf(read: boolean, key: string): number {
    return read ? this.want(key) : -1;
  }
  async fetch(store: Store): Promise<void> {
    if (this.wanted.length > 0) this.values = await store.getMany(this.wanted);
  }
  got(slot: number): string | undefined {
    return slot < 0 ? undefined : this.values[slot];
  }
}

/** Whether a balance is below its account's floor (a treasury's: minus its limit in the asset; any other's: zero). */
function belowFloor(accountText: string, accountKey: string, asset: string, b: Balance): boolean {
  if (b.reserved < 0n || b.encumbered < 0n) return true;
  if (b.available >= 0n) return false;
  const account = decodeAccount(accountText, accountKey);
  return b.available < (account.kind === 'treasury' ? -(account.treasuryLimits[asset] ?? 0n) : 0n);
}

function belowItsFloor(balanceKey: string): never {
  const [, account, asset] = balanceKey.split('/') as [string, string, string];
  entryError('openings', `leave ${account} below its floor in ${asset}`);
}

/**
 * Scratch entries of the accounts of identities with many (importSections), by identity
 * then order written; never in a sealed book (merged and deleted after the accounts section).
 */
const identityFragments = 'genesis-tmp/identity-accounts/';
/** How an identity's record ends while it owns no account (encodeIdentity of a new identity: `[createdAtMs,[]]`). */
const noAccountsYet = ',[]]';
const identityFragmentKey = (id: IdentityId, n: number) => `${identityFragments}${id}/${seqHex(n)}`;

/** Appends each fragmented identity's scratch entries to its record, in the order written, and deletes them: each record is written once more. */
async function mergeIdentityFragments(store: Store, out: BoundedWriter): Promise<void> {
  let identity: IdentityId | null = null;
  let more: AccountId[] = [];
  const merge = async () => {
    if (identity === null) return;
    const record = decodeIdentity((await store.get(keys.identity(identity)))!, keys.identity(identity));
    out.put(keys.identity(identity), encodeIdentity({ ...record, accounts: [...record.accounts, ...more] }));
    more = [];
  };
  let after = identityFragments;
  for (;;) {
    let read = 0;
    for await (const [key, value] of store.entries({ gt: after, lt: prefixEnd(identityFragments), limit: genesisEntriesPerRead })) {
      after = key;
      read++;
      const id = key.slice(identityFragments.length, key.lastIndexOf('/')) as IdentityId;
      if (id !== identity) {
        await merge();
        identity = id;
      }
      for (const account of JSON.parse(value) as AccountId[]) more.push(account);
      out.del(key);
    }
    await out.flushIfFull();
    if (read < genesisEntriesPerRead) break;
  }
  await merge();
}

/** Every written balance's floor, in key order, a page (and one read of its accounts) at a time. */
async function checkFloors(store: Store): Promise<void> {
  let after = keys.balance('', '');
  for (;;) {
    const page: [string, Balance][] = [];
    for await (const [key, value] of store.entries({ gt: after, lt: prefixEnd(keys.balancePrefix), limit: genesisEntriesPerRead })) {
      after = key;
      page.push([key, decodeBalanceText(value)]);
    }
    const accountKeys = page.map(([key]) => keys.account(key.split('/')[1]!));
    const accounts = await store.getMany(accountKeys);
    for (const [i, [key, b]] of page.entries()) if (belowFloor(accounts[i]!, accountKeys[i]!, key.split('/')[2]!, b)) belowItsFloor(key);
    if (page.length < genesisEntriesPerRead) break;
  }
}

/**
 * Validates and imports a genesis document section by section, whatever the order of
 * the sections in it: each entry is checked against what was already written, and the
 * writes go out in bounded batches, so memory stays bounded whatever the document's
 * size. The seal is the last write; a refused document leaves an unsealed store,
 * which the caller discards (the kernel never opens it).
 */
export async function importGenesisSource(store: Store, source: GenesisSource, nowMs: number, extras: SealedExtras = [], principals: Principals = builtInPrincipals): Promise<void> {
  assert((await store.get(keys.sealed)) === undefined && (await store.get(keys.head)) === undefined, 'genesis goes into an empty store');
  const out = new BoundedWriter(store);
  try {
    await importSections(store, out, source, nowMs, extras, principals);
  } catch (error) {
    // Refused (or failed) with a batch still being written: the caller discards the store once it is.
    await out.settled().catch(() => {});
    throw error;
  }
}

async function importSections(store: Store, out: BoundedWriter, source: GenesisSource, nowMs: number, extras: SealedExtras, principals: Principals): Promise<void> {
  const sections = await source.sections();
  for (const [i, section] of sections.entries()) {
    if (!(genesisSections as readonly string[]).includes(section)) entryError(shown(section), 'is not a genesis section');
    // Readers differ on a repeated member (jq and JSON.parse keep the last): refused, not picked.
    if (sections.indexOf(section) !== i) entryError(section, 'appears twice');
  }
  /**
   * A section's entries, parsed, in chunks of at most genesisEntriesPerRead. An entry
   * that does not parse ends its chunk and is refused (`refused`) once the entries before
   * it are checked, so the first bad entry is the one named, as when entries were checked
   * one by one; a file that does not scan is refused once the whole chunks before the
   * fault are checked, as before.
   */
  async function* parsedChunks<T>(section: string, parse: (row: unknown, i: number) => T, refused: (error: unknown) => void): AsyncGenerator<T[]> {
    let i = 0;
    let chunk: T[] = [];
    try {
      for await (const rows of source.entries(section)) {
        for (const row of rows) {
          try {
            if (i === genesisEntriesMax) entryError(section, `holds more than ${genesisEntriesMax} entries`);
            chunk.push(parse(row, i++));
          } catch (error) {
            refused(error);
            if (chunk.length > 0) yield chunk;
            return;
          }
          if (chunk.length === genesisEntriesPerRead) {
            yield chunk;
            chunk = [];
          }
        }
      }
    } catch (error) {
      refused(error);
      return;
    }
    if (chunk.length > 0) yield chunk;
  }
  /**
   * A section's chunks of entries, each with its store reads (planned by `plan`, made in
   * one `getMany`). A chunk's reads are made while the chunk before it is checked: they
   * are planned before that chunk's writes, and at most one batch is started between,
   * which is why the writer keeps the values of the batch written last
   * (BoundedWriter.kept, mustRead).
   */
  async function* chunks<T, P>(section: string, parse: (row: unknown, i: number) => T, plan: (entry: T, reads: ChunkReads) => P): AsyncIterable<[P[], ChunkReads]> {
    let refusal: { error: unknown } | null = null;
    let ahead: [P[], ChunkReads, Promise<void>] | null = null;
    for await (const chunk of parsedChunks(section, parse, (error) => (refusal = { error }))) {
      const reads = new ChunkReads();
      const planned = chunk.map((entry) => plan(entry, reads));
      const next: [P[], ChunkReads, Promise<void>] = [planned, reads, out.reading(reads.fetch(store))];
      if (ahead !== null) {
        await ahead[2];
        yield [ahead[0], ahead[1]];
        await out.flushIfFull();
      }
      ahead = next;
    }
    if (ahead !== null) {
      await ahead[2];
      yield [ahead[0], ahead[1]];
    }
    await out.flushIfFull();
    if (refusal !== null) throw (refusal as { error: unknown }).error;
  }
  /** The entry's position in its section, for naming it in a refusal. */
  let at = 0;

  const assets = new Map<string, Asset>(); // at most assetsMax
  for await (const [chunk] of chunks('assets', (row, i) => (i === assetsMax ? entryError('assets', `holds more than ${assetsMax} assets`) : parseAssetEntry(row, i)), (asset) => asset)) {
    for (const asset of chunk) {
      if (assets.has(asset.id)) entryError(`assets[${at}]`, `asset ${asset.id} appears twice`);
      assets.set(asset.id, asset);
      out.put(keys.asset(asset.id), encodeAsset(asset));
      at++;
    }
  }
  const isAsset = (symbol: string) => assets.has(symbol);
  await out.endSection();

  // Identities: a repeated one is taken once.
  const planIdentity = (id: IdentityId, reads: ChunkReads) => {
    const key = keys.identity(id);
    return { id, key, slot: reads.wantIf(out.mustRead(key), key) };
  };
  const addIdentities = (chunk: readonly { id: IdentityId; key: string; slot: number }[], reads: ChunkReads) => {
    for (const { id, key, slot } of chunk) if (out.own(key, reads.got(slot)) === undefined) out.putOwn(key, encodeIdentity({ id, createdAtMs: nowMs, accounts: [] }));
  };
  const builtIn = new ChunkReads();
  const builtIns = [principals.operator, principals.identities].map((id) => planIdentity(id, builtIn));
  await builtIn.fetch(store);
  addIdentities(builtIns, builtIn);
  for await (const [chunk, reads] of chunks('identities', parseIdentityEntry, planIdentity)) addIdentities(chunk, reads);
  await out.endSection();

  /**
   * An identity's record lists its accounts in file order: those added while a batch
   * fills are kept here and its record written once as the batch goes out, so an
   * identity whose accounts come together is decoded and encoded once per batch, not
   * once per account. A record already holding genesisIdentityRewriteAccountsMax
   * accounts is not rewritten again: each batch's further accounts of it go to a scratch
   * entry (`fragmented`, at most genesisEntriesMax / genesisIdentityRewriteAccountsMax
   * identities), merged into the record once the section is in (mergeIdentityFragments).
   */
  const grown = new Map<string, { id: IdentityId; text: string; added: AccountId[] }>();
  const fragmented = new Set<string>();
  let fragments = 0;
  out.beforeWrite = () => {
    for (const [key, { id, text, added }] of grown) {
      if (text.endsWith(noAccountsYet)) {
        // A record as the identities section wrote it: its list written in place, the same bytes as decoding and encoding it again.
        out.putKept(key, `${text.slice(0, -2)}${JSON.stringify(added).slice(1)}]`);
        continue;
      }
      const identity = fragmented.has(key) ? null : decodeIdentity(text, key);
      if (identity !== null && identity.accounts.length < genesisIdentityRewriteAccountsMax) out.putKept(key, encodeIdentity({ ...identity, accounts: [...identity.accounts, ...added] }));
      else {
        fragmented.add(key);
        out.put(identityFragmentKey(id, fragments++), JSON.stringify(added));
      }
    }
    grown.clear();
  };
  let accountCount = 0;
  at = 0;
  const planAccount = (account: Account, reads: ChunkReads) => {
    const key = keys.account(account.id);
    const ownerKey = keys.identity(account.owner);
    return { account, key, slot: reads.wantIf(out.mustRead(key), key), ownerKey, ownerSlot: reads.want(ownerKey) };
  };
  for await (const [chunk, reads] of chunks('accounts', (row, i) => parseAccountEntry(row, i, isAsset), planAccount)) {
    for (const { account, key, slot, ownerKey, ownerSlot } of chunk) {
      if (out.own(key, reads.got(slot)) !== undefined) entryError(`accounts[${at}]`, `account ${account.id} appears twice`);
      const growing = grown.get(ownerKey);
      if (growing !== undefined) growing.added.push(account.id);
      else {
        const owner = out.kept(ownerKey) ?? reads.got(ownerSlot);
        if (owner === undefined) entryError(`accounts[${at}].owner`, `identity ${account.owner} is not in identities`);
        grown.set(ownerKey, { id: account.owner, text: owner, added: [account.id] });
      }
      out.putSeen(key, encodeAccount(account));
      out.put(settlementKeys.depositRef(depositRefOf(account.id)), account.id);
      accountCount++;
      at++;
    }
  }
  await out.endSection();
  if (fragments > 0) {
    await mergeIdentityFragments(store, out);
    await out.endSection();
  }

  const sums = new Map<string, bigint>(); // per asset
  const totals = new Map([...assets.keys()].map((asset) => [asset, zeroBalance]));
  const held = new Map([...assets.keys()].map((asset) => [asset, 0n]));
  /**
   * Floors hold only once every opening is in (a treasury's debits may come before the
   * credits that keep it within its limit): the balances below theirs so far, refused at
   * the end, the first in key order. Past a bound of them (null), the floors are checked
   * over the written balances instead, a page at a time.
   */
  let below: Set<string> | null = new Set();
  let seq = 0;
  const journal = new JournalChunkText();
  const writeChunk = () => {
    const firstSeq = seq - journal.entries + 1;
    out.put(keys.journal(firstSeq), journal.take());
    out.put(keys.journalTime(nowMs, firstSeq), '');
  };
  const planOpening = (o: GenesisOpening, reads: ChunkReads) => {
    const key = keys.balance(o.account, o.asset);
    const accountKey = keys.account(o.account);
    return { o, accountKey, accountSlot: reads.want(accountKey), key, slot: reads.wantIf(out.mustRead(key), key) };
  };
  for await (const [chunk, reads] of chunks('openings', (row, i) => parseOpeningEntry(row, i, isAsset), planOpening)) {
    for (const { o, accountKey, accountSlot, key, slot } of chunk) {
      const account = reads.got(accountSlot);
      if (account === undefined) entryError(`openings[${seq}].account`, `account ${o.account} is not in accounts`);
      const stored = out.own(key, reads.got(slot));
      const signed = o.direction === 'credit' ? o.amountMinor : -o.amountMinor;
      const before = stored === undefined ? zeroBalance : decodeBalanceText(stored);
      const after = moved(before, o.layer, signed);
      checkBalanceCeiling(`openings[${seq}]`, o.account, o.asset, after);
      out.putOwn(key, encodeBalanceText(after));
      sums.set(o.asset, (sums.get(o.asset) ?? 0n) + signed);
      totals.set(o.asset, moved(totals.get(o.asset)!, o.layer, signed));
      held.set(o.asset, held.get(o.asset)! - heldMinor(before) + heldMinor(after));
      if (below !== null) {
        if (!belowFloor(account, accountKey, o.asset, after)) below.delete(key);
        else if (below.add(key).size > genesisEntriesPerRead) below = null;
      }
      seq++;
      const indexed = encodeIndexedOpening(nowMs, o.amountMinor, o.direction, o.layer, after);
      out.put(keys.accountAsset(o.account, o.asset, seq), indexed);
      journal.add(o.account, o.asset, indexed);
      if (journal.entries === journalChunkEntriesMax) writeChunk();
    }
  }
  if (journal.entries > 0) writeChunk();
  for (const [asset, sum] of sums) if (sum !== 0n) entryError('openings', `do not balance in ${asset} (off by ${sum})`);
  await out.endSection();
  if (below === null) await checkFloors(store);
  else if (below.size > 0) belowItsFloor([...below].sort()[0]!);
  for (const [asset, minor] of held) checkHeldCeiling(asset, minor);
  for (const [asset, total] of totals) {
    const { key, value } = totalsWrite(asset, total);
    out.put(key, value);
  }

  at = 0;
  const planAlias = (alias: GenesisAlias, reads: ChunkReads) => {
    const key = keys.alias(alias.source, alias.name);
    return { alias, accountSlot: reads.want(keys.account(alias.account)), key, slot: reads.wantIf(out.mustRead(key), key) };
  };
  for await (const [chunk, reads] of chunks('aliases', parseAliasEntry, planAlias)) {
    for (const { alias, accountSlot, key, slot } of chunk) {
      if (reads.got(accountSlot) === undefined) entryError(`aliases[${at}].account`, `account ${alias.account} is not in accounts`);
      if (out.own(key, reads.got(slot)) !== undefined) entryError(`aliases[${at}]`, 'alias appears twice');
      out.putSeen(key, alias.account);
      at++;
    }
  }
  // The aliases' filter stays: an archived identifier the filter does not hold is no alias.
  await out.endSection(true);
  at = 0;
  const planArchived = (entry: { source: string; name: string }, reads: ChunkReads) => {
    const aliasKey = keys.alias(entry.source, entry.name);
    return { entry, slot: reads.wantIf(out.filter.mayHave(aliasKey), aliasKey) };
  };
  for await (const [chunk, reads] of chunks('archived', parseArchivedEntry, planArchived)) {
    for (const { entry, slot } of chunk) {
      if (reads.got(slot) !== undefined) entryError(`archived[${at}]`, 'an archived identifier cannot also be an alias');
      out.put(keys.archived(entry.source, entry.name), '');
      at++;
    }
  }
  await out.flush(true);
  const head: Head = { decidedCseq: 0, postingSeq: seq, eventSeq: 0, lastAtMs: nowMs, accounts: accountCount };
  await store.write([...extras, { type: 'put', key: keys.head, value: encodeHead(head) }, { type: 'put', key: keys.layout, value: storeLayout }, { type: 'put', key: keys.sealed, value: String(nowMs) }], true);
}
