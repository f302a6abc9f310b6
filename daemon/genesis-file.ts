/**
 * A genesis file read as a stream (issue 10): one pass checks the whole document's
 * shape and bounds (genesis-tokens.ts) and lists its sections, then each section is
 * streamed entry by entry when the import asks for it. Nothing holds more than one
 * entry of the file at a time. The file is opened once, and must be a regular file:
 * the passes read it again from its start, which a pipe (`<(…)`, a FIFO) cannot give,
 * and opening a FIFO with no writer would wait for ever.
 */
import { close, constants, createReadStream, fstat, open, read } from 'node:fs';
import { promisify } from 'node:util';
import { type Duplex, Transform, pipeline } from 'node:stream';
import parser from 'stream-json/parser.js';
import { Refused, refuse } from '../src/errors.js';
import type { GenesisSource } from '../src/book/genesis.js';
import { StartupFailure, exitCodes, fsReason } from './failures.js';
import { type Token, genesisEntries } from './genesis-tokens.js';

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

/** File-system calls of one pass's stream: a stream torn down closes its descriptor whatever `autoClose` says, and the next pass needs it. */
const keepOpen = { open, read, close: (_fd: number, done: (error: NodeJS.ErrnoException | null) => void) => done(null) };

/** The parser's tokens in arrays of up to 1 024, so the walk awaits once per batch, not per token. */
function batches(): Transform {
  let batch: Token[] = [];
  return new Transform({
    objectMode: true,
    transform(token: Token, _encoding, done) {
      batch.push(token);
      if (batch.length === 1024) {
        this.push(batch);
        batch = [];
      }
      done();
    },
    flush(done) {
      if (batch.length > 0) this.push(batch);
      done();
    },
  });
}

function genesisFromFd(path: string, fd: number): Omit<GenesisFile, 'close'> {
  // pipeline() tears every stage down on an error and hands it to the reader of the last.
  const ignore = () => {};
  const tokens = (): AsyncIterable<Token[]> =>
    pipeline(createReadStream(path, { fd, start: 0, autoClose: false, fs: keepOpen }), parser.asStream({ packValues: false, streamValues: true }), batches(), ignore) as unknown as Duplex & AsyncIterable<Token[]>;
  /** The walk's refusals as they are; the parser's, as "not JSON"; the file system's, as unreadable. */
  async function* walk(wanted: string | null, onSection?: (name: string) => void, onEntry?: () => void): AsyncGenerator<unknown> {
    try {
      yield* genesisEntries(tokens(), wanted, onSection, onEntry);
    } catch (error) {
      if (error instanceof Refused) throw error;
      // The walk stopped reading once its section ended: the stream was torn down on purpose.
      if ((error as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE') return;
      if (error instanceof Error && 'code' in error) throw unreadable(path, error);
      refuse('ERR-MalformedCommand', `genesis document: is not JSON (${error instanceof Error ? error.message : String(error)})`);
    }
  }
  // The first pass (sections) walks the whole file anyway: it counts the entries, and the import's share is those taken since.
  let entriesInFile = 0;
  let entriesTaken = 0;
  return {
    sections: async () => {
      const found: string[] = [];
      entriesInFile = 0;
      entriesTaken = 0;
      for await (const _ of walk(null, (name) => found.push(name), () => entriesInFile++));
      return found;
    },
    entries: async function* (section) {
      for await (const entry of walk(section)) {
        entriesTaken++;
        yield entry;
      }
    },
    share: () => (entriesInFile === 0 ? null : entriesTaken / entriesInFile),
  };
}
