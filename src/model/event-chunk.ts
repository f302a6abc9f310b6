/**
 * Store layout 5's event chunk (`ev/<first event seq>`) and operation pointer (`op/<ref>`).
 *
 * A chunk holds the state of each operation a round changed, as encodeOperation wrote it
 * (encodeOperationJson's form before layout 7), in event order. It is the only stored copy of a decided operation: `op/<ref>` holds
 * where the operation's latest event is (the chunk's first sequence number and the index
 * in it), not the operation again. So that reading one operation parses that operation
 * alone, a chunk begins with the end offsets of its operations:
 *
 *   '#' count (4 hex digits) end offset × count (8 hex digits each) operation texts, joined
 *
 * Offsets count UTF-16 code units of the texts after the header (what `slice` takes). An
 * operation's text never holds '#' first ('[' since layout 7, '{' before), and a layout-4
 * chunk (a JSON list) begins with '[', so the forms are told apart by their first character.
 */
import { eventChunkEventsMax } from '../constants.js';
import { damaged } from './decode.js';

const what = 'event chunk';
const countDigits = 4;
const offsetDigits = 8;
const offsetMax = 16 ** offsetDigits - 1;

export function encodeEventChunk(texts: readonly string[]): string {
  if (texts.length === 0 || texts.length > eventChunkEventsMax) throw new RangeError(`an event chunk holds 1..${eventChunkEventsMax} events, not ${texts.length}`);
  const parts = ['#', texts.length.toString(16).padStart(countDigits, '0')];
  let end = 0;
  for (const text of texts) {
    end += text.length;
    if (end > offsetMax) throw new RangeError('an event chunk holds less than 4 GiB of operations');
    parts.push(end.toString(16).padStart(offsetDigits, '0'));
  }
  // One join of the header and the texts: joined apart and concatenated, the texts were copied twice (the store flattens the pair).
  for (const text of texts) parts.push(text);
  return parts.join('');
}

function hexAt(value: string, at: number, digits: number): number {
  const text = value.slice(at, at + digits);
  const n = parseInt(text, 16);
  if (text.length !== digits || !/^[0-9a-f]+$/.test(text)) damaged(what, 'its header is cut short or not hex');
  return n;
}

/** The number of events in a chunk. */
export function eventChunkLength(value: string): number {
  if (value[0] !== '#') damaged(what, 'is not in the form of store layout 5');
  const count = hexAt(value, 1, countDigits);
  if (count === 0) damaged(what, 'holds no event');
  return count;
}

/** The text of the chunk's `index`th operation (from 0), sliced out without reading the others. */
export function eventChunkText(value: string, index: number): string {
  const count = eventChunkLength(value);
  if (!Number.isSafeInteger(index) || index < 0 || index >= count) damaged(what, `holds ${count} events, none at ${index}`);
  const body = 1 + countDigits + count * offsetDigits;
  const start = index === 0 ? 0 : hexAt(value, 1 + countDigits + (index - 1) * offsetDigits, offsetDigits);
  const end = hexAt(value, 1 + countDigits + index * offsetDigits, offsetDigits);
  if (end < start || body + end > value.length) damaged(what, `event ${index}'s offsets fall outside it`);
  return value.slice(body + start, body + end);
}

/** Every operation text of a chunk, in event order. */
export function eventChunkTexts(value: string): string[] {
  const count = eventChunkLength(value);
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(eventChunkText(value, i));
  return out;
}

/** Where an operation's latest state is: in the chunk starting at event `chunk`, at `index`. */
export interface OperationPointer {
  readonly chunk: number;
  readonly index: number;
}

/** `op/<ref>`'s value: the chunk's first event sequence number, '/', the index, both decimal (the shortest text). */
export function encodeOperationPointer(at: OperationPointer): string {
  return `${at.chunk}/${at.index}`;
}

/**
 * An `op/` value's pointer, or null for a whole operation: a book migrated to layout 5 keeps
 * the operations whose latest event had been pruned before as they were (decodeOperation).
 */
export function decodeOperationPointer(text: string): OperationPointer | null {
  if (text.startsWith('{')) return null;
  const match = /^(0|[1-9][0-9]{0,15})\/(0|[1-9][0-9]{0,5})$/.exec(text);
  const chunk = match === null ? NaN : Number(match[1]);
  if (!Number.isSafeInteger(chunk) || chunk === 0) damaged('operation', 'is neither an operation nor where one is');
  return { chunk, index: Number(match![2]) };
}
