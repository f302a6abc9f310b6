/**
 * A genesis file read as a stream (issue 10): one pass checks the whole document's
 * shape and bounds (genesis-scan.ts), lists its sections and notes where each begins,
 * then each section is streamed from there, a chunk of the file's entries at a time,
 * when the import asks for it. Nothing holds more than one chunk of the file at a time.
 * The file is opened once, and must be a regular file: the passes read it again at
 * their offsets, which a pipe (`<(…)`, a FIFO) cannot give, and opening a FIFO with no
 * writer would wait for ever.
 */
import { close, constants, fstat, open, read } from 'node:fs';
import { promisify } from 'node:util';
import { assert } from '../src/assert.js';
import type { GenesisSource } from '../src/book/genesis.js';
import { StartupFailure, exitCodes, fsReason } from './failures.js';
import { GenesisScan } from './genesis-scan.js';

/** A genesis file held open: its source, and `close` once the import is done. */
export interface GenesisFile extends GenesisSource {
  /** The share of the file's entries the import has taken (0 to 1), once the first pass has counted them; for progress. */
  share(): number | null;
  close(): Promise<void>;
}

const unreadable = (path: string, error: unknown) => new StartupFailure(`cannot read genesis file ${path}: ${fsReason(error)}`, exitCodes.config);

/** Opens the file without waiting on it (O_NONBLOCK: a FIFO with no writer opens at once) and refuses anything but a regular file. */
export async function openGenesisFile(path: string): Promise<GenesisFile> {
  let fd: number;
  try {
    fd = await promisify(open)(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw unreadable(path, error);
  }
  const closeFile = () => promisify(close)(fd);
  if (!(await promisify(fstat)(fd)).isFile()) {
    await closeFile();
    throw new StartupFailure(`genesis file ${path} is not a regular file (a pipe, a socket or a device): ledgerd reads it section by section, from its start each time; save it to a file and give that`, exitCodes.config);
  }
  return { ...genesisFromFd(path, fd), close: closeFile };
}

/** Bytes read from the file at a time. */
const readBytes = 1 << 20;
const bom = [0xef, 0xbb, 0xbf];

function genesisFromFd(path: string, fd: number): Omit<GenesisFile, 'close'> {
  const readAt = promisify(read);
  /** Where each section's array begins in the file, found by the first pass. */
  const offsets = new Map<string, number>();
  /**
   * Feeds the file from `from` to a scan in chunks of readBytes, handing out each chunk's
   * entries. A lexeme cut by a chunk's end is carried into the next read (it is bounded:
   * the scan refuses a long one before it is whole).
   */
  async function* walk(scan: GenesisScan, from: number): AsyncGenerator<unknown[]> {
    const buf = Buffer.allocUnsafe(readBytes);
    let kept = 0;
    let offset = from;
    for (;;) {
      let bytesRead: number;
      try {
        ({ bytesRead } = await readAt(fd, buf, kept, buf.length - kept, offset + kept));
      } catch (error) {
        throw unreadable(path, error);
      }
      const end = kept + bytesRead;
      const last = bytesRead === 0;
      // A UTF-8 byte-order mark opening the file is not part of the document.
      const start = offset === 0 && end >= 3 && bom.every((b, i) => buf[i] === b) ? 3 : 0;
      const out: unknown[] = [];
      const stopped = scan.scan(buf, start, end, last, offset, out);
      if (out.length > 0) yield out;
      if (scan.finished) return;
      if (last) {
        scan.end();
        return;
      }
      kept = end - stopped;
      offset += stopped;
      assert(kept < buf.length / 2, 'a genesis lexeme left over is bounded');
      buf.copy(buf, 0, stopped, end);
    }
  }
  // The first pass (sections) walks the whole file anyway: it counts the entries, and the import's share is those taken since.
  let entriesInFile = 0;
  let entriesTaken = 0;
  return {
    sections: async () => {
      const found: string[] = [];
      offsets.clear();
      entriesInFile = 0;
      entriesTaken = 0;
      for await (const _ of walk(new GenesisScan(null, (name, at) => (found.push(name), offsets.set(name, at)), null, () => entriesInFile++), 0));
      return found;
    },
    async *entries(section) {
      const at = offsets.get(section);
      if (at === undefined) return;
      for await (const batch of walk(new GenesisScan(section, undefined, section), at)) {
        entriesTaken += batch.length;
        yield batch;
      }
    },
    share: () => (entriesInFile === 0 ? null : entriesTaken / entriesInFile),
  };
}
