/** In-memory streams for running commands in-process: a pipe, or a terminal when `tty` is set. */
import { PassThrough, Writable } from 'node:stream';
import type { Io } from '../../../cli/io.js';
import { runCli } from '../../../cli/run.js';

export class Capture extends Writable {
  text = '';
  isTTY: boolean;
  columns = 120;

  constructor(tty = false) {
    super();
    this.isTTY = tty;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

export interface FakeIo extends Io {
  stdout: Capture;
  stderr: Capture;
}

export function fakeIo(options: { tty?: boolean; env?: Record<string, string | undefined> } = {}): FakeIo {
  return { stdout: new Capture(options.tty), stderr: new Capture(options.tty), stdin: new PassThrough(), env: options.env ?? {} };
}

/** Runs one command line in this process, as `ledgerctl` would, and returns what it printed. */
export async function runInProcess(args: readonly string[], options: { tty?: boolean; env?: Record<string, string | undefined> } = {}) {
  const io = fakeIo(options);
  const code = await runCli(args, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}
