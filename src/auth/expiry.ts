/**
 * Expiry indexes: `<space>/<expiresAtMs, 16 hex digits>/<hash>` sorts by time, so the
 * records expired at `nowMs` are one ordered scan from `<space>/` up to
 * `expiryScanEnd(space, nowMs)`, and pruning never reads live ones.
 */
import { assert } from '../assert.js';
import { seqHex } from '../model/codec.js';

export type ExpirySpace = 'chalx' | 'tokx';

export function expiryKey(space: ExpirySpace, expiresAtMs: number, hashHex: string): string {
  return `${space}/${seqHex(expiresAtMs)}/${hashHex}`;
}

/** Exclusive upper end of the index entries expired at `nowMs` (expired: `nowMs >= expiresAtMs`). */
export function expiryScanEnd(space: ExpirySpace, nowMs: number): string {
  return `${space}/${seqHex(nowMs + 1)}/`;
}

/** The hash an index entry names (its last segment), to delete the record it indexes. */
export function expiryHash(indexKey: string): string {
  const hash = indexKey.slice(indexKey.lastIndexOf('/') + 1);
  assert(/^[0-9a-f]{64}$/.test(hash), 'an expiry index entry ends in a sha256 hex');
  return hash;
}
