/** Parsing flag values at the edge. Money stays text: the service judges amounts (ERR-PrecisionExceeded, …). */
import { closeSync, openSync, readSync } from 'node:fs';
import type { Json } from './api.js';
import { UsageError } from './errors.js';
import { inputFileBytesMax, stdinPollMs } from './limits.js';

export function integer(flag: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw new UsageError(`${flag} must be an integer from ${min} to ${max}: ${text}`);
  return Number(text);
}

/** A time: milliseconds since the epoch as digits, or an ISO-8601 date, sent as ms. */
export function timeMs(flag: string, text: string): string {
  if (/^\d+$/.test(text)) return text;
  const ms = Date.parse(text);
  if (Number.isNaN(ms) || ms < 0) throw new UsageError(`${flag} must be milliseconds since the epoch or an ISO-8601 time: ${text}`);
  return String(ms);
}

export function jsonText(flag: string, text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    throw new UsageError(`${flag} must be one JSON value: ${text}`);
  }
}

/** One read; stdin may be a non-blocking pipe whose writer is slower than us: then wait a little and read again. */
function readAvailable(fd: number, into: Buffer): number {
  for (;;) {
    try {
      return readSync(fd, into, 0, into.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, stdinPollMs);
    }
  }
}

/** The text of the file a flag names (`-`: stdin), refused past inputFileBytesMax without reading on. */
export function inputFile(flag: string, path: string): string {
  let fd: number | null = null;
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    fd = path === '-' ? 0 : openSync(path, 'r');
    for (;;) {
      const chunk = Buffer.allocUnsafe(64 * 1024);
      const read = readAvailable(fd, chunk);
      if (read === 0) break;
      bytes += read;
      if (bytes > inputFileBytesMax) throw new UsageError(`${flag} ${path}: more than ${inputFileBytesMax} bytes, the bound of one input file`);
      chunks.push(chunk.subarray(0, read));
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${flag} ${path}: ${(error as Error).message}`);
  } finally {
    if (fd !== null && fd !== 0) closeSync(fd);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A JSON file, `-` for stdin. */
export function jsonFile(flag: string, path: string): Json {
  return jsonText(`${flag} ${path}`, inputFile(flag, path));
}

/** `A,B,C` or repeated flags, as a list. */
export function list(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter((s) => s.length > 0)];
}

/** `KEY=VALUE` pairs, repeated. */
export function pairs(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new UsageError(`expected KEY=VALUE: ${value}`);
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}
