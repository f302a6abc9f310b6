/**
 * The backup file: every key and value of one store snapshot, with the data dir's own
 * keys the book needs to keep working. Lines of JSON (UTF-8, one per line):
 *
 *   {"format":"ledgerd-backup","version":2,"book":..,"createdAtMs":..,"head":{..},"files":{..},"signedBy":"<hex>"}
 *   ["key","value"]                       one per store entry, in key order
 *   {"end":true,"entries":N,"sha256":"<hex>","signature":"<hex>"}
 *
 * `sha256` is of every byte before the trailer line, so a truncated or altered file is
 * refused whole. A plain hash proves nothing against whoever can write the file (they
 * recompute it), so `signature` is the ed25519 signature of `ledgerd-backup v2 N SHA256`
 * by the book's backup key (`DIR/backup.key`, backup-key.ts), whose secret half no backup
 * carries; a restore verifies it against the public half the operator kept
 * (`--verify-key`, docs/operations.md). `signedBy` names that key, for reading only:
 * trusting it would trust the forger. Version 1 (before signatures) is read only as
 * unverified.
 *
 * `files` carries daemon.key (ids are enciphered under keys derived from it: a book
 * restored under another would mint ids that collide with or misdecode its own) and the
 * clerk's key pair (disclosures stay verifiable); the API keys are not carried (the book
 * keeps their hashes, so the principals' keys keep working). The plain file is therefore
 * a secret, written 0600; served encrypted to an age recipient (routes/backup.ts) it is not.
 * An encrypted backup also carries liabilities.key (the salts of every checkpoint's
 * liabilities leaves derive from it, so a restored book still proves its checkpoints);
 * CONTRACT 12.2 forbids it in a backup in clear, so a plain one never does.
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { keys, ownedKey } from '../src/model/keys.js';
import { recordJson } from '../src/model/decode.js';
import type { Range, Snapshot } from '../src/store/port.js';
import type { Clerk as Signer } from './clerk.js';
import { backupLineBytesMax, backupPageEntries } from './constants.js';

export const backupFormat = 'ledgerd-backup';
export const backupFormatVersion = 2;
/** The version before signatures: restored only with `--accept-unverified`. */
const unsignedVersion = 1;

/**
 * The data dir files a backup carries, by their name in the data dir: daemon.key always, the
 * clerk's pair when the book has one, liabilities.key when the backup is encrypted.
 */
export const carriedFiles = ['daemon.key', 'clerk.key', 'clerk.pub', 'liabilities.key'] as const;
/** What a backup in clear never carries (CONTRACT 12.2). */
export const encryptedOnlyFiles: readonly CarriedFile[] = ['liabilities.key'];
export type CarriedFile = (typeof carriedFiles)[number];
export type CarriedFiles = Partial<Record<CarriedFile, string>> & { readonly 'daemon.key': string };

export interface BackupHeader {
  readonly format: typeof backupFormat;
  readonly version: number;
  /** The book's identity: a key derived from daemon.key for it (reveals nothing of the secret), hex. */
  readonly book: string;
  readonly createdAtMs: number;
  /** The book's head at the snapshot (its `postingSeq` is the journal position, a query's `view`). */
  readonly head: unknown;
  readonly files: CarriedFiles;
  /** The backup key's public half, hex (version 2). */
  readonly signedBy?: string;
}

export interface BackupTrailer {
  readonly end: true;
  readonly entries: number;
  readonly sha256: string;
  /** Version 2: the backup key's signature of `signedText(entries, sha256)`, hex. */
  readonly signature?: string;
}

/** What the backup key signs: the format, the entry count and the checksum of every line before the trailer. */
const signedText = (entries: number, sha256: string) => Buffer.from(`${backupFormat} v${backupFormatVersion} ${entries} ${sha256}`, 'utf8');

