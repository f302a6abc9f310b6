/**
 * Store layout 7's chunks of small records (the audit trail `au/`, the operations index
 * `ot/`): the items one write makes in one entry, keyed by its first item, so that what the
 * key and an item's position give (a sequence number, a time) is not stored again. A chunk is
 * a JSON array: the fields its codec puts first, the chunk's table of strings, then its items,
 * each an array whose repeated strings (a member, a credential, an act, a command type, a
 * principal) are numbers into that table and whose trailing nulls are left off. Layout 6's
 * one-item entries are JSON objects: a value's first character tells the forms apart.
 */
import { assert } from '../assert.js';
import { compactChunkCharsMax, compactChunkItemsMax } from '../constants.js';
import { damaged, parsed } from './decode.js';

/** A chunk's strings, each once, numbered in order of first use. */
export class ChunkStrings {
  readonly list: string[] = [];
  private readonly at = new Map<string, number>();
  private chars = 0;

  of(text: string): number {
    let i = this.at.get(text);
    if (i === undefined) {
      i = this.list.push(text) - 1;
      this.at.set(text, i);
      this.chars += text.length + 3;
    }
    return i;
  }

  get size(): number {
    return this.list.length;
  }

  /** Characters the strings take, about (quotes and comma; escapes aside). */
  get length(): number {
    return this.chars;
  }

  /** Forgets the strings numbered from `size` on (an item that went to the next chunk). */
  truncate(size: number): void {
    for (const text of this.list.splice(size)) {
      this.at.delete(text);
      this.chars -= text.length + 3;
    }
  }
}

/** How one kind of record goes into chunks. */
export interface ChunkCodec<T> {
  /** Whether `next` may follow `previous` in one chunk (what its key and position give must hold for it). */
  joins(previous: T, next: T): boolean;
  /** The chunk's fields before its strings, from its first item. */
  head(first: T): unknown[];
  /** An item as stored, its repeated strings numbered in `strings`. */
  item(x: T, first: T, strings: ChunkStrings): unknown[];
}

/** A stored item with its trailing nulls left off. */
function trimmed(fields: unknown[]): unknown[] {
  let end = fields.length;
  while (end > 0 && fields[end - 1] === null) end--;
  return end === fields.length ? fields : fields.slice(0, end);
}

/**
 * `items` (in key order) as chunks, each with its first item: a chunk ends where `joins`
 * says, at compactChunkItemsMax items, or before its items and strings pass
 * compactChunkCharsMax characters (an item longer than that alone is a chunk of one).
 */
export function encodeChunks<T>(items: readonly T[], codec: ChunkCodec<T>): { first: T; value: string }[] {
  const chunks: { first: T; value: string }[] = [];
  let first: T | null = null;
  let previous: T | null = null;
  let texts: string[] = [];
  let chars = 0;
  let strings = new ChunkStrings();
  const flush = () => {
    if (first === null) return;
    assert(texts.length > 0, 'a chunk holds an item');
    assert(texts.length <= compactChunkItemsMax, 'a chunk holds at most compactChunkItemsMax items');
    const head = JSON.stringify([...codec.head(first), strings.list]);
    chunks.push({ first, value: `${head.slice(0, -1)},${texts.join(',')}]` });
    first = null;
    texts = [];
    chars = 0;
    strings = new ChunkStrings();
  };
  for (const x of items) {
    if (previous !== null && (texts.length === compactChunkItemsMax || !codec.joins(previous, x))) flush();
    previous = x;
    first ??= x;
    const size = strings.size;
    let text = JSON.stringify(trimmed(codec.item(x, first, strings)));
    if (texts.length > 0 && chars + text.length + 1 + strings.length > compactChunkCharsMax) {
      strings.truncate(size);
      flush();
      first = x;
      text = JSON.stringify(trimmed(codec.item(x, first, strings)));
    }
    texts.push(text);
    chars += text.length + 1;
  }
  flush();
  return chunks;
}

/** Whether a stored value is a chunk (layout 7) rather than layout 6's one item (a JSON object). */
export const isChunk = (value: string): boolean => value.startsWith('[');

