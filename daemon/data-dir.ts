/**
 * The files of a data dir (CONTRACT 1): where each is, and how one is written so that a
 * crash leaves the old file or the new one whole. Shared by the book (book.ts) and the
 * clerk (clerk.ts), which lean on it and not on each other.
 */
import { chmod, open, rename, writeFile } from 'node:fs/promises';
import { StartupFailure, exitCodes, fsReason } from './failures.js';
import { join } from 'node:path';

export const bookPaths = (dataDir: string) => ({
  book: join(dataDir, 'book'),
  operatorKey: join(dataDir, 'operator.key'),
  identitiesKey: join(dataDir, 'identities.key'),
  clerkKey: join(dataDir, 'clerk.key'),
  clerkPublicKey: join(dataDir, 'clerk.pub'),
  daemonKey: join(dataDir, 'daemon.key'),
  backupKey: join(dataDir, 'backup.key'),
  backupPublicKey: join(dataDir, 'backup.pub'),
  /** Held (an OS lock) by the ledgerd serving from this data dir when the book is on PostgreSQL, as LevelDB's own lock does for `book/`. */
  serveLock: join(dataDir, 'serve.lock'),
  liabilitiesKey: join(dataDir, 'liabilities.key'),
});

export async function writeAtomically(path: string, text: string, mode: number): Promise<void> {
  const temp = `${path}.tmp`;
  await writeFile(temp, text, { mode });
  await chmod(temp, mode);
  await rename(temp, path);
}

/** A small file an operator names (a key, an identity), read whole up to `bytesMax`: a longer one is refused, not read (exit 3). */
export async function readSmallFile(path: string, bytesMax: number, what: string): Promise<string> {
  try {
    const handle = await open(path, 'r');
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(bytesMax + 1), 0, bytesMax + 1, 0);
      if (bytesRead > bytesMax) throw new StartupFailure(`${what} ${path} is longer than ${bytesMax} bytes: it is not one`, exitCodes.config);
      return buffer.subarray(0, bytesRead).toString('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof StartupFailure) throw error;
    throw new StartupFailure(`cannot read ${what} ${path}: ${fsReason(error)}`, exitCodes.config);
  }
}
