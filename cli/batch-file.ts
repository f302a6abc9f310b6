/**
 * A file of command bodies for `--batch`: a JSON array, or NDJSON (one JSON object a line).
 * Read once (a FIFO or `-` works), bounded in bytes; each body must be a JSON object, named
 * by its item number (1-based, the line for NDJSON) when it is not.
 */
import { readFileSync } from 'node:fs';
import { UsageError } from './errors.js';
import { batchFileBytesMax } from './limits.js';

export type Body = Record<string, unknown>;

function readBounded(flag: string, path: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path === '-' ? 0 : path);
  } catch (error) {
    throw new UsageError(`${flag} ${path}: ${(error as Error).message}`);
  }
  if (bytes.length > batchFileBytesMax) throw new UsageError(`${flag} ${path} is over ${batchFileBytesMax} bytes; split it`);
  return bytes.toString('utf8');
}

function parsed(flag: string, where: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag} ${where} is not JSON: ${(error as Error).message}`);
  }
}

const isObject = (value: unknown): value is Body => typeof value === 'object' && value !== null && !Array.isArray(value);

export function readBatchFile(flag: string, path: string): Body[] {
  const text = readBounded(flag, path);
  const isArray = text.trimStart().startsWith('[');
  const items: { where: string; value: unknown }[] = isArray
    ? (() => {
        const all = parsed(flag, path, text);
        if (!Array.isArray(all)) throw new UsageError(`${flag} ${path} must hold a JSON array or one JSON object a line`);
        return all.map((value, i) => ({ where: `${path} item ${i + 1}`, value }));
      })()
    : text
        .split('\n')
        .map((line, i) => ({ line, where: `${path} line ${i + 1}` }))
        .filter(({ line }) => line.trim() !== '')
        .map(({ line, where }) => ({ where, value: parsed(flag, where, line) }));
  if (items.length === 0) throw new UsageError(`${flag} ${path} holds no command`);
  return items.map(({ where, value }) => {
    if (!isObject(value)) throw new UsageError(`${flag} ${where} must be a JSON object (a transfer body: {legs, deadline?, reference?})`);
    return value;
  });
}
