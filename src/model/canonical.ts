/**
 * Canonical JSON (CONTRACT 8): object members sorted by name (UTF-16 code-unit order), no
 * whitespace, strings and numbers as JSON.stringify writes them. Derived client keys and
 * the recovery terms' digest are taken over it, so layout and member order never matter.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const names = Object.keys(record).sort();
  return `{${names.map((n) => `${JSON.stringify(n)}:${canonicalJson(record[n])}`).join(',')}}`;
}
