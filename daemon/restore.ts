/**
 * `ledgerd restore --from FILE --data-dir DIR (--verify-key KEY | --accept-unverified)
 * [--identity FILE]`: a book from a backup (backup-format.ts), with the data dir keys it
 * carries. Like init, the book is built beside its final place (`DIR/book.restore`, or a
 * table beside `ledgerd_kv`) and put in place last: a crash, or a backup found truncated,
 * altered, unsigned, foreign or too long at any line, leaves no book behind.
 *
 * What a restore vouches for (docs/operations.md, Backups): the backup key's signature
 * over the whole file; every record in a space of the layout; the carried daemon.key the
 * one of the book it names, and the one its operation references were enciphered under.
 * A file encrypted to an age recipient (routes/backup.ts) is decrypted as it is read.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { keyedIds, type IdSource } from '../src/model/ids.js';
import { DamagedRecord } from '../src/model/decode.js';
import type { BatchOp } from '../src/store/port.js';
import { BadBackup, type BackupHeader, type BackupTrailer, type BackupTrust, type CarriedFile, boundedLines, carriedFiles, readBackup } from './backup-format.js';
import { writeBackupKey } from './backup-key.js';
import { BookExists, bookIdentity, deriveDaemonKeys, drawIdsEpoch, idsEpoch, placeOf, prepareDataDir } from './book.js';
import { readSmallFile, writeAtomically } from './data-dir.js';
import type { StoreConfig } from './config.js';
import { StartupFailure, exitCodes, fsReason } from './failures.js';
import { keySpaces, keys } from '../src/model/keys.js';
import { restoreBatchEntries } from './constants.js';
import { type Progress, countingWrites } from './progress.js';

const carriedModes: Record<CarriedFile, number> = { 'daemon.key': 0o600, 'clerk.key': 0o600, 'clerk.pub': 0o644, 'liabilities.key': 0o600 };

/** The first line of every age file (age-encryption.org/v1). */
const ageMagic = Buffer.from('age-encryption.org/v1\n');
/** Longest identity file `--identity` reads (an age-keygen file is under 200 bytes). */
const identityFileBytesMax = 64 * 1024;

export interface RestoreSource {
  readonly from: string;
  readonly trust: BackupTrust;
  /** An age identity file, for a backup encrypted to its recipient. */
  readonly identity: string | undefined;
}

export interface Restored {
  readonly header: BackupHeader;
  readonly trailer: BackupTrailer;
  /** The restored book's new backup key, public half (hex). */
  readonly backupKey: string;
}

/** `progress`: counts the entries written, and measures the share of the file read. */
export async function restoreBook(source: RestoreSource, dataDir: string, storeConfig: StoreConfig, progress?: Progress): Promise<Restored> {
  const { from } = source;
  let input;
  try {
    input = await open(from, 'r');
  } catch (error) {
    throw new StartupFailure(`cannot read backup file ${from}: ${fsReason(error)}`, exitCodes.config);
  }
  try {
    const fileBytes = (await input.stat()).size;
    const { plain, file } = await plainBytes(input, source);
    progress?.measure(() => (fileBytes === 0 ? null : file.bytesRead / fileBytes));
    const lines = boundedLines(plain);
    await prepareDataDir(dataDir);
    const place = placeOf(dataDir, storeConfig);
    if (await place.exists()) throw new BookExists(`${place.name} already holds a book`);
    const building = await place.build('restore');
    const store = progress === undefined ? building.store : countingWrites(building.store, progress);
    let read;
    try {
      let batch: BatchOp[] = [];
      let entries = 0;
      let ids: IdSource | null = null;
      read = await readBackup(lines, source.trust, {
        onHeader: (header) => {
          ids = keyedIds(carriedKeysOf(header).ids);
        },
        onEntry: async (key, value) => {
          // The carried key must be the one the book's ids were drawn under: else every reference would be misread.
          if (key.startsWith(keySpaces.operation) && ids!.cseqOf(key.slice(keySpaces.operation.length)) === null) {
            throw new BadBackup(`operation ${JSON.stringify(key.slice(keySpaces.operation.length, 100))} was not drawn under the daemon.key the backup carries: the key does not belong to this book`);
          }
          batch.push({ type: 'put', key, value });
          entries++;
          if (batch.length < restoreBatchEntries) return;
          await store.write(batch, false);
          batch = [];
        },
      });
      if (entries === 0) throw new BadBackup('the backup holds no entries');
      if (batch.length > 0) await store.write(batch, false);
      // The source may have drawn ids after the backup: the restored book draws its own (docs/operations.md, Backups).
      // Not one of the backup's entries, so not counted: the progress summary's count is the backup's.
      await building.store.write([{ type: 'put', key: keys.idsEpoch, value: String(drawIdsEpoch(await idsEpoch(store))) }], true);
    } catch (error) {
      await building.discard();
      if (error instanceof BadBackup) throw new StartupFailure(`backup file ${from}: ${error.message}`, exitCodes.config);
      // The trailer matched: the book the backup was taken from holds the damage (only the id epoch is decoded here).
      if (error instanceof DamagedRecord) {
        throw new StartupFailure(
          `backup file ${from}: its ${keys.idsEpoch} record is damaged (${error.message}), so the book it was taken from is damaged; run \`ledgerd check\` on that book, and restore from an earlier backup of it`,
          exitCodes.config,
        );
      }
      throw error;
    }
    for (const name of carriedFiles) {
      const text = read.header.files[name];
      if (text !== undefined) await writeAtomically(join(dataDir, name), text, carriedModes[name]);
    }
    // Never the source's: whoever held that one's secret could sign backups this book would take.
    const backupKey = await writeBackupKey(dataDir);
    await building.place(await bookIdentity(dataDir));
    return { ...read, backupKey };
  } finally {
    await input.close();
  }
}

