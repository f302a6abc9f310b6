/**
 * The book and its data dir (CONTRACT 1): the book in `DIR/book` (LevelDB) or in a
 * PostgreSQL database (book-place.ts), and in the data dir the operator's and the
 * identities principal's API keys (`DIR/operator.key`, `DIR/identities.key`) and the
 * clerk's ed25519 signing key (`DIR/clerk.key`, public half in `DIR/clerk.pub`), the
 * backup key (`DIR/backup.key`, `DIR/backup.pub`; backup-key.ts), and the daemon's own
 * secret (`DIR/daemon.key`).
 * Secret files are mode 0600 and nothing else holds the secrets in clear: the book
 * keeps only their hashes.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { builtInPrincipals } from '../src/auth/authority.js';
import { principalCredentialWrites } from '../src/auth/credentials.js';
import { type GenesisSource, importGenesisSource } from '../src/book/genesis.js';
import { damaged } from '../src/model/decode.js';
import { idEpochMax } from '../src/model/ids.js';
import type { ReadView } from '../src/store/port.js';
import { writeClerkKeys } from './clerk.js';
import { writeBackupKey } from './backup-key.js';
import { bookPaths, writeAtomically } from './data-dir.js';
import { BookExists, type BookPlace, bookPlace } from './book-place.js';
import type { StoreConfig } from './config.js';
import { dataDirFailure } from './failures.js';
import { type Progress, countingWrites } from './progress.js';
import { keys } from '../src/model/keys.js';

export { BookExists };

/** Random bytes in each API key drawn at init (CONTRACT 5: at least 32). */
const apiKeyBytes = 32;

/** Random bytes of the daemon's own secret. */
const daemonSecretBytes = 32;

/** What the daemon's keys are for: each is HMAC-SHA256 of the secret over its label, so none reveals another ('book': the book's identity in backups). */
export type DaemonKeyUse = 'ids' | 'challenges' | 'book' | 'cursors';

/**
 * The daemon's own keys, derived from `DIR/daemon.key` (0600): the id key (the book's
 * ids are enciphered sequence numbers, src/model/ids.ts) and the challenge key (challenges are
 * MAC'd, src/auth/challenges.ts), the cursor key (listing cursors are MAC'd, daemon/http/cursors.ts). Made at init, or at the first start of an older book.
 * Part of the book's state: ids are drawn under it, so it is backed up with the book.
 */
export async function daemonKeys(dataDir: string): Promise<Record<DaemonKeyUse, Uint8Array>> {
  const path = bookPaths(dataDir).daemonKey;
  if (!existsSync(path)) await writeAtomically(path, `${randomBytes(daemonSecretBytes).toString('base64url')}\n`, 0o600);
  const keys = deriveDaemonKeys(await readFile(path, 'utf8'));
  if (keys === null) throw new Error(`${path} does not hold a ${daemonSecretBytes}-byte secret`);
  return keys;
}

/** The keys derived from a daemon.key's text, or null when it does not hold a secret. */
export function deriveDaemonKeys(text: string): Record<DaemonKeyUse, Uint8Array> | null {
  const secret = Buffer.from(text.trim(), 'base64url');
  if (secret.length !== daemonSecretBytes) return null;
  const derive = (use: DaemonKeyUse) => createHmac('sha256', secret).update(`ledgerd ${use} v1`).digest();
  return { ids: derive('ids'), challenges: derive('challenges'), book: derive('book'), cursors: derive('cursors') };
}

/** Where the book of `dataDir` is kept under the `store` setting. */
export function placeOf(dataDir: string, store: StoreConfig): BookPlace {
  return bookPlace(dataDir, bookPaths(dataDir).book, store);
}

/** The book's id epoch (`keyedIds`): 0 until a restore draws one (daemon/restore.ts). */
export async function idsEpoch(store: ReadView): Promise<number> {
  const text = await store.get(keys.idsEpoch);
  if (text === undefined) return 0;
  const epoch = /^(0|[1-9][0-9]{0,14})$/.test(text) ? Number(text) : NaN;
  if (!(epoch <= idEpochMax)) damaged('ids epoch', `${keys.idsEpoch} is not an integer 0..${idEpochMax}`);
  return epoch;
}

/** A fresh id epoch for a restored book: random (two restores of one backup never share one), never 0 nor `previous`. */
export function drawIdsEpoch(previous: number): number {
  for (;;) {
    const epoch = randomBytes(6).readUIntBE(0, 6);
    if (epoch !== 0 && epoch !== previous) return epoch;
  }
}

/** The book's identity (a key derived from daemon.key for it, hex): a book on PostgreSQL is bound to it, backups carry it. */
export async function bookIdentity(dataDir: string): Promise<string> {
  return Buffer.from((await daemonKeys(dataDir)).book).toString('hex');
}

export function drawApiKey(): string {
  return `ledger_${randomBytes(apiKeyBytes).toString('base64url')}`;
}

/**
 * Creates a sealed book for `dataDir` where `store` says. It is built beside its final
 * place and put there last, so a crash at any point leaves either a whole book or none.
 */
/** `progress`: counts the entries written (ledgerd init; serve's first start shows none). */
export async function initBook(dataDir: string, genesis: GenesisSource, nowMs: number, store: StoreConfig, progress?: Progress): Promise<{ backupKey: string }> {
  const paths = bookPaths(dataDir);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const place = placeOf(dataDir, store);
  if (await place.exists()) throw new BookExists(`${place.name} already holds a book`);
  const building = await place.build('init');

  const keys = { operator: drawApiKey(), identities: drawApiKey() };
  try {
    await importGenesisSource(progress === undefined ? building.store : countingWrites(building.store, progress), genesis, nowMs, principalCredentialWrites(builtInPrincipals, keys, nowMs));
  } catch (error) {
    // A refused genesis leaves no book: the half-built one is discarded.
    await building.discard();
    throw error;
  }
  await writeAtomically(paths.operatorKey, `${keys.operator}\n`, 0o600);
  await writeAtomically(paths.identitiesKey, `${keys.identities}\n`, 0o600);
  await writeClerkKeys(dataDir);
  const backupKey = await writeBackupKey(dataDir);
  await building.place(await bookIdentity(dataDir));
  return { backupKey };
}

/**
 * Creates the data dir, or makes a pre-existing one 0700: it holds the book and the
 * secrets, so no other user may list or read it whatever the umask or its history.
 */
export async function prepareDataDir(dataDir: string): Promise<void> {
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await chmod(dataDir, 0o700);
  } catch (error) {
    throw dataDirFailure(dataDir, error);
  }
}
