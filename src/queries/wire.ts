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

/** Object keys as quoted JSON with their colon: the views' keys are few and fixed; bounded for any others. */
const quotedKeys = new Map<string, string>();
const quotedKeysMax = 512;

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = `${JSON.stringify(key)}:`;
    if (quotedKeys.size < quotedKeysMax) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/** Every reply and every event is written by this: built by concatenation, with no array of parts per object (half the time). */
export function stringifyWire(value: Wire): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      out += (i === 0 ? '' : ',') + (item === undefined ? '' : stringifyWire(item));
    }
    return `${out}]`;
  }
  let out = '{';
  let first = true;
  for (const key of Object.keys(value)) {
    const v = (value as { readonly [key: string]: Wire | undefined })[key];
    if (v === undefined) continue;
    if (first) first = false;
    else out += ',';
    out += quotedKey(key) + stringifyWire(v);
  }
  return `${out}}`;
}
