/**
 * Canonical JSON (CONTRACT 8 and 9): object members sorted by name in UTF-16
 * code-unit order (JavaScript's default sort), no whitespace, strings and numbers as
 * JSON.stringify writes them. Derived client keys, the recovery terms' digest,
 * checkpoint commitments and disclosures are all taken over it, so layout and member
 * order never matter.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const names = Object.keys(record).sort();
  return `{${names.map((n) => `${JSON.stringify(n)}:${canonicalJson(record[n])}`).join(',')}}`;
}
