/** Parsing flag values at the edge. Money stays text: the service judges amounts (ERR-PrecisionExceeded, …). */
import { readFileSync } from 'node:fs';
import type { Json } from './api.js';
import { UsageError } from './errors.js';

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

/** A JSON file, `-` for stdin's text already read by the caller. */
export function jsonFile(flag: string, path: string): Json {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    throw new UsageError(`${flag} ${path}: ${(error as Error).message}`);
  }
  return jsonText(`${flag} ${path}`, text);
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
