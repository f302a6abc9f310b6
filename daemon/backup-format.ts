/**
 * The backup file: every key and value of one store snapshot, with the data dir's own
 * keys the book needs to keep working. Lines of JSON (UTF-8, one per line):
 *
 *   {"format":"ledgerd-backup","version":1,"book":..,"createdAtMs":..,"head":{..},"files":{..}}
 *   ["key","value"]                       one per store entry, in key order
 *   {"end":true,"entries":N,"sha256":"<hex>"}
 *
 * `sha256` is of every byte before the trailer line, so a truncated or altered file is
 * refused whole. `files` carries daemon.key (ids are enciphered under keys derived from
 * it: a book restored under another would mint ids that collide with or misdecode its
 * own) and the clerk's key pair (disclosures stay verifiable); the API keys are not
 * carried (the book keeps their hashes, so the principals' keys keep working). The file
 * is therefore a secret, written 0600.
 */
import { createHash } from 'node:crypto';
import { keys } from '../src/model/keys.js';
import { recordJson } from '../src/model/decode.js';
import type { Range, Snapshot } from '../src/store/port.js';
import { backupPageEntries } from './constants.js';

export const backupFormat = 'ledgerd-backup';
export const backupFormatVersion = 1;

/** The data dir files a backup carries, by their name in the data dir: daemon.key always, the clerk's pair when the book has one. */
export const carriedFiles = ['daemon.key', 'clerk.key', 'clerk.pub'] as const;
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
}

export interface BackupTrailer {
  readonly end: true;
  readonly entries: number;
  readonly sha256: string;
}

/** The backup's lines, read from `snap` a page at a time: pulled, so a slow reader holds the reads back (and memory stays bounded). */
export async function* backupLines(snap: Snapshot, book: string, files: CarriedFiles, nowMs: number): AsyncGenerator<string> {
  const hash = createHash('sha256');
  const emit = (line: string): string => {
    hash.update(line);
    return line;
  };
  const headText = await snap.get(keys.head);
  if (headText === undefined) throw new Error('the store holds no book');
  const header: BackupHeader = { format: backupFormat, version: backupFormatVersion, book, createdAtMs: nowMs, head: recordJson(headText, 'head'), files };
  yield emit(`${JSON.stringify(header)}\n`);
  let entries = 0;
  let after: string | null = null;
  for (;;) {
    const range: Range = after === null ? { limit: backupPageEntries } : { gt: after, limit: backupPageEntries };
    let lines = '';
    let read = 0;
    for await (const [key, value] of snap.entries(range)) {
      lines += `${JSON.stringify([key, value])}\n`;
      after = key;
      read++;
    }
    if (read === 0) break;
    entries += read;
    yield emit(lines);
  }
  const trailer: BackupTrailer = { end: true, entries, sha256: hash.digest('hex') };
  yield `${JSON.stringify(trailer)}\n`;
}

export class BadBackup extends Error {
  override name = 'BadBackup';
}

/**
 * Reads a backup's lines in order and checks them: the header first, entries in
 * strictly increasing key order, the trailer last with the count and checksum of what
 * came before. `onEntry` sees each entry before the trailer is checked; the caller
 * commits nothing until this resolves.
 */
export async function readBackup(lines: AsyncIterable<string>, onEntry: (key: string, value: string) => Promise<void>): Promise<{ header: BackupHeader; trailer: BackupTrailer }> {
  const hash = createHash('sha256');
  let header: BackupHeader | null = null;
  let trailer: BackupTrailer | null = null;
  let entries = 0;
  let lastKey: string | null = null;
  for await (const line of lines) {
    if (trailer !== null) throw new BadBackup('data follows the trailer');
    const value = parseLine(line);
    if (header === null) {
      header = checkHeader(value);
    } else if (Array.isArray(value)) {
      const [key, text] = value as unknown[];
      if (value.length !== 2 || typeof key !== 'string' || typeof text !== 'string') throw new BadBackup(`entry ${entries + 1} is not a [key, value] pair of strings`);
      if (lastKey !== null && key <= lastKey) throw new BadBackup(`entry ${entries + 1} is out of key order`);
      lastKey = key;
      entries++;
      await onEntry(key, text);
    } else {
      trailer = value as BackupTrailer;
      if (trailer.end !== true || trailer.entries !== entries || trailer.sha256 !== hash.digest('hex')) {
        throw new BadBackup(`the trailer does not match what came before (${entries} entries read): the file is damaged`);
      }
      continue;
    }
    hash.update(`${line}\n`);
  }
  if (header === null) throw new BadBackup('the file is empty');
  if (trailer === null) throw new BadBackup('the file ends before its trailer: it is truncated');
  return { header, trailer };
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new BadBackup('a line is not JSON: the file is not a ledgerd backup, or is damaged');
  }
}

function checkHeader(value: unknown): BackupHeader {
  const h = value as Partial<BackupHeader> | null;
  if (h === null || typeof h !== 'object' || h.format !== backupFormat) throw new BadBackup('the file is not a ledgerd backup');
  if (h.version !== backupFormatVersion) throw new BadBackup(`backup format version ${String(h.version)} is not one this ledgerd reads (${backupFormatVersion})`);
  const files = h.files as Record<string, unknown> | undefined;
  if (typeof files?.['daemon.key'] !== 'string') throw new BadBackup('the backup lacks daemon.key');
  for (const name of carriedFiles) if (files[name] !== undefined && typeof files[name] !== 'string') throw new BadBackup(`the backup's ${name} is not text`);
  return h as BackupHeader;
}