/** A stored chunk: its `headFields` leading fields, its strings and its items, each checked for shape. */
export interface StoredChunk {
  readonly head: unknown[];
  readonly items: unknown[][];
  /** An item's field that is a number into the chunk's strings, as its string. */
  string(v: unknown, name: string): string;
}

export function decodeChunk(value: string, headFields: number, what: string): StoredChunk {
  const j = parsed(value, what);
  if (!Array.isArray(j) || j.length < headFields + 2) damaged(what, 'is not a chunk with an item');
  const strings = j[headFields] as unknown;
  if (!Array.isArray(strings) || !strings.every((s) => typeof s === 'string')) damaged(what, 'its strings are not a list of strings');
  const items = j.slice(headFields + 1);
  if (!items.every((item) => Array.isArray(item))) damaged(what, 'an item is not a list');
  return {
    head: j.slice(0, headFields),
    items: items as unknown[][],
    string: (v, name) => {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= strings.length) damaged(what, `${name} is not a number of the chunk's strings`);
      return strings[v] as string;
    },
  };
}

/** An item's field that is text or absent (null). */
export function nullableText(v: unknown, name: string, what: string): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') damaged(what, `${name} is not text or null`);
  return v;
}

/**
 * An operation reference as a chunk stores it: `~` and the base64url of the bytes its hex
 * digits spell (22 characters for the daemon's 32 digits), any other text as it is (with a
 * second `~` before one that starts with `~`).
 */
export function packRef(ref: string): string {
  if (isHexRef(ref)) return `~${hexAsBase64url(ref, 3)}`;
  return ref.startsWith('~') ? `~${ref}` : ref;
}

export function unpackRef(text: string, what: string): string {
  if (!text.startsWith('~')) return text;
  if (text.startsWith('~~')) return text.slice(1);
  return unpackedHexRef(text.slice(1)) ?? damaged(what, 'a packed operation reference is not 8 or 16 bytes of base64url');
}

// The conversions below in plain code, not through Buffer: a posting's index entry packs one per decision and a checkpoint unpacks one per journal entry.
const base64urlDigits = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const base64urlValues = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) base64urlValues[base64urlDigits.charCodeAt(i)] = i;
const hexDigits = '0123456789abcdef';

/** Whether `ref` is `op_` and 16 or 32 lowercase hex digits. */
function isHexRef(ref: string): boolean {
  if ((ref.length !== 19 && ref.length !== 35) || !ref.startsWith('op_')) return false;
  for (let i = 3; i < ref.length; i++) {
    const c = ref.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** The base64url (unpadded) of the bytes the hex digits of `hex` from `from` on spell. */
function hexAsBase64url(hex: string, from: number): string {
  let out = '';
  let bits = 0;
  let count = 0;
  for (let i = from; i < hex.length; i++) {
    const c = hex.charCodeAt(i);
    bits = ((bits << 4) | (c <= 57 ? c - 48 : c - 87)) & 0x3ff;
    count += 4;
    if (count >= 6) {
      count -= 6;
      out += base64urlDigits[(bits >> count) & 63];
    }
  }
  return count === 0 ? out : out + base64urlDigits[(bits << (6 - count)) & 63];
}

/** The reference whose packed digits (packRef's text after its `~`) are `packed`; null if they are not 8 or 16 bytes of base64url as packRef writes them. */
export function unpackedHexRef(packed: string): string | null {
  if (packed.length !== 11 && packed.length !== 22) return null;
  const end = packed.length === 11 ? 19 : 35;
  let out = 'op_';
  let bits = 0;
  let count = 0;
  for (let i = 0; i < packed.length; i++) {
    const c = packed.charCodeAt(i);
    const v = c < 128 ? base64urlValues[c]! : -1;
    if (v < 0) return null;
    bits = ((bits << 6) | v) & 0x3ff;
    count += 6;
    while (count >= 4 && out.length < end) {
      count -= 4;
      out += hexDigits[(bits >> count) & 15];
    }
  }
  // The bits past the last byte are zero, as packRef leaves them.
  return (bits & ((1 << count) - 1)) === 0 ? out : null;
}
