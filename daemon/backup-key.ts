/**
 * The backup key (docs/operations.md, Backups): an ed25519 key pair of the data dir,
 * `DIR/backup.key` (0600) and `DIR/backup.pub`, that signs every backup the daemon
 * streams. Its secret half is in no backup (unlike daemon.key and the clerk's key, which
 * a backup carries), so whoever can read or write backups cannot sign one; the operator
 * keeps the public half apart from the backups (`ledgerd init` prints it) and restores
 * with `--verify-key`. Made at init, at the first start of a book that has none, and
 * afresh by each restore.
 */
import type { KeyObject } from 'node:crypto';
import { BadBackup, backupVerifyKey } from './backup-format.js';
import { type Clerk, type KeyPairPaths, loadKeyPair, writeKeyPair } from './clerk.js';
import { bookPaths, readSmallFile } from './data-dir.js';
import { StartupFailure, exitCodes } from './failures.js';

const backupKeyPaths = (dataDir: string): KeyPairPaths => ({ privateKey: bookPaths(dataDir).backupKey, publicKey: bookPaths(dataDir).backupPublicKey });

/** Draws a new backup key for `dataDir`; its public half, hex. */
export function writeBackupKey(dataDir: string): Promise<string> {
  return writeKeyPair(backupKeyPaths(dataDir));
}

/** The data dir's backup key, made if absent (a book from before backups were signed). */
export function loadBackupKey(dataDir: string): Promise<Clerk> {
  return loadKeyPair(backupKeyPaths(dataDir));
}

/** Longest file `--verify-key` reads (a backup.pub is 65 bytes). */
const verifyKeyFileBytesMax = 4096;

/** `--verify-key`: the public half as 64 hex digits, or a file holding it (a kept copy of backup.pub). */
export async function readVerifyKey(given: string): Promise<KeyObject> {
  const hex = (/^[0-9a-fA-F]{64}$/.test(given.trim()) ? given : await readSmallFile(given, verifyKeyFileBytesMax, '--verify-key file')).trim().toLowerCase();
  try {
    return backupVerifyKey(hex);
  } catch (error) {
    if (error instanceof BadBackup) throw new StartupFailure(`--verify-key: ${error.message}`, exitCodes.config);
    throw error;
  }
}
