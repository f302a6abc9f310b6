/**
 * JSON output for the spec's shapes. `reference` is echoed exactly as sent, so it is
 * carried as raw JSON text and spliced in; bigint never reaches here (views turn
 * amounts into decimal strings first, so no float can creep in). The text may hold raw
 * CR and LF (JSON whitespace): a line-framed carrier must frame it (server-sent events:
 * `serverEvent` in daemon/events.ts).
 */
export class RawJson {
  constructor(readonly text: string) {}
}

export type Wire = string | number | boolean | null | RawJson | readonly Wire[] | { readonly [key: string]: Wire | undefined };

export function stringifyWire(value: Wire): string {
  if (value instanceof RawJson) return value.text;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => stringifyWire(v)).join(',')}]`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    parts.push(`${JSON.stringify(k)}:${stringifyWire(v)}`);
  }
  return `{${parts.join(',')}}`;
}
