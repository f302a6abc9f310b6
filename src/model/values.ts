/**
 * Identifiers, symbols, amounts and times, parsed once at the edge into typed values
 * (CONTRACT 3). Past the edge, the kernel trusts these brands and never re-parses.
 */
import { aliasPartLengthMax, amountDigitsMax, amountMinorMax, idLengthMax, referenceBytesMax, symbolLengthMax } from '../constants.js';
import { refuse } from '../errors.js';

declare const brand: unique symbol;
type Brand<T, B> = T & { readonly [brand]: B };

export type IdentityId = Brand<string, 'IdentityId'>;
export type AccountId = Brand<string, 'AccountId'>;
export type CredentialId = Brand<string, 'CredentialId'>;
export type GrantId = Brand<string, 'GrantId'>;
export type PartyId = Brand<string, 'PartyId'>;
export type AssetSymbol = Brand<string, 'AssetSymbol'>;
/** The raw JSON text of a pass-through `reference`, kept and echoed byte for byte. */
export type ReferenceJson = Brand<string, 'ReferenceJson'>;

export const idPrefix = {
  identity: 'did:ledger:id:',
  account: 'did:ledger:acct:',
  credential: 'did:ledger:cred:',
  grant: 'did:ledger:grant:',
  party: 'did:ledger:party:',
} as const;
export type IdKind = keyof typeof idPrefix;

const idPart = new RegExp(`^[A-Za-z0-9._-]{1,${idLengthMax}}$`);
const symbolPattern = new RegExp(`^[A-Z][A-Z0-9]{0,${symbolLengthMax - 1}}$`);
const digitsPattern = /^(0|[1-9][0-9]*)$/;
const aliasPartPattern = new RegExp(`^[A-Za-z0-9._:@/+-]{1,${aliasPartLengthMax}}$`);
const uintPattern = /^[0-9]+$/;
const fractionPattern = /^(0|[1-9][0-9]*)\.[0-9]+$/;

function isId(kind: IdKind, value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const prefix = idPrefix[kind];
  return value.startsWith(prefix) && idPart.test(value.slice(prefix.length));
}

function parseId<T extends string>(kind: IdKind, value: unknown, field: string): T {
  if (!isId(kind, value)) refuse('ERR-MalformedCommand', `${field} is not a valid ${kind} identifier (${idPrefix[kind]}<id>)`);
  return value as T;
}

export const parseIdentityId = (v: unknown, field = 'identity') => parseId<IdentityId>('identity', v, field);
export const parseAccountId = (v: unknown, field = 'account') => parseId<AccountId>('account', v, field);
export const parseCredentialId = (v: unknown, field = 'credential') => parseId<CredentialId>('credential', v, field);
export const parseGrantId = (v: unknown, field = 'grant') => parseId<GrantId>('grant', v, field);
export const parsePartyId = (v: unknown, field = 'party') => parseId<PartyId>('party', v, field);

export function isAccountId(v: unknown): v is AccountId {
  return isId('account', v);
}
export function isIdentityId(v: unknown): v is IdentityId {
  return isId('identity', v);
}

/** The `<id>` part of an identifier, for building new ones of the same kind. */
export function makeId<T extends string>(kind: IdKind, local: string): T {
  const id = idPrefix[kind] + local;
  if (!isId(kind, id)) refuse('ERR-MalformedCommand', `not a valid ${kind} id part: ${local}`);
  return id as T;
}

export function parseAssetSymbol(value: unknown, field = 'asset'): AssetSymbol {
  if (typeof value !== 'string' || !symbolPattern.test(value)) {
    refuse('ERR-MalformedCommand', `${field} is not a valid asset symbol (1-${symbolLengthMax} of A-Z0-9, first a letter)`);
  }
  return value as AssetSymbol;
}

/** An alias's (or archived identifier's) source or name (constants.ts says which). */
export function parseAliasPart(value: unknown, field: string): string {
  if (typeof value !== 'string' || !aliasPartPattern.test(value)) refuse('ERR-MalformedCommand', `${field} must be 1-${aliasPartLengthMax} of A-Z a-z 0-9 . _ : @ / + -`);
  return value;
}

/**
 * An amount string to minor units. Order of refusals follows CONTRACT 3: a
 * fractional part or a value above 2^128-1 exceeds precision; "0" is zero; any other
 * non-integer text is malformed. `precision` is the asset's count of decimal places:
 * a fraction is refused whatever it is, since amounts are already in minor units.
 */
export function parseAmountMinor(value: unknown, field = 'amount'): bigint {
  if (typeof value !== 'string') refuse('ERR-MalformedCommand', `${field} must be a decimal-integer string of minor units`);
  if (fractionPattern.test(value)) refuse('ERR-PrecisionExceeded', `${field} has a fractional part; amounts are in minor units`);
  if (!digitsPattern.test(value)) refuse('ERR-MalformedCommand', `${field} must be a decimal-integer string of minor units, without sign, leading zeros or exponent`);
  if (value.length > amountDigitsMax) refuse('ERR-PrecisionExceeded', `${field} is above 2^128-1`);
  const amount = BigInt(value);
  if (amount > amountMinorMax) refuse('ERR-PrecisionExceeded', `${field} is above 2^128-1`);
  if (amount === 0n) refuse('ERR-ZeroAmount', `${field} is zero`);
  return amount;
}

/** A non-negative limit amount (treasury limits, grant bounds), where zero is allowed. */
export function parseLimitMinor(value: unknown, field: string): bigint {
  if (typeof value === 'string' && fractionPattern.test(value)) refuse('ERR-PrecisionExceeded', `${field} has a fractional part; amounts are in minor units`);
  if (typeof value !== 'string' || !digitsPattern.test(value)) {
    refuse('ERR-MalformedCommand', `${field} must be a decimal-integer string of minor units`);
  }
  if (value.length > amountDigitsMax || BigInt(value) > amountMinorMax) refuse('ERR-PrecisionExceeded', `${field} is above 2^128-1`);
  return BigInt(value);
}

/** A uint64 time or count given as a JSON number. Above 2^53 it cannot be exact in JSON, so it is refused. */
export function parseUintNumber(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    refuse('ERR-MalformedCommand', `${field} must be a non-negative integer`);
  }
  return value;
}

/** A uint64 given as query text: digits only. Returns null when it does not parse. */
export function parseUintText(value: string): number | null {
  if (!uintPattern.test(value)) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * A pass-through reference: one JSON value, at most 1024 bytes of UTF-8 as sent. The
 * raw text is what is kept and echoed; the daemon extracts it from the request body.
 */
export function parseReferenceJson(raw: string): ReferenceJson {
  if (Buffer.byteLength(raw, 'utf8') > referenceBytesMax) {
    refuse('ERR-MalformedCommand', `reference is over ${referenceBytesMax} bytes of UTF-8`);
  }
  try {
    JSON.parse(raw);
  } catch {
    refuse('ERR-MalformedCommand', 'reference is not one JSON value');
  }
  return raw as ReferenceJson;
}

/** Signed minor units as text (trial balance openings, differences). */
export function signedText(value: bigint): string {
  return value.toString();
}
