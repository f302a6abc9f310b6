/**
 * Operations as stored in layout 5. Decided ones through their `op/` pointers
 * (model/event-chunk.ts): the pointers in one round trip, then each distinct chunk they name
 * in one more, each operation sliced out of its chunk and parsed alone. Received ones in the
 * intake chunk holding their cseq (book/command-chunks.ts).
 */
import { decodeOperation } from '../model/codec.js';
import { damaged } from '../model/decode.js';
import { commandChunkText } from '../book/command-chunks.js';
import { decodeOperationPointer, eventChunkText } from '../model/event-chunk.js';
import { keys, parseSeqHex } from '../model/keys.js';
import type { Operation } from '../model/model.js';
import type { ReadView } from '../store/port.js';

/**
 * The decided operations `refs` name, from their `op/` values already read (`texts[i]` for
 * `refs[i]`; undefined: none). A pointer whose chunk or operation is not there is damage.
 */
async function resolveDecided(view: ReadView, refs: readonly string[], texts: readonly (string | undefined)[]): Promise<(Operation | undefined)[]> {
  const pointers = texts.map((text) => (text === undefined ? undefined : decodeOperationPointer(text)));
  const chunkKeys = [...new Set(pointers.flatMap((p) => (p == null ? [] : [keys.eventChunk(p.chunk)])))];
  const chunks = new Map<string, string | undefined>();
  if (chunkKeys.length > 0) {
    const values = await view.getMany(chunkKeys);
    for (const [i, key] of chunkKeys.entries()) chunks.set(key, values[i]);
  }
  return refs.map((ref, i) => {
    const pointer = pointers[i];
    if (pointer === undefined) return undefined;
    const op = pointer === null ? decodeOperation(texts[i]!) : decodeOperation(sliced(ref, chunks.get(keys.eventChunk(pointer.chunk)), pointer.index));
    if (op.ref !== ref) damaged('operation', `${keys.operation(ref)} leads to ${op.ref}`);
    return op;
  });
}

function sliced(ref: string, chunk: string | undefined, index: number): string {
  if (chunk === undefined) damaged('operation', `${keys.operation(ref)} names an event chunk the book does not hold`);
  return eventChunkText(chunk, index);
}

/** Decided operations by reference (undefined: none decided under it). */
export async function readDecided(view: ReadView, refs: readonly string[]): Promise<(Operation | undefined)[]> {
  return resolveDecided(view, refs, await view.getMany(refs.map((ref) => keys.operation(ref))));
}

/** The operations of a page of `op/` entries (keys and values as read), each read where it points. */
export async function decidedOfEntries(view: ReadView, entries: readonly (readonly [string, string])[]): Promise<Operation[]> {
  const ops = await resolveDecided(view, entries.map(([key]) => key.slice(keys.operation('').length)), entries.map(([, text]) => text));
  return ops.map((op) => op!);
}

/**
 * Operations by reference, decided or not, each with the cseq drawn for it (null: a reference
 * of an older id scheme, only ever decided). `op/` is read first, since an intake chunk lives
 * until its last command is decided; a command decided, and its chunk deleted, between the two
 * reads is found by reading `op/` again.
 */
export async function readOperations(view: ReadView, wanted: readonly { readonly ref: string; readonly cseq: number | null }[]): Promise<(Operation | undefined)[]> {
  const decided = await readDecided(view, wanted.map((w) => w.ref));
  const out: (Operation | undefined)[] = [];
  for (const [i, { ref, cseq }] of wanted.entries()) {
    if (decided[i] !== undefined || cseq === null) {
      out.push(decided[i]);
      continue;
    }
    const pending = await readReceived(view, cseq);
    out.push(pending === undefined ? (await readDecided(view, [ref]))[0] : pending.ref === ref ? pending : undefined);
  }
  return out;
}

/**
 * The Received operation of command `cseq`, if its intake chunk still holds it: the last
 * `cmd/` chunk starting at or before it. A chunk lives until its last command is decided, so
 * one found may hold a command decided since: read `op/` first (readOperation).
 */
export async function readReceived(view: ReadView, cseq: number): Promise<Operation | undefined> {
  for await (const [key, value] of view.entries({ gte: keys.commandPrefix, lte: keys.command(cseq), reverse: true, limit: 1 })) {
    const text = commandChunkText(value, cseq - parseSeqHex(key.slice(keys.commandPrefix.length)));
    return text === undefined ? undefined : decodeOperation(text);
  }
  return undefined;
}
