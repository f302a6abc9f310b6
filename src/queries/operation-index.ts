/**
 * The operations index `ot/` (keys.operationTime): every operation by submission time, then
 * cseq, carrying what never changes about it (reference, command type, principal). It lets
 * the operator's listing read newest first and seek a time range without reading the whole
 * book: intake writes an operation's entry in the very batch that acknowledges it, and a
 * book from before the index has it built once at open (`buildOperationIndex`).
 */
import { check, recordJson } from '../model/decode.js';
import { keys, prefixEnd } from '../model/keys.js';
import type { Operation } from '../model/model.js';
import type { BatchOp, Store } from '../store/port.js';
import { decidedOfEntries } from './operation-records.js';
import { commandChunkOperations } from '../book/command-chunks.js';

export interface OperationIndexEntry {
  readonly ref: string;
  readonly type: string;
  readonly principal: string;
}

export function operationIndexPut(op: Operation): BatchOp {
  const entry: OperationIndexEntry = { ref: op.ref, type: op.command.type, principal: op.actor.principal };
  return { type: 'put', key: keys.operationTime(op.submittedAtMs, op.cseq), value: JSON.stringify(entry) };
}

export function decodeOperationIndexEntry(text: string): OperationIndexEntry {
  const what = 'operation index entry';
  const j = recordJson(text, what);
  return { ref: check.string(j, 'ref', what), type: check.string(j, 'type', what), principal: check.string(j, 'principal', what) };
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
      const puts = ops.map(operationIndexPut);
      if (puts.length > 0) await store.write(puts, true);
      written += puts.length;
      if (page.length < operationIndexBuildBatch) break;
      after = page[page.length - 1]![0];
    }
  }
  await store.write([{ type: 'put', key: keys.operationTimeBuilt, value: '1' }], true);
  return written;
}
