/**
 * Reading the journal as CONTRACT 9's leaves. The journal is stored in chunks (one per
 * round, keyed by its first entry's position: model/codec.ts JournalChunk), so the leaves
 * of any range are read by one seek and a split; an entry in store layout 6's compact form
 * has its leaf made as it is read, layouts 2-5's chunks hold the leaf bytes themselves.
 */
import { assert } from '../assert.js';
import { JournalChunk } from '../model/codec.js';
import type { ReadView } from '../store/port.js';
import { keys, parseSeqHex } from '../model/keys.js';

/**
 * The leaf bytes (as text; UTF-8 gives the bytes) of journal entries `fromSeq` to
 * `toSeq` inclusive, in order. Holds one chunk at a time, whatever the range.
 */
export async function* journalLeaves(view: ReadView, fromSeq: number, toSeq: number): AsyncGenerator<string> {
  assert(Number.isSafeInteger(fromSeq) && fromSeq >= 1 && toSeq >= fromSeq - 1, 'a journal range starts at 1 and does not run backwards');
  if (toSeq < fromSeq) return;
  // The chunk holding fromSeq is the last one starting at or before it.
  let start = keys.journal(fromSeq);
  for await (const [key] of view.entries({ gte: keys.journalPrefix, lte: start, reverse: true, limit: 1 })) start = key;
  let next = fromSeq;
  // Each chunk holds at least one entry: the range's length bounds the chunks read.
  for await (const [key, text] of view.entries({ gte: start, lte: keys.journal(toSeq), limit: toSeq - fromSeq + 1 })) {
    const first = parseSeqHex(key.slice(keys.journalPrefix.length));
    const chunk = new JournalChunk(text, first);
    assert(first <= next && first + chunk.entries > next, `journal entry ${next} is in the chunk read for it`);
    for (let i = next - first; i < chunk.entries && next <= toSeq; i++, next++) yield chunk.leaf(i);
  }
  assert(next === toSeq + 1, `journal entries ${fromSeq}..${toSeq} are all in the book`);
}
