/**
 * The initial state (CONTRACT 2): a prior system's book, or the embedded defaults,
 * validated whole before anything is written, imported in bounded batches, then
 * sealed by the last write. Until sealed the kernel does not open the book.
 */
import { assert } from '../assert.js';
import { builtInPrincipals, type Principals } from '../auth/authority.js';
import {
  encodeAccount,
  encodeAsset,
  encodeBalance,
  encodeHead,
  encodeIdentity,
  encodeIndexedPosting,
  encodeJournalChunk,
  encodeLeaf,
  keys,
  storeLayout,
} from '../model/codec.js';
import { assetsMax, defaultTreasuryLimitMinor, genesisEntriesMax, genesisEntriesPerWrite, journalChunkEntriesMax } from '../constants.js';
import { refuse } from '../errors.js';
import type { Account, Asset, AssetKind, Balance, Custody, Head, Identity, Layer, Posting } from '../model/model.js';
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
    const where = `assets[${i}]`;
    const j = object(row, where);
    const id = within(`${where}.id`, () => parseAssetSymbol(j.id, 'id'));
    if (assets.some((a) => a.id === id)) entryError(where, `asset ${id} appears twice`);
    const precision = within(`${where}.precision`, () => parseUintNumber(j.precision, 'precision'));
    if (precision > 255) entryError(`${where}.precision`, 'must be 0..255');
    assets.push({
      id,
      code: i,
      kind: oneOf(j.kind, ['fiat', 'stable', 'native', 'other'], `${where}.kind`),
      precision,
      status: oneOf(j.status, ['active', 'deprecated'], `${where}.status`, 'active'),
      binding: oneOf(j.binding, ['book_only', 'binding', 'bound'], `${where}.binding`, 'book_only'),
      location: j.location === undefined || j.location === null ? null : String(j.location),
    });
  }
  const assetIds = new Set<string>(assets.map((a) => a.id));

  const identities = new Set<IdentityId>([principals.operator, principals.identities]);
  for (const [i, row] of list(doc, 'identities').entries()) {
    const raw = typeof row === 'object' && row !== null ? (row as Json).identity : row;
    identities.add(within(`identities[${i}]`, () => parseIdentityId(raw, 'identity')));
  }

  const accounts: Account[] = [];
  const accountIds = new Set<string>();
  for (const [i, row] of list(doc, 'accounts').entries()) {
    const where = `accounts[${i}]`;
    const j = object(row, where);
    const id = within(`${where}.account`, () => parseAccountId(j.account, 'account'));
    if (accountIds.has(id)) entryError(where, `account ${id} appears twice`);
    const owner = within(`${where}.owner`, () => parseIdentityId(j.owner, 'owner'));
    if (!identities.has(owner)) entryError(`${where}.owner`, `identity ${owner} is not in identities`);
    const kind = oneOf(j.kind, ['customer', 'treasury'], `${where}.kind`);
    const limits: Record<string, bigint> = {};
    const limitsJson = j.treasury_limits === undefined || j.treasury_limits === null ? {} : object(j.treasury_limits, `${where}.treasury_limits`);
    for (const [symbol, value] of Object.entries(limitsJson)) {
      if (!assetIds.has(symbol)) entryError(`${where}.treasury_limits`, `names unknown asset ${symbol}`);
      limits[symbol] = within(`${where}.treasury_limits.${symbol}`, () => parseLimitMinor(value, symbol));
    }
    if (kind !== 'treasury' && Object.keys(limits).length > 0) entryError(`${where}.treasury_limits`, 'apply to treasury accounts only');
    accountIds.add(id);
    accounts.push({
      id,
      owner,
      kind,
      custody: oneOf<Custody>(j.custody, ['delegated', 'owned'], `${where}.custody`, 'delegated'),
      status: oneOf(j.status, ['active', 'closed'], `${where}.status`, 'active'),
      openedAtMs: j.opened_at === undefined ? 0 : within(`${where}.opened_at`, () => parseUintNumber(j.opened_at, 'opened_at')),
      epoch: 0,
      treasuryLimits: limits,
    });
  }
  const byId = new Map(accounts.map((a) => [a.id as string, a]));

  const openings: GenesisOpening[] = [];
  for (const [i, row] of list(doc, 'openings').entries()) {
    const where = `openings[${i}]`;
    const j = object(row, where);
    const account = within(`${where}.account`, () => parseAccountId(j.account, 'account'));
    if (!byId.has(account)) entryError(`${where}.account`, `account ${account} is not in accounts`);
    const asset = within(`${where}.asset`, () => parseAssetSymbol(j.asset, 'asset'));
    if (!assetIds.has(asset)) entryError(`${where}.asset`, `asset ${asset} is not in assets`);
    openings.push({
      account,
      asset,
      amountMinor: within(`${where}.amount`, () => parseAmountMinor(j.amount, 'amount')),
      direction: oneOf(j.direction, ['debit', 'credit'], `${where}.direction`),
      layer: oneOf(j.balance, layers, `${where}.balance`, 'available'),
    });
  }
  const aliases: GenesisAlias[] = [];
  const aliasKeys = new Set<string>();
  for (const [i, row] of list(doc, 'aliases').entries()) {
    const where = `aliases[${i}]`;
    const j = object(row, where);
    if (typeof j.source !== 'string' || typeof j.name !== 'string' || j.source === '' || j.name === '') entryError(where, 'source and name must be non-empty strings');
    const account = within(`${where}.account`, () => parseAccountId(j.account, 'account'));
    if (!byId.has(account)) entryError(`${where}.account`, `account ${account} is not in accounts`);
    const key = keys.alias(j.source, j.name);
    if (aliasKeys.has(key)) entryError(where, 'alias appears twice');
    aliasKeys.add(key);
    aliases.push({ source: j.source, name: j.name, account });
  }
  const archived: { source: string; name: string }[] = [];
  for (const [i, row] of list(doc, 'archived').entries()) {
    const where = `archived[${i}]`;
    const j = object(row, where);
    if (typeof j.source !== 'string' || typeof j.name !== 'string' || j.source === '' || j.name === '') entryError(where, 'source and name must be non-empty strings');
    if (aliasKeys.has(keys.alias(j.source, j.name))) entryError(where, 'an archived identifier cannot also be an alias');
    archived.push({ source: j.source, name: j.name });
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
 * Writes the initial state into an empty store and seals it. The seal and the head
 * are the last write: a crash before it leaves a book the kernel will not open.
 */
export async function importGenesis(store: Store, genesis: Genesis, nowMs: number, extras: SealedExtras = []): Promise<void> {
  assert((await store.get(keys.sealed)) === undefined && (await store.get(keys.head)) === undefined, 'genesis goes into an empty store');
  const balances = checkOpenings(genesis);
  let pending: BatchOp[] = [];
  const put = async (key: string, value: string) => {
    pending.push({ type: 'put', key, value });
    if (pending.length >= genesisEntriesPerWrite) {
      await store.write(pending, false);
      pending = [];
    }
  };
  for (const asset of genesis.assets) await put(keys.asset(asset.id), encodeAsset(asset));
  const owned = new Map<string, AccountId[]>();
  for (const account of genesis.accounts) {
    await put(keys.account(account.id), encodeAccount(account));
    owned.set(account.owner, [...(owned.get(account.owner) ?? []), account.id]);
  }
  for (const id of genesis.identities) {
    const identity: Identity = { id, createdAtMs: nowMs, accounts: owned.get(id) ?? [] };
    await put(keys.identity(id), encodeIdentity(identity));
  }
  const running = new Map<string, Balance>();
  let leaves: string[] = [];
  for (const [i, o] of genesis.openings.entries()) {
    const seq = i + 1;
    const key = keys.balance(o.account, o.asset);
    const b = running.get(key) ?? zeroBalance;
    const after = moved(b, o.layer, o.direction === 'credit' ? o.amountMinor : -o.amountMinor);
    running.set(key, after);
    const posting: Posting = {
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
    const leaf = encodeLeaf(posting);
    leaves.push(leaf);
    await put(keys.accountAsset(o.account, o.asset, seq), encodeIndexedPosting(leaf, posting.reference));
    if (leaves.length === journalChunkEntriesMax || seq === genesis.openings.length) {
      const firstSeq = seq - leaves.length + 1;
      await put(keys.journal(firstSeq), encodeJournalChunk(leaves));
      await put(keys.journalTime(nowMs, firstSeq), '');
      leaves = [];
    }
  }
  const totals = new Map(genesis.assets.map((asset) => [asset.id as string, zeroBalance]));
  for (const [key, b] of balances) {
    await put(key, JSON.stringify(encodeBalance(b)));
    const asset = key.slice(key.lastIndexOf('/') + 1);
    totals.set(asset, plusBalance(totals.get(asset)!, b));
  }
  for (const [asset, total] of totals) {
    const { key, value } = totalsWrite(asset, total);
    await put(key, value);
  }
  for (const a of genesis.aliases) await put(keys.alias(a.source, a.name), a.account);
  for (const a of genesis.archived) await put(keys.archived(a.source, a.name), '');
  await store.write(pending, true);
  const head: Head = { decidedCseq: 0, postingSeq: genesis.openings.length, eventSeq: 0, lastAtMs: nowMs, accounts: genesis.accounts.length };
  await store.write([...extras, { type: 'put', key: keys.head, value: encodeHead(head) }, { type: 'put', key: keys.layout, value: storeLayout }, { type: 'put', key: keys.sealed, value: String(nowMs) }], true);
}
