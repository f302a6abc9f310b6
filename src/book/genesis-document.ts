/**
 * Genesis documents (CONTRACT 2): the embedded defaults, a document parsed whole (tests
 * and benches build books from one), and any parsed genesis read back as the document it
 * came from, section by section, which is how the import takes every document.
 */
import { builtInPrincipals, type Principals } from '../auth/authority.js';
import { assetsMax, defaultTreasuryLimitMinor, genesisEntriesMax } from '../constants.js';
import type { Account, Asset, AssetKind, Balance } from '../model/model.js';
import { moved, zeroBalance } from '../model/model.js';
import type { AccountId, AssetSymbol, IdentityId } from '../model/values.js';
import { keys } from '../model/keys.js';
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
} from './genesis-entries.js';

/**
 * A genesis document read one section at a time, so no section is ever held whole
 * (the daemon reads a file through it; the kernel never touches files).
 */
export interface GenesisSource {
  /** The document's top-level sections, each checked to be an array; refuses anything else. */
  sections(): Promise<readonly string[]>;
  /** The entries of one section in order, in batches (one await per entry would cost more than checking it). */
  entries(section: string): AsyncIterable<readonly unknown[]>;
}

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

type Json = Record<string, unknown>;

function list(doc: Json, field: string): unknown[] {
  const value = doc[field] ?? [];
  if (!Array.isArray(value)) entryError(field, 'must be an array');
  if (value.length > genesisEntriesMax) entryError(field, `holds more than ${genesisEntriesMax} entries`);
  return value;
}

/** Parses and checks a genesis document held whole; refuses it whole, naming the first bad entry. */
export function parseGenesis(text: string, principals: Principals = builtInPrincipals): Genesis {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    if (error instanceof SyntaxError) entryError('document', `is not JSON (${error.message})`);
    throw error;
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) entryError('document', 'must be an object');
  for (const key of Object.keys(doc)) if (!(genesisSections as readonly string[]).includes(key)) entryError(key, 'is not a genesis section');
  const sections = doc as Json;

  const assets: Asset[] = [];
  const assetRows = list(sections, 'assets');
  if (assetRows.length > assetsMax) entryError('assets', `holds more than ${assetsMax} assets`);
  for (const [i, row] of assetRows.entries()) {
    const asset = parseAssetEntry(row, i);
    if (assets.some((a) => a.id === asset.id)) entryError(`assets[${i}]`, `asset ${asset.id} appears twice`);
    assets.push(asset);
  }
  const assetIds = new Set<string>(assets.map((a) => a.id));

  const identities = new Set<IdentityId>([principals.operator, principals.identities]);
  for (const [i, row] of list(sections, 'identities').entries()) identities.add(parseIdentityEntry(row, i));

  const accounts: Account[] = [];
  const accountIds = new Set<string>();
  for (const [i, row] of list(sections, 'accounts').entries()) {
    const account = parseAccountEntry(row, i, (symbol) => assetIds.has(symbol));
    if (accountIds.has(account.id)) entryError(`accounts[${i}]`, `account ${account.id} appears twice`);
    if (!identities.has(account.owner)) entryError(`accounts[${i}].owner`, `identity ${account.owner} is not in identities`);
    accountIds.add(account.id);
    accounts.push(account);
  }

  const openings: GenesisOpening[] = [];
  for (const [i, row] of list(sections, 'openings').entries()) {
    const opening = parseOpeningEntry(row, i, (symbol) => assetIds.has(symbol));
    if (!accountIds.has(opening.account)) entryError(`openings[${i}].account`, `account ${opening.account} is not in accounts`);
    openings.push(opening);
  }
  const aliases: GenesisAlias[] = [];
  const aliasKeys = new Set<string>();
  for (const [i, row] of list(sections, 'aliases').entries()) {
    const alias = parseAliasEntry(row, i);
    if (!accountIds.has(alias.account)) entryError(`aliases[${i}].account`, `account ${alias.account} is not in accounts`);
    const key = keys.alias(alias.source, alias.name);
    if (aliasKeys.has(key)) entryError(`aliases[${i}]`, 'alias appears twice');
    aliasKeys.add(key);
    aliases.push(alias);
  }
  const archived: { source: string; name: string }[] = [];
  for (const [i, row] of list(sections, 'archived').entries()) {
    const entry = parseArchivedEntry(row, i);
    if (aliasKeys.has(keys.alias(entry.source, entry.name))) entryError(`archived[${i}]`, 'an archived identifier cannot also be an alias');
    archived.push(entry);
  }
  const genesis: Genesis = { assets, identities: [...identities], accounts, openings, aliases, archived };
  checkOpenings(genesis);
  return genesis;
}

/** Openings must balance per asset, stay within the ceiling and leave every account within its floor. */
function checkOpenings(genesis: Genesis): void {
  const balances = new Map<string, Balance>();
  const sums = new Map<string, bigint>();
  for (const [i, o] of genesis.openings.entries()) {
    const key = keys.balance(o.account, o.asset);
    const signed = o.direction === 'credit' ? o.amountMinor : -o.amountMinor;
    const after = moved(balances.get(key) ?? zeroBalance, o.layer, signed);
    checkBalanceCeiling(`openings[${i}]`, o.account, o.asset, after);
    balances.set(key, after);
    sums.set(o.asset, (sums.get(o.asset) ?? 0n) + signed);
  }
  for (const [asset, sum] of sums) if (sum !== 0n) entryError('openings', `do not balance in ${asset} (off by ${sum})`);
  const byId = new Map(genesis.accounts.map((a) => [a.id as string, a]));
  const held = new Map<string, bigint>();
  for (const [key, b] of balances) {
    const [, account, asset] = key.split('/') as [string, string, string];
    const acct = byId.get(account)!;
    const floor = acct.kind === 'treasury' ? -(acct.treasuryLimits[asset] ?? 0n) : 0n;
    if (b.available < floor || b.reserved < 0n || b.encumbered < 0n) entryError('openings', `leave ${account} below its floor in ${asset}`);
    held.set(asset, (held.get(asset) ?? 0n) + heldMinor(b));
  }
  for (const [asset, minor] of held) checkHeldCeiling(asset, minor);
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
      yield doc[section] ?? [];
    },
  };
}
