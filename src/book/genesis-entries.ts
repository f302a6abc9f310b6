/**
 * One entry of a genesis document (CONTRACT 2), checked on its own: its members, the
 * type of every value, its ids, symbols and amounts. References across sections (an
 * account's owner, an opening's account) are checked by the import.
 */
import { amountMinorMax, assetPrecisionMax } from '../constants.js';
import { refuse } from '../errors.js';
import type { Account, Asset, Balance, Custody, Layer } from '../model/model.js';
import { layers } from '../model/model.js';
import {
  type AccountId,
  type AssetSymbol,
  type IdentityId,
  parseAccountId,
  parseAliasPart,
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

/** The sections of a document, in the order the import takes them. */
export const genesisSections = ['assets', 'identities', 'accounts', 'openings', 'aliases', 'archived'] as const;

type Json = Record<string, unknown>;

export function entryError(where: string, message: string): never {
  refuse('ERR-MalformedCommand', `genesis ${where}: ${message}`);
}

/**
 * Text from the file shown in a refusal: as it is when it is plainly a name, else quoted
 * with every control and bidirectional character escaped and cut short, so a hostile
 * file cannot write to the operator's terminal or log through ledgerd's message.
 */
export function shown(text: string): string {
  if (/^[A-Za-z0-9._:@/+-]{1,64}$/.test(text)) return text;
  const cut = text.length > 64 ? `${text.slice(0, 64)}…` : text;
  return JSON.stringify(cut).replace(/[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Where an entry is, for its refusals: `section[i]`, and `section[i].member`. Built only
 * when an entry is refused (a string per member of every entry was much of the import's garbage).
 */
class At {
  constructor(
    readonly section: string,
    readonly i: number,
  ) {}
  toString(): string {
    return `${this.section}[${this.i}]`;
  }
  member(name: string): string {
    return `${this.section}[${this.i}].${name}`;
  }
}
type Where = string | At;
const memberOf = (where: Where, name: string) => (typeof where === 'string' ? `${where}.${name}` : where.member(name));

/** An object entry whose members are all among `allowed` (a member the import would ignore is refused, not dropped). */
function object(value: unknown, where: Where, allowed: readonly string[]): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) entryError(String(where), 'must be an object');
  for (const member of Object.keys(value)) if (!allowed.includes(member)) entryError(String(where), `member ${shown(member)} is not one of ${allowed.join(', ')}`);
  return value as Json;
}

function within<T>(where: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    refusedAt(where, error);
  }
}
function refusedAt(where: string, error: unknown): never {
  const message = error instanceof Error ? error.message.replace(/^ERR-[A-Za-z]+: /, '') : String(error);
  entryError(where, message);
}
/** `parse(value, field)`, its refusal named by the entry's member `name`. */
function member<T>(where: Where, name: string, parse: (value: unknown, field: string) => T, value: unknown, field = name): T {
  try {
    return parse(value, field);
  } catch (error) {
    refusedAt(memberOf(where, name), error);
  }
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], where: Where, name: string, fallback?: T): T {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'string' || !allowed.includes(value as T)) entryError(memberOf(where, name), `must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** A settlement-layer location, as `bind_asset` takes it: 32 bytes of lowercase hex. */
function location(value: unknown, where: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !/^[0-9a-f]{64}$/.test(value)) entryError(where, 'must be null or 32 bytes of lowercase hex');
  return value;
}

export function parseAssetEntry(row: unknown, i: number): Asset {
  const where = `assets[${i}]`;
  const j = object(row, where, ['id', 'kind', 'precision', 'status', 'binding', 'location']);
  const id = within(`${where}.id`, () => parseAssetSymbol(j.id, 'id'));
  const precision = within(`${where}.precision`, () => parseUintNumber(j.precision, 'precision'));
  if (precision > assetPrecisionMax) entryError(`${where}.precision`, `must be 0..${assetPrecisionMax}`);
  return {
    id,
    code: i,
    kind: oneOf(j.kind, ['fiat', 'stable', 'native', 'other'], where, 'kind'),
    precision,
    status: oneOf(j.status, ['active', 'deprecated'], where, 'status', 'active'),
    binding: oneOf(j.binding, ['book_only', 'binding', 'bound'], where, 'binding', 'book_only'),
    location: location(j.location, `${where}.location`),
  };
}

export function parseIdentityEntry(row: unknown, i: number): IdentityId {
  const raw = typeof row === 'object' && row !== null && !Array.isArray(row) ? object(row, new At('identities', i), ['identity']).identity : row;
  try {
    return parseIdentityId(raw, 'identity');
  } catch (error) {
    refusedAt(`identities[${i}]`, error);
  }
}

export function parseAccountEntry(row: unknown, i: number, isAsset: (symbol: string) => boolean): Account {
  const at = new At('accounts', i);
  const j = object(row, at, ['account', 'owner', 'kind', 'custody', 'status', 'opened_at', 'treasury_limits']);
  const id = member(at, 'account', parseAccountId, j.account);
  const owner = member(at, 'owner', parseIdentityId, j.owner);
  const kind = oneOf(j.kind, ['customer', 'treasury'], at, 'kind');
  const limits: Record<string, bigint> = {};
  if (j.treasury_limits !== undefined && j.treasury_limits !== null) {
    const where = at.member('treasury_limits');
    for (const [symbol, value] of Object.entries(treasuryLimits(j.treasury_limits, where))) {
      within(where, () => parseAssetSymbol(symbol, 'a member'));
      if (!isAsset(symbol)) entryError(where, `names unknown asset ${symbol}`);
      limits[symbol] = within(`${where}.${symbol}`, () => parseLimitMinor(value, symbol));
    }
    if (kind !== 'treasury' && Object.keys(limits).length > 0) entryError(where, 'apply to treasury accounts only');
  }
  return {
    id,
    owner,
    kind,
    custody: oneOf<Custody>(j.custody, ['delegated', 'owned'], at, 'custody', 'delegated'),
    status: oneOf(j.status, ['active', 'closed'], at, 'status', 'active'),
    openedAtMs: j.opened_at === undefined ? 0 : member(at, 'opened_at', parseUintNumber, j.opened_at),
    epoch: 0,
    treasuryLimits: limits,
  };
}

function treasuryLimits(value: unknown, where: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) entryError(where, 'must be an object');
  return value as Json;
}

export function parseOpeningEntry(row: unknown, i: number, isAsset: (symbol: string) => boolean): GenesisOpening {
  const at = new At('openings', i);
  const j = object(row, at, ['account', 'asset', 'amount', 'direction', 'balance']);
  const account = member(at, 'account', parseAccountId, j.account);
  const asset = member(at, 'asset', parseAssetSymbol, j.asset);
  if (!isAsset(asset)) entryError(at.member('asset'), `asset ${asset} is not in assets`);
  return {
    account,
    asset,
    amountMinor: member(at, 'amount', parseAmountMinor, j.amount),
    direction: oneOf(j.direction, ['debit', 'credit'], at, 'direction'),
    layer: oneOf(j.balance, layers, at, 'balance', 'available'),
  };
}

function parseNamed(j: Json, at: At): { source: string; name: string } {
  return { source: member(at, 'source', parseAliasPart, j.source), name: member(at, 'name', parseAliasPart, j.name) };
}

export function parseAliasEntry(row: unknown, i: number): GenesisAlias {
  const at = new At('aliases', i);
  const j = object(row, at, ['source', 'name', 'account']);
  return { ...parseNamed(j, at), account: member(at, 'account', parseAccountId, j.account) };
}

export function parseArchivedEntry(row: unknown, i: number): { source: string; name: string } {
  const at = new At('archived', i);
  return parseNamed(object(row, at, ['source', 'name']), at);
}

/**
 * A balance an opening leaves must stay within what CONTRACT 3 and the codec carry:
 * every layer within ±(2^128 − 1), like any amount.
 */
export function checkBalanceCeiling(where: string, account: string, asset: string, balance: Balance): void {
  for (const layer of layers) {
    const value = balance[layer];
    if (value > amountMinorMax || value < -amountMinorMax) entryError(where, `leaves ${account}'s ${layer} balance in ${asset} past 2^128-1`);
  }
}

/**
 * What the book holds of one asset (the sum of every account's non-negative layers; in a
 * balanced book also what the negative ones owe) must stay within 2^128 − 1, so every
 * per-asset total the book keeps does.
 */
export function checkHeldCeiling(asset: string, heldMinor: bigint): void {
  if (heldMinor > amountMinorMax) entryError('openings', `leave more than 2^128-1 of ${asset} held in all`);
}

/** A balance's non-negative layers, summed: its part of what is held. */
export const heldMinor = (b: Balance): bigint => layers.reduce((sum, layer) => sum + (b[layer] > 0n ? b[layer] : 0n), 0n);
