/**
 * Query values (spec 7). A value that does not parse is ERR-MalformedCommand; a
 * `limit` made of digits but above the page bound, however many digits, is
 * ERR-QueryUnbounded. Schemas have already refused unknown parameters and repeats.
 */
import { movementsPageLimitMax } from '../../src/constants.js';
import { refuse } from '../../src/errors.js';
import { parseUintText } from '../../src/model/values.js';

export type Query = Readonly<Record<string, string | undefined>>;

/** A uint64 time or view in ms, or null when absent. */
export function uintQuery(query: Query, name: string): number | null {
  const text = query[name];
  if (text === undefined) return null;
  const value = parseUintText(text);
  if (value === null) refuse('ERR-MalformedCommand', `${name} must be a uint64 made of digits`);
  return value;
}

export function limitQuery(text: string): number {
  if (!/^[0-9]+$/.test(text)) refuse('ERR-MalformedCommand', 'limit must be made of digits');
  const significant = text.replace(/^0+/, '');
  if (significant.length > String(movementsPageLimitMax).length || Number(significant) > movementsPageLimitMax) {
    refuse('ERR-QueryUnbounded', `limit is above ${movementsPageLimitMax}`);
  }
  if (significant === '') refuse('ERR-MalformedCommand', `limit must be 1..${movementsPageLimitMax}`);
  return Number(significant);
}

/** Bounds sent together, `from` not after `to` (spec 4, endpoint 10). */
export function periodQuery(query: Query): { fromMs: number | null; toMs: number | null } {
  const fromMs = uintQuery(query, 'from');
  const toMs = uintQuery(query, 'to');
  if ((fromMs === null) !== (toMs === null)) refuse('ERR-QueryUnbounded', 'from and to are sent together');
  if (fromMs !== null && toMs !== null && fromMs > toMs) refuse('ERR-QueryUnbounded', 'from is after to');
  return { fromMs, toMs };
}
