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

const hexRef = /^op_([0-9a-f]{16}|[0-9a-f]{32})$/;

/**
 * An operation reference as a chunk stores it: `~` and the base64url of the bytes its hex
 * digits spell (22 characters for the daemon's 32 digits), any other text as it is (with a
 * second `~` before one that starts with `~`).
 */
export function packRef(ref: string): string {
  const m = hexRef.exec(ref);
  if (m !== null) return `~${Buffer.from(m[1]!, 'hex').toString('base64url')}`;
  return ref.startsWith('~') ? `~${ref}` : ref;
}

export function unpackRef(text: string, what: string): string {
  if (!text.startsWith('~')) return text;
  if (text.startsWith('~~')) return text.slice(1);
  return unpackedHexRef(text.slice(1)) ?? damaged(what, 'a packed operation reference is not 8 or 16 bytes of base64url');
}

/** The reference whose packed digits (packRef's text after its `~`) are `packed`; null if they are not 8 or 16 bytes of base64url as packRef writes them. */
export function unpackedHexRef(packed: string): string | null {
  const bytes = Buffer.from(packed, 'base64url');
  if ((bytes.length !== 8 && bytes.length !== 16) || bytes.toString('base64url') !== packed) return null;
  return `op_${bytes.toString('hex')}`;
}
