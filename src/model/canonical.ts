/**
 * Canonical JSON (CONTRACT 8 and 9): object members sorted by name in UTF-16
 * code-unit order (JavaScript's default sort), no whitespace, strings and numbers as
 * JSON.stringify writes them. Derived client keys, the recovery terms' digest,
 * checkpoint commitments and disclosures are all taken over it, so layout and member
 * order never matter.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  // Built by concatenation, not map and join: every request's derived key is taken over it.
  let text: string;
  if (Array.isArray(value)) {
    text = '[';
    for (let i = 0; i < value.length; i++) text += `${i === 0 ? '' : ','}${canonicalJson(value[i]) ?? ''}`;
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  const names = Object.keys(record).sort();
  text = '{';
  for (let i = 0; i < names.length; i++) text += `${i === 0 ? '' : ','}${JSON.stringify(names[i])}:${canonicalJson(record[names[i]!])}`;
  return `${text}}`;
}
