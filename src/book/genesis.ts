/**
 * The initial state (CONTRACT 2): a prior system's book, or the embedded defaults,
 * validated whole before anything is written, imported in bounded batches, then
 * sealed by the last write. Until sealed the kernel does not open the book.
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
import { assetPrecisionMax, assetsMax, defaultTreasuryLimitMinor, genesisEntriesMax, genesisEntriesPerRead, genesisEntriesPerWrite, journalChunkEntriesMax } from '../constants.js';
import { refuse } from '../errors.js';
import type { Account, Asset, AssetKind, Balance, Custody, Head, Layer, Posting } from '../model/model.js';
import { layers, moved, zeroBalance } from '../model/model.js';
import type { BatchOp, Store } from '../store/port.js';
import { plusBalance, totalsWrite } from './totals.js';
import {
  type AccountId,
  type AssetSymbol,
  type CredentialId,
  type IdentityId,
  parseAccountId,
  parseAmountMinor,
  parseAssetSymbol,
  parseIdentityId,
  parseLimitMinor,
  parseUintNumber,
} from '../model/values.js';
import { keys, prefixEnd, settlementKeys, storeLayout } from '../model/keys.js';

export interface GenesisAlias {
  readonly source: string;
  readonly name: string;
  readonly account: AccountId;
}
export interface GenesisOpening {
  readonly account: AccountId;
  readonly asset: AssetSymbol;
  readonly amountMinor: bigint;
  readonly direction: 'debit' | 'credit';
  readonly layer: Layer;
}
export interface Genesis {
  readonly assets: readonly Asset[];
  readonly identities: readonly IdentityId[];
  readonly accounts: readonly Account[];
  readonly openings: readonly GenesisOpening[];
  readonly aliases: readonly GenesisAlias[];
  readonly archived: readonly { source: string; name: string }[];
}

/** Extra records the caller seals in with the book (the built-in principals' credentials). */
export type SealedExtras = readonly BatchOp[];

const genesisAuthority = {
  credential: 'did:ledger:cred:genesis' as CredentialId,
  grant: null,
  kind: 'operator' as const,
  onBehalfOf: null,
  principal: builtInPrincipals.operator,
};

/** The embedded defaults: USD, EUR, USDC, BTC and one operator treasury per asset. */
export function defaultGenesis(principals: Principals = builtInPrincipals): Genesis {
  const specs: [string, AssetKind, number][] = [
    ['USD', 'fiat', 2],
    ['EUR', 'fiat', 2],
    ['USDC', 'stable', 6],
    ['BTC', 'native', 8],
  ];
  const assets = specs.map(([id, kind, precision], code) => ({ id: id as AssetSymbol, code, kind, precision, status: 'active' as const, binding: 'book_only' as const, location: null }));
  const accounts = assets.map((a) => treasury(`did:ledger:acct:treasury-${a.id}` as AccountId, principals.operator, { [a.id]: defaultTreasuryLimitMinor }));
  return {
    assets,
    identities: [principals.operator, principals.identities],
    accounts,
    openings: [],
    aliases: assets.map((a, i) => ({ source: 'ledger', name: `treasury:${a.id}`, account: accounts[i]!.id })),
    archived: [],
  };
}

function treasury(id: AccountId, owner: IdentityId, limits: Record<string, bigint>): Account {
  return { id, owner, kind: 'treasury', custody: 'delegated', status: 'active', openedAtMs: 0, epoch: 0, treasuryLimits: limits };
}

// ---------------------------------------------------------------- parsing a genesis file

type Json = Record<string, unknown>;

function entryError(where: string, message: string): never {
  refuse('ERR-MalformedCommand', `genesis ${where}: ${message}`);
}

function list(doc: Json, field: string): unknown[] {
  const value = doc[field] ?? [];
  if (!Array.isArray(value)) entryError(field, 'must be an array');
  if (value.length > genesisEntriesMax) entryError(field, `holds more than ${genesisEntriesMax} entries`);
  return value;
}

