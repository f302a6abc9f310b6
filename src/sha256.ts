/**
 * SHA-256 in one call. Node's one-shot `crypto.hash` (20.12 and later) takes a third of the
 * time a Hash object's chain does, which counts where every request, account or journal entry
 * takes one; 20.11, which package.json allows, has none: there, the chain.
 */
import * as crypto from 'node:crypto';

const oneShot = typeof crypto.hash === 'function';

/** The digest of `data` (a string as its UTF-8). */
export const sha256: (data: string | Buffer) => Buffer = oneShot
  ? (data) => crypto.hash('sha256', data, 'buffer')
  : (data) => crypto.createHash('sha256').update(data).digest();

/** Lowercase hex SHA-256 of `text`'s UTF-8. */
export const sha256Hex: (text: string) => string = oneShot
  ? (text) => crypto.hash('sha256', text, 'hex')
  : (text) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
