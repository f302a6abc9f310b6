/**
 * The data dir's lock for a book on PostgreSQL. On LevelDB the book's own LOCK keeps a
 * second ledgerd off a data dir; on PostgreSQL nothing in the dir is opened for writing,
 * so `serve` holds an OS lock of its own: an empty LevelDB at `DIR/serve.lock`, whose
 * LOCK file (fcntl) the kernel releases when the process ends, however it ends. Holding
 * it proves that no other live process serves from this dir, which is what lets a ledgerd
 * restarted on the same host take its own dead predecessor's lease at once.
 */
import { realpath } from 'node:fs/promises';
import { hostname } from 'node:os';
import { Level } from 'level';
import { dataDirFailure } from './failures.js';
import { bookPaths } from './data-dir.js';

export interface ServeLock {
  /** This host and data dir, as lease holders name them (`HOST:DIR`). */
  readonly place: string;
  release(): Promise<void>;
}

export async function lockServeDir(dataDir: string): Promise<ServeLock> {
  const lock = new Level(bookPaths(dataDir).serveLock);
  try {
    await lock.open();
  } catch (error) {
    throw dataDirFailure(dataDir, error);
  }
  return { place: `${hostname()}:${await realpath(dataDir)}`, release: () => lock.close() };
}