function object(value: unknown, where: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) entryError(where, 'must be an object');
  return value as Json;
}

function within<T>(where: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    const message = error instanceof Error ? error.message.replace(/^ERR-[A-Za-z]+: /, '') : String(error);
    entryError(where, message);
  }
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], where: string, fallback?: T): T {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'string' || !allowed.includes(value as T)) entryError(where, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

// One entry of each section, checked on its own; references across sections are the caller's.

function parseAssetEntry(row: unknown, i: number): Asset {
  const where = `assets[${i}]`;
  const j = object(row, where);
  const id = within(`${where}.id`, () => parseAssetSymbol(j.id, 'id'));
  const precision = within(`${where}.precision`, () => parseUintNumber(j.precision, 'precision'));
  if (precision > assetPrecisionMax) entryError(`${where}.precision`, `must be 0..${assetPrecisionMax}`);
  return {
    id,
    code: i,
    kind: oneOf(j.kind, ['fiat', 'stable', 'native', 'other'], `${where}.kind`),
    precision,
    status: oneOf(j.status, ['active', 'deprecated'], `${where}.status`, 'active'),
    binding: oneOf(j.binding, ['book_only', 'binding', 'bound'], `${where}.binding`, 'book_only'),
    location: j.location === undefined || j.location === null ? null : String(j.location),
  };
}

function parseIdentityEntry(row: unknown, i: number): IdentityId {
  const raw = typeof row === 'object' && row !== null ? (row as Json).identity : row;
  return within(`identities[${i}]`, () => parseIdentityId(raw, 'identity'));
}

function parseAccountEntry(row: unknown, i: number, isAsset: (symbol: string) => boolean): Account {
  const where = `accounts[${i}]`;
  const j = object(row, where);
  const id = within(`${where}.account`, () => parseAccountId(j.account, 'account'));
  const owner = within(`${where}.owner`, () => parseIdentityId(j.owner, 'owner'));
  const kind = oneOf(j.kind, ['customer', 'treasury'], `${where}.kind`);
  const limits: Record<string, bigint> = {};
  const limitsJson = j.treasury_limits === undefined || j.treasury_limits === null ? {} : object(j.treasury_limits, `${where}.treasury_limits`);
  for (const [symbol, value] of Object.entries(limitsJson)) {
    if (!isAsset(symbol)) entryError(`${where}.treasury_limits`, `names unknown asset ${symbol}`);
    limits[symbol] = within(`${where}.treasury_limits.${symbol}`, () => parseLimitMinor(value, symbol));
  }
  if (kind !== 'treasury' && Object.keys(limits).length > 0) entryError(`${where}.treasury_limits`, 'apply to treasury accounts only');
  return {
    id,
    owner,
    kind,
    custody: oneOf<Custody>(j.custody, ['delegated', 'owned'], `${where}.custody`, 'delegated'),
    status: oneOf(j.status, ['active', 'closed'], `${where}.status`, 'active'),
    openedAtMs: j.opened_at === undefined ? 0 : within(`${where}.opened_at`, () => parseUintNumber(j.opened_at, 'opened_at')),
    epoch: 0,
    treasuryLimits: limits,
  };
}

function parseOpeningEntry(row: unknown, i: number, isAsset: (symbol: string) => boolean): GenesisOpening {
  const where = `openings[${i}]`;
  const j = object(row, where);
  const account = within(`${where}.account`, () => parseAccountId(j.account, 'account'));
  const asset = within(`${where}.asset`, () => parseAssetSymbol(j.asset, 'asset'));
  if (!isAsset(asset)) entryError(`${where}.asset`, `asset ${asset} is not in assets`);
  return {
    account,
    asset,
    amountMinor: within(`${where}.amount`, () => parseAmountMinor(j.amount, 'amount')),
    direction: oneOf(j.direction, ['debit', 'credit'], `${where}.direction`),
    layer: oneOf(j.balance, layers, `${where}.balance`, 'available'),
  };
}

function parseNamed(row: unknown, where: string): { source: string; name: string } {
  const j = object(row, where);
  if (typeof j.source !== 'string' || typeof j.name !== 'string' || j.source === '' || j.name === '') entryError(where, 'source and name must be non-empty strings');
  return { source: j.source, name: j.name };
}

function parseAliasEntry(row: unknown, i: number): GenesisAlias {
  const { source, name } = parseNamed(row, `aliases[${i}]`);
  return { source, name, account: within(`aliases[${i}].account`, () => parseAccountId((row as Json).account, 'account')) };
}

const parseArchivedEntry = (row: unknown, i: number) => parseNamed(row, `archived[${i}]`);

/** Parses and checks a genesis document; refuses it whole, naming the first bad entry. */
export function parseGenesis(text: string, principals: Principals = builtInPrincipals): Genesis {
  let doc: Json;
  try {
    doc = object(JSON.parse(text), 'document');
  } catch (error) {
    if (error instanceof SyntaxError) entryError('document', `is not JSON (${error.message})`);
    throw error;
  }
  const known = new Set(['assets', 'identities', 'accounts', 'openings', 'aliases', 'archived']);
  for (const key of Object.keys(doc)) if (!known.has(key)) entryError(key, 'is not a genesis section');

  const assets: Asset[] = [];
  const assetRows = list(doc, 'assets');
  if (assetRows.length > assetsMax) entryError('assets', `holds more than ${assetsMax} assets`);
  for (const [i, row] of assetRows.entries()) {
    const asset = parseAssetEntry(row, i);
    if (assets.some((a) => a.id === asset.id)) entryError(`assets[${i}]`, `asset ${asset.id} appears twice`);
    assets.push(asset);
  }
  const assetIds = new Set<string>(assets.map((a) => a.id));

  const identities = new Set<IdentityId>([principals.operator, principals.identities]);
  for (const [i, row] of list(doc, 'identities').entries()) identities.add(parseIdentityEntry(row, i));

  const accounts: Account[] = [];
  const accountIds = new Set<string>();
  for (const [i, row] of list(doc, 'accounts').entries()) {
    const account = parseAccountEntry(row, i, (symbol) => assetIds.has(symbol));
    if (accountIds.has(account.id)) entryError(`accounts[${i}]`, `account ${account.id} appears twice`);
    if (!identities.has(account.owner)) entryError(`accounts[${i}].owner`, `identity ${account.owner} is not in identities`);
    accountIds.add(account.id);
    accounts.push(account);
  }

  const openings: GenesisOpening[] = [];
  for (const [i, row] of list(doc, 'openings').entries()) {
    const opening = parseOpeningEntry(row, i, (symbol) => assetIds.has(symbol));
    if (!accountIds.has(opening.account)) entryError(`openings[${i}].account`, `account ${opening.account} is not in accounts`);
    openings.push(opening);
  }
  const aliases: GenesisAlias[] = [];
  const aliasKeys = new Set<string>();
  for (const [i, row] of list(doc, 'aliases').entries()) {
    const alias = parseAliasEntry(row, i);
    if (!accountIds.has(alias.account)) entryError(`aliases[${i}].account`, `account ${alias.account} is not in accounts`);
    const key = keys.alias(alias.source, alias.name);
    if (aliasKeys.has(key)) entryError(`aliases[${i}]`, 'alias appears twice');
    aliasKeys.add(key);
    aliases.push(alias);
  }
  const archived: { source: string; name: string }[] = [];
  for (const [i, row] of list(doc, 'archived').entries()) {
    const entry = parseArchivedEntry(row, i);
    if (aliasKeys.has(keys.alias(entry.source, entry.name))) entryError(`archived[${i}]`, 'an archived identifier cannot also be an alias');
    archived.push(entry);
  }
  const genesis: Genesis = { assets, identities: [...identities], accounts, openings, aliases, archived };
  checkOpenings(genesis);
  return genesis;
}

/** Openings must balance per asset and leave every account within its floor. */
function checkOpenings(genesis: Genesis): Map<string, Balance> {
  const balances = new Map<string, Balance>();
  const sums = new Map<string, bigint>();
  for (const o of genesis.openings) {
    const key = keys.balance(o.account, o.asset);
    const b = balances.get(key) ?? zeroBalance;
    const signed = o.direction === 'credit' ? o.amountMinor : -o.amountMinor;
    balances.set(key, moved(b, o.layer, signed));
    sums.set(o.asset, (sums.get(o.asset) ?? 0n) + signed);
  }
  for (const [asset, sum] of sums) if (sum !== 0n) entryError('openings', `do not balance in ${asset} (off by ${sum})`);
  const byId = new Map(genesis.accounts.map((a) => [a.id as string, a]));
  for (const [key, b] of balances) {
    const [, account, asset] = key.split('/') as [string, string, string];
    const acct = byId.get(account)!;
    const floor = acct.kind === 'treasury' ? -(acct.treasuryLimits[asset] ?? 0n) : 0n;
    if (b.available < floor || b.reserved < 0n || b.encumbered < 0n) entryError('openings', `leave ${account} below its floor in ${asset}`);
  }
  return balances;
}

// ---------------------------------------------------------------- writing a book

/**
 * Writes a parsed initial state into an empty store and seals it, through the same
 * checks and writes as a document read section by section.
 */
export async function importGenesis(store: Store, genesis: Genesis, nowMs: number, extras: SealedExtras = []): Promise<void> {
  await importGenesisSource(store, genesisSource(genesis), nowMs, extras);
}

/** A parsed genesis as the document it came from. */
export function genesisSource(genesis: Genesis): GenesisSource {
  const doc: Record<string, readonly unknown[]> = {
    assets: genesis.assets.map((a) => ({ id: a.id, kind: a.kind, precision: a.precision, status: a.status, binding: a.binding, location: a.location })),
    identities: genesis.identities,
    accounts: genesis.accounts.map((a) => ({
      account: a.id,
      owner: a.owner,
      kind: a.kind,
      custody: a.custody,
      status: a.status,
      opened_at: a.openedAtMs,
      treasury_limits: Object.fromEntries(Object.entries(a.treasuryLimits).map(([asset, limit]) => [asset, limit.toString()])),
    })),
    openings: genesis.openings.map((o) => ({ account: o.account, asset: o.asset, amount: o.amountMinor.toString(), direction: o.direction, balance: o.layer })),
    aliases: genesis.aliases,
    archived: genesis.archived,
  };
  return {
    sections: async () => Object.keys(doc),
    entries: async function* (section) {
      yield* doc[section] ?? [];
    },
  };
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
    authorities: [genesisAuthority],
    reference: null,
    after,
  };
}

