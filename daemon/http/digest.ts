/**
 * The derived client key (CONTRACT 4): lowercase hex SHA-256 of the UTF-8 text
 *   principal "\n" METHOD "\n" path "\n" canonical-JSON(body)
 * Canonical JSON: object members sorted by name (UTF-16 code-unit order), no
 * whitespace, strings and numbers as JSON.stringify writes them. Two bodies that
 * differ only in layout or member order therefore derive the same key.
 */
import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const names = Object.keys(record).sort();
  return `{${names.map((n) => `${JSON.stringify(n)}:${canonicalJson(record[n])}`).join(',')}}`;
}

export function requestDigest(principal: string, method: string, path: string, body: unknown): string {
  const text = `${principal}\n${method.toUpperCase()}\n${path}\n${canonicalJson(body ?? null)}`;
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
