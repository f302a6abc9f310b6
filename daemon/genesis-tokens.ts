/**
 * A genesis document's shape and bounds, checked over stream-json's tokens as they
 * arrive (strings, names and numbers in chunks, never packed by the parser): an object
 * of sections, each an array, each named once; entries of bounded size and depth whose
 * values are bounded (daemon/constants.ts), whose members are named once. Entries of
 * the wanted section are built (objects without a prototype) and yielded; nothing
 * else is kept, so a hostile file costs at most one entry of memory.
 */
import { entryError, genesisSections, shown } from '../src/book/genesis-entries.js';
import { genesisEntriesMax } from '../src/constants.js';
import { genesisEntryCharsMax, genesisEntryDepthMax, genesisValueCharsMax } from './constants.js';

export interface Token {
  readonly name: string;
  readonly value?: unknown;
}

interface Container {
  readonly array: boolean;
  /** Built only inside an entry of the wanted section. */
  readonly value: unknown[] | Record<string, unknown> | null;
  /** An object's member names so far (a repeated one is refused: readers differ on which they keep). */
  readonly members: Set<string> | null;
  key: string | null;
}

/**
 * Walks the tokens of a whole document (in batches), refusing the first thing out of shape, and
 * yields the entries of `wanted` (none when null), stopping once that section ends.
 * `onSection` hears each section's name as it begins; `onEntry`, each entry of any section (counted for progress).
 */
export async function* genesisEntries(tokens: AsyncIterable<readonly Token[]>, wanted: string | null, onSection: (name: string) => void = () => {}, onEntry: () => void = () => {}): AsyncGenerator<unknown> {
  const stack: Container[] = [];
  const seen = new Set<string>();
  let begun = false;
  let section: string | null = null;
  let entry = -1;
  let entryChars = 0;
  let text = '';
  let textChars = 0;
  const where = () => (section === null ? 'document' : entry < 0 || stack.length < 2 ? section : `${section}[${entry}]`);
  const building = () => section !== null && section === wanted;

  /** A value (container or not) begins at the current depth. */
  const begin = (container: boolean) => {
    const depth = stack.length;
    if (depth === 0) {
      if (begun || !container) entryError('document', 'must be an object');
      begun = true;
    } else if (depth === 1) {
      if (!container) entryError(where(), 'must be an array');
    } else {
      if (depth === 2) {
        entry++;
        onEntry();
        entryChars = 0;
        if (entry === genesisEntriesMax) entryError(section!, `holds more than ${genesisEntriesMax} entries`);
      }
      if (container && depth - 1 > genesisEntryDepthMax) entryError(where(), `nests deeper than ${genesisEntryDepthMax} levels`);
    }
  };
  const open = (array: boolean) => {
    begin(true);
    if (stack.length === 0 && array) entryError('document', 'must be an object');
    if (stack.length === 1 && !array) entryError(where(), 'must be an array');
    const value = stack.length >= 2 && building() ? (array ? [] : (Object.create(null) as Record<string, unknown>)) : null;
    stack.push({ array, value, members: array ? null : new Set(), key: null });
  };
  /** A complete value at the current depth: placed in its container, or (an entry) finished. */
  const place = (value: unknown): unknown => {
    const top = stack[stack.length - 1]!;
    if (stack.length === 2) return value;
    if (top.value === null) return undefined;
    if (Array.isArray(top.value)) top.value.push(value);
    else top.value[top.key!] = value;
    return undefined;
  };
  const key = (name: string) => {
    const top = stack[stack.length - 1]!;
    if (stack.length === 1) {
      if (!(genesisSections as readonly string[]).includes(name)) entryError(shown(name), 'is not a genesis section');
      if (seen.has(name)) entryError(name, 'appears twice (one section of each name)');
      seen.add(name);
      section = name;
      entry = -1;
      onSection(name);
      return;
    }
    if (top.members!.has(name)) entryError(where(), `member ${shown(name)} appears twice`);
    top.members!.add(name);
    top.key = name;
  };

  // Tokens come in batches: one await per token would cost more than the parse.
  for await (const batch of tokens) for (const token of batch) {
    const name = token.name;
    if (name === 'startObject' || name === 'startArray') open(name === 'startArray');
    else if (name === 'startString' || name === 'startNumber' || name === 'trueValue' || name === 'falseValue' || name === 'nullValue') begin(false);
    if (name === 'startKey' || name === 'startString' || name === 'startNumber') {
      text = '';
      textChars = 0;
    } else if (name === 'stringChunk' || name === 'numberChunk') {
      const chunk = token.value as string;
      textChars += chunk.length;
      if (textChars > genesisValueCharsMax) entryError(where(), `holds a string, member name or number longer than ${genesisValueCharsMax} characters`);
      text += chunk;
    }
    // Everything inside a section's array is some entry's.
    if (stack.length >= 2) {
      entryChars += 1 + (typeof token.value === 'string' ? token.value.length : 0);
      if (entryChars > genesisEntryCharsMax) entryError(where(), `is longer than ${genesisEntryCharsMax} characters`);
    }
    let done: unknown;
    if (name === 'endKey') key(text);
    else if (name === 'endString') done = place(text);
    else if (name === 'endNumber') done = place(Number(text));
    else if (name === 'trueValue' || name === 'falseValue' || name === 'nullValue') done = place(token.value);
    else if (name === 'endObject' || name === 'endArray') {
      const closed = stack.pop()!;
      if (stack.length === 1) {
        const ended = section;
        section = null;
        if (ended === wanted) return;
      } else if (stack.length >= 2) done = place(closed.value);
    }
    if (stack.length === 2 && done !== undefined && building()) yield done;
  }
  if (!begun || stack.length > 0) entryError('document', 'is not JSON (ends early)');
}