/** The daemon keys of the carried daemon.key, which must be the ones of the book the header names. */
function carriedKeysOf(header: BackupHeader): NonNullable<ReturnType<typeof deriveDaemonKeys>> {
  const carried = deriveDaemonKeys(header.files['daemon.key']);
  if (carried === null) throw new BadBackup('its daemon.key holds no secret');
  if (Buffer.from(carried.book).toString('hex') !== header.book) throw new BadBackup('its daemon.key is not the key of the book it names: the key was swapped');
  return carried;
}

/** The file's plain bytes: as they are, or decrypted with the identity when the file is encrypted to an age recipient; and the file's stream (how far it is read). */
async function plainBytes(input: Awaited<ReturnType<typeof open>>, source: RestoreSource): Promise<{ plain: AsyncIterable<Uint8Array>; file: { readonly bytesRead: number } }> {
  const { buffer, bytesRead } = await input.read(Buffer.alloc(ageMagic.length), 0, ageMagic.length, 0);
  const encrypted = bytesRead === ageMagic.length && buffer.equals(ageMagic);
  const bytes = input.createReadStream({ start: 0, autoClose: false });
  if (!encrypted) {
    if (source.identity !== undefined) throw new StartupFailure(`backup file ${source.from} is not encrypted to an age recipient: restore it without --identity (or find the encrypted copy)`, exitCodes.config);
    return { plain: bytes, file: bytes };
  }
  if (source.identity === undefined) throw new StartupFailure(`backup file ${source.from} is encrypted to an age recipient: give its identity file with --identity FILE`, exitCodes.config);
  // Loaded only for an encrypted backup: age and its ciphers cost every other command's start.
  const { Decrypter } = await import('age-encryption');
  const decrypter = new Decrypter();
  let plain: ReadableStream<Uint8Array>;
  try {
    for (const identity of await readIdentities(source.identity)) decrypter.addIdentity(identity);
    plain = await decrypter.decrypt(Readable.toWeb(bytes) as ReadableStream<Uint8Array>);
  } catch (error) {
    if (error instanceof StartupFailure) throw error;
    throw new StartupFailure(`backup file ${source.from} does not decrypt with ${source.identity}: ${(error as Error).message}`, exitCodes.config);
  }
  return { plain: decrypted(plain), file: bytes };
}

/** A decryption that fails midway (a chunk altered or cut off) is a bad backup like any other. */
async function* decrypted(plain: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    yield* plain as unknown as AsyncIterable<Uint8Array>;
  } catch (error) {
    throw new BadBackup(`it does not decrypt: ${(error as Error).message} (altered or truncated)`);
  }
}

/** The age identities of an identity file (as age-keygen writes it: comments, then `AGE-SECRET-KEY-1…` lines). */
async function readIdentities(path: string): Promise<string[]> {
  const text = await readSmallFile(path, identityFileBytesMax, 'identity file');
  const identities = text.split('\n').map((line) => line.trim()).filter((line) => line.startsWith('AGE-SECRET-KEY-1'));
  if (identities.length === 0) throw new StartupFailure(`identity file ${path} holds no age X25519 identity (an AGE-SECRET-KEY-1… line, as age-keygen writes)`, exitCodes.config);
  return identities;
}
