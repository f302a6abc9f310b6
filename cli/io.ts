/** The process's streams and environment, injected so tests can fake a terminal or a pipe. */
import type { Readable, Writable } from 'node:stream';

export type OutStream = Writable & { isTTY?: boolean; columns?: number; rows?: number };
export type InStream = Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };

export interface Io {
  readonly stdout: OutStream;
  readonly stderr: OutStream;
  readonly stdin: InStream;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export const processIo = (): Io => ({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env });

export const isTerminal = (stream: { isTTY?: boolean }): boolean => stream.isTTY === true;
