/**
 * The initial state (CONTRACT 2): a genesis document (a prior system's book, or the
 * embedded defaults) imported section by section into an empty store, each entry
 * checked against the book being built, in bounded writes, then sealed by the last
 * write. Until sealed the kernel does not open the book. The documents themselves are
 * genesis-document.ts; one entry's checks, genesis-entries.ts.
 */
import { assert, fail } from '../assert.js';
import { builtInPrincipals, type Principals } from '../auth/authority.js';
import { depositRefOf } from '../settlement/book.js';
import {
  decodeAccount,
  decodeBalanceText,
  decodeIdentity,
  encodeAccount,
  encodeAsset,
  encodeBalance,
  encodeHead,
  encodeIdentity,
  encodeIndexedPosting,
  encodeJournalChunk,
  encodeLeaf,
} from '../model/codec.js';
import { assetsMax, genesisEntriesMax, genesisEntriesPerRead, genesisEntriesPerWrite, journalChunkEntriesMax } from '../constants.js';
import type { Asset, Balance, Head, Posting } from '../model/model.js';
import { moved, zeroBalance } from '../model/model.js';
import type { BatchOp, Store } from '../store/port.js';
import { totalsWrite } from './totals.js';
import type { CredentialId, IdentityId } from '../model/values.js';
import { keys, prefixEnd, settlementKeys, storeLayout } from '../model/keys.js';
import {
  type Genesis,
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

/** One array for every opening's posting: the leaf encoder caches the authorities' text by the array. */
const genesisAuthorities = [
  {
    credential: 'did:ledger:cred:genesis' as CredentialId,
    grant: null,
    kind: 'operator' as const,
    onBehalfOf: null,
    principal: builtInPrincipals.operator,
  },
];

/**
 * Writes a parsed initial state into an empty store and seals it, through the same
 * checks and writes as a document read section by section.
 */
export async function importGenesis(store: Store, genesis: Genesis, nowMs: number, extras: SealedExtras = []): Promise<void> {
  await importGenesisSource(store, genesisSource(genesis), nowMs, extras);
}

function openingPosting(o: GenesisOpening, seq: number, nowMs: number, after: Balance): Posting {
  return {
    seq,
    atMs: nowMs,
    account: o.account,
    asset: o.asset,
    amountMinor: o.amountMinor,
    direction: o.direction,
    layer: o.layer,
    kind: 'opening',
    status: 'opening',
    operation: 'genesis',
    counterparty: null,
    authorities: genesisAuthorities,
    reference: null,
    after,
  };
}

/**
 * The import's reads and writes. Writes are buffered into bounded batches; the keys a
 * chunk of entries checks are read in one `getMany` (`prefetch`), after which the
 * chunk's checks read synchronously (`read`), seeing what is buffered and what the
 * chunk itself wrote. One awaited read per check made the import ten times slower.
 * A full batch is written while the next chunks are checked (one write in flight at a
 * time, in order): reads see it in `writing` until the store has it.
 */
class BoundedWriter {
  private pending = new Map<string, string>();
  /** The batch being written, and its write (already handled, so a refusal meanwhile leaves no unhandled rejection). */
  private writing = new Map<string, string>();
  private written: Promise<unknown> = Promise.resolve();
  private failure: { error: unknown } | null = null;
  /** The chunk's reads: what the store (or a batch not yet written) held for each prefetched key. */
  private known = new Map<string, string | undefined>();
  constructor(private readonly store: Store) {}
  async prefetch(wanted: readonly string[]): Promise<void> {
    this.known.clear();
    const misses: string[] = [];
    for (const key of wanted) {
      if (this.known.has(key)) continue;
      const value = this.pending.get(key) ?? this.writing.get(key);
      this.known.set(key, value);
      if (value === undefined) misses.push(key);
    }
    const values = misses.length === 0 ? [] : await this.store.getMany(misses);
    for (const [i, key] of misses.entries()) this.known.set(key, values[i]);
  }
  /** What the chunk's writes left, else what was read. */
  read(key: string): string | undefined {
    const value = this.pending.get(key) ?? this.known.get(key);
    if (value === undefined && !this.known.has(key)) fail(`genesis read ${key} was prefetched`);
    return value;
  }
  put(key: string, value: string): void {
    this.pending.set(key, value);
  }
  /** Between chunks: at most two batches of genesisEntriesPerWrite entries (one being written) plus one chunk's writes are ever held. */
  async flushIfFull(): Promise<void> {
    if (this.pending.size >= genesisEntriesPerWrite) await this.startWrite(false);
  }
  /** Writes what is buffered, and waits until the store has every write. */
  async flush(sync: boolean): Promise<void> {
    await this.startWrite(sync);
    await this.settled();
  }
  /** The write in flight, ended (a refused import waits for it before the store is discarded). */
  async settled(): Promise<void> {
    await this.written;
    this.writing.clear();
    if (this.failure !== null) throw this.failure.error;
  }
  private async startWrite(sync: boolean): Promise<void> {
    await this.settled();
    const batch = this.pending;
    this.pending = this.writing;
    this.writing = batch;
    const ops: BatchOp[] = [];
    for (const [key, value] of batch) ops.push({ type: 'put', key, value });
    this.written = this.store.write(ops, sync).catch((error: unknown) => (this.failure = { error }));
  }
}

/** Whether a balance is below its account's floor (a treasury's: minus its limit in the asset; any other's: zero). */
function belowFloor(accountText: string, asset: string, b: Balance): boolean {
  if (b.reserved < 0n || b.encumbered < 0n) return true;
  if (b.available >= 0n) return false;
  const account = decodeAccount(accountText);
  return b.available < (account.kind === 'treasury' ? -(account.treasuryLimits[asset] ?? 0n) : 0n);
}

function belowItsFloor(balanceKey: string): never {
  const [, account, asset] = balanceKey.split('/') as [string, string, string];
  entryError('openings', `leave ${account} below its floor in ${asset}`);
}

/** Every written balance's floor, in key order, a page (and one read of its accounts) at a time. */
async function checkFloors(store: Store, out: BoundedWriter): Promise<void> {
  await out.flush(false);
  let after = keys.balance('', '');
  for (;;) {
    const page: [string, Balance][] = [];
    for await (const [key, value] of store.entries({ gt: after, lt: prefixEnd(keys.balancePrefix), limit: genesisEntriesPerRead })) {
      after = key;
      page.push([key, decodeBalanceText(value)]);
    }
    const accountKey = (balanceKey: string) => keys.account(balanceKey.split('/')[1]!);
    await out.prefetch(page.map(([key]) => accountKey(key)));
    for (const [key, b] of page) if (belowFloor(out.read(accountKey(key))!, key.split('/')[2]!, b)) belowItsFloor(key);
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
   * A section's entries, parsed, in chunks of at most genesisEntriesPerRead, each
   * chunk's reads prefetched. An entry that does not parse ends its chunk and is
   * refused once the entries before it are checked, so the first bad entry is the
   * one named, as when entries were checked one by one.
   */
  async function* chunks<T>(section: string, parse: (row: unknown, i: number) => T, reads: (entry: T) => readonly string[]): AsyncIterable<T[]> {
    let i = 0;
    let chunk: T[] = [];
    let refusal: unknown = null;
    const ready = async () => {
      await out.prefetch(chunk.flatMap(reads));
      const done = chunk;
      chunk = [];
      return done;
    };
    read: for await (const rows of source.entries(section)) {
      for (const row of rows) {
        if (i === genesisEntriesMax) entryError(section, `holds more than ${genesisEntriesMax} entries`);
        try {
          chunk.push(parse(row, i++));
        } catch (error) {
          refusal = error;
          break read;
        }
        if (chunk.length === genesisEntriesPerRead) {
          yield await ready();
          await out.flushIfFull();
        }
      }
    }
    if (chunk.length > 0) yield await ready();
    await out.flushIfFull();
    if (refusal !== null) throw refusal;
  }
  /** The entry's position in its section, for naming it in a refusal. */
  let at = 0;

  const assets = new Map<string, Asset>(); // at most assetsMax
  for await (const chunk of chunks('assets', (row, i) => (i === assetsMax ? entryError('assets', `holds more than ${assetsMax} assets`) : parseAssetEntry(row, i)), () => [])) {
    for (const asset of chunk) {
      if (assets.has(asset.id)) entryError(`assets[${at}]`, `asset ${asset.id} appears twice`);
      assets.set(asset.id, asset);
      out.put(keys.asset(asset.id), encodeAsset(asset));
      at++;
    }
  }
  const isAsset = (symbol: string) => assets.has(symbol);

  const addIdentity = (id: IdentityId) => {
    if (out.read(keys.identity(id)) === undefined) out.put(keys.identity(id), encodeIdentity({ id, createdAtMs: nowMs, accounts: [] }));
  };
  await out.prefetch([keys.identity(principals.operator), keys.identity(principals.identities)]);
  addIdentity(principals.operator);
  addIdentity(principals.identities);
  for await (const chunk of chunks('identities', parseIdentityEntry, (id) => [keys.identity(id)])) chunk.forEach(addIdentity);

  let accountCount = 0;
  at = 0;
  for await (const chunk of chunks('accounts', (row, i) => parseAccountEntry(row, i, isAsset), (a) => [keys.account(a.id), keys.identity(a.owner)])) {
    for (const account of chunk) {
      if (out.read(keys.account(account.id)) !== undefined) entryError(`accounts[${at}]`, `account ${account.id} appears twice`);
      const owner = out.read(keys.identity(account.owner));
      if (owner === undefined) entryError(`accounts[${at}].owner`, `identity ${account.owner} is not in identities`);
      const identity = decodeIdentity(owner);
      out.put(keys.identity(account.owner), encodeIdentity({ ...identity, accounts: [...identity.accounts, account.id] }));
      out.put(keys.account(account.id), encodeAccount(account));
      out.put(settlementKeys.depositRef(depositRefOf(account.id)), account.id);
      accountCount++;
      at++;
    }
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
  let leaves: string[] = [];
  const writeChunk = () => {
    const firstSeq = seq - leaves.length + 1;
    out.put(keys.journal(firstSeq), encodeJournalChunk(leaves));
    out.put(keys.journalTime(nowMs, firstSeq), '');
    leaves = [];
  };
  for await (const chunk of chunks('openings', (row, i) => parseOpeningEntry(row, i, isAsset), (o) => [keys.account(o.account), keys.balance(o.account, o.asset)])) {
    for (const o of chunk) {
      const account = out.read(keys.account(o.account));
      if (account === undefined) entryError(`openings[${seq}].account`, `account ${o.account} is not in accounts`);
      const key = keys.balance(o.account, o.asset);
      const stored = out.read(key);
      const signed = o.direction === 'credit' ? o.amountMinor : -o.amountMinor;
      const before = stored === undefined ? zeroBalance : decodeBalanceText(stored);
      const after = moved(before, o.layer, signed);
      checkBalanceCeiling(`openings[${seq}]`, o.account, o.asset, after);
      out.put(key, JSON.stringify(encodeBalance(after)));
      sums.set(o.asset, (sums.get(o.asset) ?? 0n) + signed);
      totals.set(o.asset, moved(totals.get(o.asset)!, o.layer, signed));
      held.set(o.asset, held.get(o.asset)! - heldMinor(before) + heldMinor(after));
      if (below !== null) {
        if (!belowFloor(account, o.asset, after)) below.delete(key);
        else if (below.add(key).size > genesisEntriesPerRead) below = null;
      }
      seq++;
      const posting = openingPosting(o, seq, nowMs, after);
      leaves.push(encodeLeaf(posting));
      out.put(keys.accountAsset(o.account, o.asset, seq), encodeIndexedPosting(posting));
      if (leaves.length === journalChunkEntriesMax) writeChunk();
    }
  }
  if (leaves.length > 0) writeChunk();
  for (const [asset, sum] of sums) if (sum !== 0n) entryError('openings', `do not balance in ${asset} (off by ${sum})`);
  if (below === null) await checkFloors(store, out);
  else if (below.size > 0) belowItsFloor([...below].sort()[0]!);
  for (const [asset, minor] of held) checkHeldCeiling(asset, minor);
  for (const [asset, total] of totals) {
    const { key, value } = totalsWrite(asset, total);
    out.put(key, value);
  }

  at = 0;
  for await (const chunk of chunks('aliases', parseAliasEntry, (a) => [keys.account(a.account), keys.alias(a.source, a.name)])) {
    for (const alias of chunk) {
      if (out.read(keys.account(alias.account)) === undefined) entryError(`aliases[${at}].account`, `account ${alias.account} is not in accounts`);
      const key = keys.alias(alias.source, alias.name);
      if (out.read(key) !== undefined) entryError(`aliases[${at}]`, 'alias appears twice');
      out.put(key, alias.account);
      at++;
    }
  }
  at = 0;
  for await (const chunk of chunks('archived', parseArchivedEntry, (e) => [keys.alias(e.source, e.name)])) {
    for (const entry of chunk) {
      if (out.read(keys.alias(entry.source, entry.name)) !== undefined) entryError(`archived[${at}]`, 'an archived identifier cannot also be an alias');
      out.put(keys.archived(entry.source, entry.name), '');
      at++;
    }
  }
  await out.flush(true);
  const head: Head = { decidedCseq: 0, postingSeq: seq, eventSeq: 0, lastAtMs: nowMs, accounts: accountCount };
  await store.write([...extras, { type: 'put', key: keys.head, value: encodeHead(head) }, { type: 'put', key: keys.layout, value: storeLayout }, { type: 'put', key: keys.sealed, value: String(nowMs) }], true);
}
