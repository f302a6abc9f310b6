/**
 * The one checked decode path for stored records: the text must be a JSON object and
 * each field the decoder reads must have its shape, or the record is refused as
 * damaged, naming the record kind and the field. Fields a decoder does not read are
 * left alone (a newer writer may add some), and a record that checks is returned as
 * parsed, so decoding and encoding again keeps its bytes.
 */
import { AssertionFailure } from '../assert.js';

/**
 * A stored record that does not decode: the book is damaged (or a bug wrote it). To the
 * kernel it is a failed assertion (the book can no longer be vouched for: fatal);
 * `ledgerd check` reports it as a problem of the book.
 */
export class DamagedRecord extends AssertionFailure {
  override name = 'DamagedRecord';
}

export type Json = Record<string, unknown>;

export function damaged(what: string, why: string): never {
  throw new DamagedRecord(`damaged ${what} record: ${why}`);
}

/** A stored value's text as JSON of any shape, or refused as damaged. */
export function parsed(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return damaged(what, 'is not JSON');
  }
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A stored record's text as a JSON object, or refused as damaged. */
export function recordJson(text: string, what: string): Json {
  const j = parsed(text, what);
  if (!isObject(j)) damaged(what, 'is not a JSON object');
  return j;
}

/** A stored list of records (an event chunk) as JSON objects, or refused as damaged. */
export function recordJsonList(text: string, what: string): Json[] {
  const j = parsed(text, what);
  if (!Array.isArray(j) || !j.every(isObject)) damaged(what, 'is not a list of JSON objects');
  return j;
}

/** Every member of a string union, listed once: a member missing or unknown fails to compile. */
export const members = <T extends string>(all: Record<T, true>): readonly T[] => Object.keys(all) as T[];

const decimalPattern = /^-?(0|[1-9][0-9]*)$/;
const digestHexPattern = /^[0-9a-f]{64}$/;

/** An amount stored as decimal text (bigint kept exact), or the record is damaged. */
export function decimalText(v: unknown, name: string, what: string): bigint {
  if (typeof v !== 'string' || !decimalPattern.test(v)) damaged(what, `${name} is not decimal text`);
  return BigInt(v);
}

/** Field checks over a parsed record: each returns the value when it has the shape, or refuses the record (messages built only then). */
export const check = {
  string(j: Json, name: string, what: string): string {
    const v = j[name];
    if (typeof v !== 'string') damaged(what, `${name} is not a string`);
    return v;
  },
  nullableString(j: Json, name: string, what: string): string | null {
    const v = j[name];
    if (v !== null && typeof v !== 'string') damaged(what, `${name} is not a string or null`);
    return v;
  },
  integer(j: Json, name: string, what: string): number {
    const v = j[name];
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) damaged(what, `${name} is not an integer`);
    return v;
  },
  nullableInteger(j: Json, name: string, what: string): number | null {
    const v = j[name];
    if (v !== null && (typeof v !== 'number' || !Number.isSafeInteger(v))) damaged(what, `${name} is not an integer or null`);
    return v;
  },
  oneOf<T extends string>(j: Json, name: string, allowed: readonly T[], what: string): T {
    const v = j[name];
    if (typeof v !== 'string' || !allowed.includes(v as T)) damaged(what, `${name} is not one of ${allowed.join(', ')}`);
    return v as T;
  },
  strings(j: Json, name: string, what: string): readonly string[] {
    const v = j[name];
    if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) damaged(what, `${name} is not a list of strings`);
    return v;
  },
  nullableStrings(j: Json, name: string, what: string): readonly string[] | null {
    return j[name] === null ? null : check.strings(j, name, what);
  },
  boolean(j: Json, name: string, what: string): boolean {
    const v = j[name];
    if (typeof v !== 'boolean') damaged(what, `${name} is not true or false`);
    return v;
  },
  /** Lower-case hex of a SHA-256 digest (a hash, a commitment, a block's digest). */
  digestHex(j: Json, name: string, what: string): string {
    const v = j[name];
    if (typeof v !== 'string' || !digestHexPattern.test(v)) damaged(what, `${name} is not a SHA-256 digest in hex`);
    return v;
  },
  objects(j: Json, name: string, what: string): readonly Json[] {
    const v = j[name];
    if (!Array.isArray(v) || !v.every(isObject)) damaged(what, `${name} is not a list of objects`);
    return v;
  },
  object(j: Json, name: string, what: string): Json {
    const v = j[name];
    if (!isObject(v)) damaged(what, `${name} is not an object`);
    return v;
  },
  decimal(j: Json, name: string, what: string): bigint {
    return decimalText(j[name], name, what);
  },
  /** An object of amounts stored as decimal text, by name (an asset or a location). */
  decimals(j: Json, name: string, what: string): Record<string, bigint> {
    const stored = check.object(j, name, what);
    const out: Record<string, bigint> = {};
    for (const k of Object.keys(stored)) out[k] = decimalText(stored[k], k, what);
    return out;
  },
};