/** An ed25519 public key from its raw 32 bytes as hex (what `backup.pub` holds and `ledgerd init` prints). */
export function backupVerifyKey(hex: string): KeyObject {
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new BadBackup('a backup verify key is 64 hex digits (DIR/backup.pub of the book, as ledgerd init printed it)');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(hex, 'hex').toString('base64url') }, format: 'jwk' });
}

/** The backup's lines, read from `snap` a page at a time: pulled, so a slow reader holds the reads back (and memory stays bounded). */
export async function* backupLines(snap: Snapshot, book: string, files: CarriedFiles, nowMs: number, signer: Signer): AsyncGenerator<string> {
  const hash = createHash('sha256');
  const emit = (line: string): string => {
    hash.update(line);
    return line;
  };
  const headText = await snap.get(keys.head);
  if (headText === undefined) throw new Error('the store holds no book');
  const header: BackupHeader = { format: backupFormat, version: backupFormatVersion, book, createdAtMs: nowMs, head: recordJson(headText, 'head'), files, signedBy: signer.publicKeyHex };
  yield emit(`${JSON.stringify(header)}\n`);
  let entries = 0;
  let after: string | null = null;
  for (;;) {
    const range: Range = after === null ? { limit: backupPageEntries } : { gt: after, limit: backupPageEntries };
    let lines = '';
    let read = 0;
    for await (const [key, value] of snap.entries(range)) {
      const line = `${JSON.stringify([key, value])}\n`;
      // Never write what no restore would read back.
      if (Buffer.byteLength(line) > backupLineBytesMax) throw new Error(`store entry ${JSON.stringify(key.slice(0, 100))} is longer than a backup line may be (${backupLineBytesMax} bytes)`);
      lines += line;
      after = key;
      read++;
    }
    if (read === 0) break;
    entries += read;
    yield emit(lines);
  }
  const sha256 = hash.digest('hex');
  const trailer: BackupTrailer = { end: true, entries, sha256, signature: signer.sign(signedText(entries, sha256)).toString('hex') };
  yield `${JSON.stringify(trailer)}\n`;
}

export class BadBackup extends Error {
  override name = 'BadBackup';
}

/**
 * The lines of a byte stream (without their newline), each at most `bytesMax` bytes: a
 * longer one (a file of one endless line) is refused once it passes the bound, before
 * memory grows with it.
 */
export async function* boundedLines(chunks: AsyncIterable<Uint8Array>, bytesMax = backupLineBytesMax): AsyncGenerator<string> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const tooLong = () => new BadBackup(`a line is longer than ${bytesMax} bytes: the file is not a ledgerd backup, or is damaged`);
  for await (const chunk of chunks) {
    let rest = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (let at = rest.indexOf(0x0a); at >= 0; at = rest.indexOf(0x0a)) {
      if (pendingBytes + at > bytesMax) throw tooLong();
      pending.push(rest.subarray(0, at));
      yield Buffer.concat(pending).toString('utf8');
      pending = [];
      pendingBytes = 0;
      rest = rest.subarray(at + 1);
    }
    if (pendingBytes + rest.length > bytesMax) throw tooLong();
    if (rest.length > 0) {
      // Copied: the chunk's buffer may be reused by its source.
      pending.push(Buffer.from(rest));
      pendingBytes += rest.length;
    }
  }
  if (pendingBytes > 0) yield Buffer.concat(pending).toString('utf8');
}

/** How a restore vouches for the file: the kept public half of the book's backup key, or (explicitly, loudly) not at all. */
export type BackupTrust = { readonly verifyKey: KeyObject } | { readonly unverified: true };

/**
 * Reads a backup's lines in order and checks them: the header first, entries in
 * strictly increasing key order and each in a space of the layout, the trailer last with
 * the count and checksum of what came before and, unless `trust` says unverified, the
 * backup key's signature of them. `onHeader` and `onEntry` see each part before the
 * trailer is checked; the caller commits nothing until this resolves.
 */
