/**
 * The operations index `ot/` (keys.operationTime): every operation by submission time, then
 * cseq, carrying what never changes about it (reference, command type, principal). It lets
 * the operator's listing read newest first and seek a time range without reading the whole
 * book: intake writes an operation's item in the very batch that acknowledges it, and a
 * book from before the index has it built once at open (`buildOperationIndex`). Layout 7
 * writes an intake write's items in chunks (`ot/<time>/<first cseq>`: items of that one
 * submission time and consecutive cseqs, model/compact-chunk.ts); layout 6's one entry per
 * operation reads as it stands. Either way an item has the key it would have alone, the
 * position listings and their cursors use.
 */
import { type ChunkCodec, decodeChunk, encodeChunks, isChunk, packRef, unpackRef } from '../model/compact-chunk.js';
import { check, damaged, recordJson } from '../model/decode.js';
import { keys, prefixEnd } from '../model/keys.js';
import type { Operation } from '../model/model.js';
import type { BatchOp, ReadView, Store } from '../store/port.js';
import { decidedOfEntries } from './operation-records.js';
import { commandChunkOperations } from '../book/command-chunks.js';

export interface OperationIndexEntry {
  readonly ref: string;
  readonly type: string;
  readonly principal: string;
}

/** An item of the index, with the key it would have alone (keys.operationTime of its time and cseq). */
export interface OperationIndexItem extends OperationIndexEntry {
  readonly key: string;
  readonly submittedAtMs: number;
  readonly cseq: number;
}

/** A chunk: [strings, ...items], an item [command type, principal (numbers into the strings), reference (packed)]. */
const indexChunks: ChunkCodec<Operation> = {
  joins: (previous, next) => next.cseq === previous.cseq + 1 && next.submittedAtMs === previous.submittedAtMs,
  head: () => [],
  item: (op, _first, strings) => [strings.of(op.command.type), strings.of(op.actor.principal), packRef(op.ref)],
};

/** The index's puts for `ops` (in cseq order, as one write acknowledges them): a chunk per run of one time and consecutive cseqs. */
export function operationIndexPuts(ops: readonly Operation[]): BatchOp[] {
  return encodeChunks(ops, indexChunks).map((c) => ({ type: 'put', key: keys.operationTime(c.first.submittedAtMs, c.first.cseq), value: c.value }));
}

const chunkWhat = 'operations index chunk';

function decodeOperationIndexEntry(text: string): OperationIndexEntry {
  const what = 'operation index entry';
  const j = recordJson(text, what);
  return { ref: check.string(j, 'ref', what), type: check.string(j, 'type', what), principal: check.string(j, 'principal', what) };
}

/** The items of one `ot/` entry in key order: layout 6's one, or a chunk's. */
export function operationIndexItems(key: string, value: string): OperationIndexItem[] {
  const at = keys.operationTimePrefix.length;
  // Layout 6's keys are read as before (a key of another shape has no time or cseq: NaN); a chunk's must hold both.
  const submittedAtMs = parseInt(key.slice(at, at + 16), 16);
  const cseq = parseInt(key.slice(at + 17), 16);
  if (!isChunk(value)) return [{ key, submittedAtMs, cseq, ...decodeOperationIndexEntry(value) }];
  if (!Number.isSafeInteger(submittedAtMs) || !Number.isSafeInteger(cseq)) damaged(chunkWhat, 'its key names no time and cseq');
  const chunk = decodeChunk(value, 0, chunkWhat);
  return chunk.items.map((f, i) => {
    if (typeof f[2] !== 'string') damaged(chunkWhat, 'an item has no reference');
    const item = { submittedAtMs, cseq: cseq + i, type: chunk.string(f[0], 'type'), principal: chunk.string(f[1], 'principal'), ref: unpackRef(f[2], chunkWhat) };
    return { key: i === 0 ? key : keys.operationTime(submittedAtMs, cseq + i), ...item };
  });
}

/**
 * The index's item at `submittedAtMs` and `cseq`, if any: the entry at or before its key
 * within its time (a chunk may begin before it), one seek each.
 */
export async function operationIndexItem(view: ReadView, submittedAtMs: number, cseq: number): Promise<OperationIndexItem | undefined> {
  const key = keys.operationTime(submittedAtMs, cseq);
  for await (const [at, value] of view.entries({ gte: key.slice(0, key.lastIndexOf('/') + 1), lte: key, reverse: true, limit: 1 })) {
    return operationIndexItems(at, value).find((item) => item.cseq === cseq);
  }
  return undefined;
}

/** The items of `entries` (`ot/` in key order, or reverse), one by one in the same order. */
export async function* operationIndexItemsOf(entries: AsyncIterable<[string, string]>, reverse: boolean): AsyncGenerator<OperationIndexItem> {
  for await (const [key, value] of entries) {
    const items = operationIndexItems(key, value);
    if (reverse) items.reverse();
    yield* items;
  }
}

/** Entries written per batch while building the index of an older book. */
export const operationIndexBuildBatch = 1000;

/**
 * Indexes every operation of a book written before `ot/` existed (decided through `op/`,
 * undecided in `cmd/` chunks), in bounded batches, then marks the index built. Runs at open,
 * before intake: a crash part way leaves no mark, and the next open writes the same
 * entries again (a put of the same key and value).
 */
export async function buildOperationIndex(store: Store): Promise<number> {
  if ((await store.get(keys.operationTimeBuilt)) !== undefined) return 0;
  let written = 0;
  for (const prefix of [keys.operation(''), keys.commandPrefix]) {
    let after: string | null = null;
    for (;;) {
      const page: [string, string][] = [];
      for await (const entry of store.entries({ ...(after === null ? { gte: prefix } : { gt: after }), lt: prefixEnd(prefix), limit: operationIndexBuildBatch })) page.push(entry);
      // An intake chunk holds many commands (book/command-chunks.ts); a decided operation's `op/` value says where it is (operation-records.ts).
      const ops = prefix === keys.commandPrefix ? commandChunkOperations(page) : await decidedOfEntries(store, page);
      // One chunk each, keyed by the operation itself: an operation met twice (decided, still in its intake chunk) is the same put.
      const puts = ops.flatMap((op) => operationIndexPuts([op]));
      if (puts.length > 0) await store.write(puts, true);
      written += puts.length;
      if (page.length < operationIndexBuildBatch) break;
      after = page[page.length - 1]![0];
    }
  }
  await store.write([{ type: 'put', key: keys.operationTimeBuilt, value: '1' }], true);
  return written;
}
