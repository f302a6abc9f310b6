/**
 * The files of a data dir (CONTRACT 1): where each is, and how one is written so that a
 * crash leaves the old file or the new one whole. Shared by the book (book.ts) and the
 * clerk (clerk.ts), which lean on it and not on each other.
 */
import { chmod, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const bookPaths = (dataDir: string) => ({
  book: join(dataDir, 'book'),
  operatorKey: join(dataDir, 'operator.key'),
  identitiesKey: join(dataDir, 'identities.key'),
  clerkKey: join(dataDir, 'clerk.key'),
  clerkPublicKey: join(dataDir, 'clerk.pub'),
  daemonKey: join(dataDir, 'daemon.key'),
  liabilitiesKey: join(dataDir, 'liabilities.key'),
});

export async function writeAtomically(path: string, text: string, mode: number): Promise<void> {
  const temp = `${path}.tmp`;
  await writeFile(temp, text, { mode });
  await chmod(temp, mode);
  await rename(temp, path);
}