export async function readBackup(
  lines: AsyncIterable<string>,
  trust: BackupTrust,
  on: { onHeader: (header: BackupHeader) => void; onEntry: (key: string, value: string) => Promise<void> },
): Promise<{ header: BackupHeader; trailer: BackupTrailer }> {
  const hash = createHash('sha256');
  let header: BackupHeader | null = null;
  let trailer: BackupTrailer | null = null;
  let entries = 0;
  let lastKey: string | null = null;
  for await (const line of lines) {
    if (trailer !== null) throw new BadBackup('data follows the trailer');
    const value = parseLine(line);
    if (header === null) {
      header = checkHeader(value, trust);
      on.onHeader(header);
    } else if (Array.isArray(value)) {
      const [key, text] = value as unknown[];
      if (value.length !== 2 || typeof key !== 'string' || typeof text !== 'string') throw new BadBackup(`entry ${entries + 1} is not a [key, value] pair of strings`);
      if (lastKey !== null && key <= lastKey) throw new BadBackup(`entry ${entries + 1} is out of key order`);
      if (!ownedKey(key)) throw new BadBackup(`entry ${entries + 1}, key ${JSON.stringify(key.slice(0, 100))}, is in no space of the book's layout: the file was altered, or is not a backup of this version's books`);
      lastKey = key;
      entries++;
      await on.onEntry(key, text);
    } else {
      trailer = value as BackupTrailer;
      const sha256 = hash.digest('hex');
      if (trailer.end !== true || trailer.entries !== entries || trailer.sha256 !== sha256) {
        throw new BadBackup(`the trailer does not match what came before (${entries} entries read): the file is damaged`);
      }
      if ('verifyKey' in trust && !signatureHolds(trust.verifyKey, entries, sha256, trailer.signature)) {
        // The key the file names is the writer's word (a forger names theirs): said, so an operator who gave the wrong kept key can tell.
        const named = typeof header.signedBy === 'string' && /^[0-9a-f]{64}$/.test(header.signedBy) ? ` (the file says it was signed by ${header.signedBy})` : '';
        throw new BadBackup(`its signature does not verify under the key given${named}: it was not made by the backup key of that book, or was altered since; restore it only once you know where it came from`);
      }
      continue;
    }
    hash.update(`${line}\n`);
  }
  if (header === null) throw new BadBackup('the file is empty');
  if (trailer === null) throw new BadBackup('the file ends before its trailer: it is truncated');
  return { header, trailer };
}

function signatureHolds(key: KeyObject, entries: number, sha256: string, signature: unknown): boolean {
  if (typeof signature !== 'string' || !/^[0-9a-f]{128}$/.test(signature)) return false;
  return verify(null, signedText(entries, sha256), key, Buffer.from(signature, 'hex'));
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new BadBackup('a line is not JSON: the file is not a ledgerd backup, or is damaged');
  }
}

function checkHeader(value: unknown, trust: BackupTrust): BackupHeader {
  const h = value as Partial<BackupHeader> | null;
  if (h === null || typeof h !== 'object' || h.format !== backupFormat) throw new BadBackup('the file is not a ledgerd backup');
  if (h.version === unsignedVersion) {
    if ('verifyKey' in trust) throw new BadBackup('it is an unsigned backup (format version 1, from an older ledgerd), so nothing can verify it; restore it with --accept-unverified only if you know where it came from');
  } else if (h.version !== backupFormatVersion) {
    throw new BadBackup(`backup format version ${String(h.version)} is not one this ledgerd reads (${unsignedVersion}, ${backupFormatVersion})`);
  }
  if (typeof h.book !== 'string') throw new BadBackup('the backup does not name its book');
  const files = h.files as Record<string, unknown> | undefined;
  if (typeof files?.['daemon.key'] !== 'string') throw new BadBackup('the backup lacks daemon.key');
  for (const name of carriedFiles) if (files[name] !== undefined && typeof files[name] !== 'string') throw new BadBackup(`the backup's ${name} is not text`);
  return h as BackupHeader;
}