// ---------------------------------------------------------------- importing a document of any size

/**
 * A genesis document read one section at a time, so no section is ever held whole
 * (the daemon reads a file through it; the kernel never touches files).
 */
export interface GenesisSource {
  /** The document's top-level sections, each checked to be an array; refuses anything else. */
  sections(): Promise<readonly string[]>;
  /** The entries of one section in order. */
  entries(section: string): AsyncIterable<unknown>;
}

export const genesisSections = ['assets', 'identities', 'accounts', 'openings', 'aliases', 'archived'] as const;

/**
 * The import's reads and writes. Writes are buffered into bounded batches; the keys a
 * chunk of entries checks are read in one `getMany` (`prefetch`), after which the
 * chunk's checks read synchronously (`read`), seeing what is buffered and what the
 * chunk itself wrote. One awaited read per check made the import ten times slower.
 */
class BoundedWriter {
  private pending = new Map<string, string>();
  /** The chunk's reads: what the store held for each prefetched key, overwritten by the chunk's writes. */
  private known = new Map<string, string | undefined>();
  constructor(private readonly store: Store) {}
  async prefetch(wanted: Iterable<string>): Promise<void> {
    this.known.clear();
    const misses: string[] = [];
    for (const key of new Set(wanted)) {
      const value = this.pending.get(key);
      if (value !== undefined) this.known.set(key, value);
      else misses.push(key);
    }
    const values = misses.length === 0 ? [] : await this.store.getMany(misses);
    for (const [i, key] of misses.entries()) this.known.set(key, values[i]);
  }
  read(key: string): string | undefined {
    if (!this.known.has(key)) fail(`genesis read ${key} was prefetched`);
    return this.known.get(key);
  }
  put(key: string, value: string): void {
    this.pending.set(key, value);
    this.known.set(key, value);
  }
  /** Between chunks: at most genesisEntriesPerWrite entries plus one chunk's writes are ever held. */
  async flushIfFull(): Promise<void> {
    if (this.pending.size >= genesisEntriesPerWrite) await this.flush(false);
  }
  async flush(sync: boolean): Promise<void> {
    await this.store.write([...this.pending].map(([key, value]) => ({ type: 'put' as const, key, value })), sync);
    this.pending.clear();
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
  for (const section of await source.sections()) if (!(genesisSections as readonly string[]).includes(section)) entryError(section, 'is not a genesis section');
  const out = new BoundedWriter(store);
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
    for await (const row of source.entries(section)) {
      if (i === genesisEntriesMax) entryError(section, `holds more than ${genesisEntriesMax} entries`);
      try {
        chunk.push(parse(row, i++));
      } catch (error) {
        refusal = error;
        break;
      }
      if (chunk.length === genesisEntriesPerRead) {
        yield await ready();
        await out.flushIfFull();
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
      if (out.read(keys.account(o.account)) === undefined) entryError(`openings[${seq}].account`, `account ${o.account} is not in accounts`);
      const key = keys.balance(o.account, o.asset);
      const stored = out.read(key);
      const signed = o.direction === 'credit' ? o.amountMinor : -o.amountMinor;
      const after = moved(stored === undefined ? zeroBalance : decodeBalanceText(stored), o.layer, signed);
      out.put(key, JSON.stringify(encodeBalance(after)));
      sums.set(o.asset, (sums.get(o.asset) ?? 0n) + signed);
      seq++;
      const leaf = encodeLeaf(openingPosting(o, seq, nowMs, after));
      leaves.push(leaf);
      out.put(keys.accountAsset(o.account, o.asset, seq), encodeIndexedPosting(leaf, null));
      if (leaves.length === journalChunkEntriesMax) writeChunk();
    }
  }
  if (leaves.length > 0) writeChunk();
  for (const [asset, sum] of sums) if (sum !== 0n) entryError('openings', `do not balance in ${asset} (off by ${sum})`);
  await out.flush(false);
  const totals = new Map([...assets.keys()].map((asset) => [asset, zeroBalance]));
  // Floors hold only once every opening is in: checked over the written balances, a page (and one read of its accounts) at a time.
  let after = keys.balance('', '');
  for (;;) {
    const page: [string, string, Balance][] = [];
    for await (const [key, value] of store.entries({ gt: after, lt: prefixEnd(keys.balancePrefix), limit: genesisEntriesPerRead })) {
      after = key;
      const [, account, asset] = key.split('/') as [string, string, string];
      page.push([account, asset, decodeBalanceText(value)]);
    }
    await out.prefetch(page.map(([account]) => keys.account(account)));
    for (const [account, asset, b] of page) {
      const acct = decodeAccount(out.read(keys.account(account))!);
      const floor = acct.kind === 'treasury' ? -(acct.treasuryLimits[asset] ?? 0n) : 0n;
      if (b.available < floor || b.reserved < 0n || b.encumbered < 0n) entryError('openings', `leave ${account} below its floor in ${asset}`);
      totals.set(asset, plusBalance(totals.get(asset)!, b));
    }
    if (page.length < genesisEntriesPerRead) break;
  }
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
