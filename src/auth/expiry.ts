/**
 * Expiry indexes (the keys: model/keys.ts, expiryKey): `<space>/<expiresAtMs>/<hash>`
 * sorts by time, so pruning never reads live records.
 */
import { assert } from '../assert.js';

/** The hash an index entry names (its last segment), to delete the record it indexes. */
export function expiryHash(indexKey: string): string {
  const hash = indexKey.slice(indexKey.lastIndexOf('/') + 1);
  assert(/^[0-9a-f]{64}$/.test(hash), 'an expiry index entry ends in a sha256 hex');
  return hash;
}
