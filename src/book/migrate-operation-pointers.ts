/**
 * Store layout 4 → 5 (`ledgerd migrate`, docs/operations.md "Upgrades"). Layout 5 stores a
 * decided operation once: in its event chunk, in the form of model/event-chunk.ts (an
 * offsets header, at most eventChunkEventsMax events a chunk), with `op/<ref>` saying where
 * its latest event is, instead of layout 4's JSON list of a whole round's events beside a
 * whole copy of each operation under `op/`. Nothing else differs, so the move is made in
 * place, like 3 → 4 (migrate-compact-index.ts): `meta/layout` becomes `4-5`, which no
 * ledgerd serves; then each old chunk, oldest first, is rewritten in one atomic write: the
 * chunks of the new form over the same events (the first under the old chunk's key), and
 * the pointer of each operation whose `op/` record is that event's operation, byte for
 * byte; then `meta/layout` = 5. A new chunk starts with '#' and an old one with '[', so a
 * run stopped at any instant resumes where it stopped, skipping what is already moved.
 *
 * An operation whose latest event layout 4 had pruned (past its eventsRetainedMax) keeps
 * its whole record under `op/`, which layout 5 reads as it stands (operation-records.ts).
 * Memory holds one old chunk (a round's events) and a page of pointers.
 */
import { eventChunkEventsMax, migrateEntriesPerWrite } from '../constants.js';
import { decodeOperationJson } from '../model/codec.js';
import { DamagedRecord, recordJson, recordJsonList } from '../model/decode.js';
import { decodeOperationPointer, encodeEventChunk, encodeOperationPointer, eventChunkText } from '../model/event-chunk.js';
import { keySpaces, keys, parseSeqHex, prefixEnd } from '../model/keys.js';
import { decidedOfEntries } from '../queries/operation-records.js';
import type { BatchOp, Range, Store } from '../store/port.js';
import { MigrationRefused, moveInPlace } from './migrate-layout.js';

/** The layout this migration starts from, the mark of a book it is moving, and where it ends. */
export const layoutBeforeOperationPointers = '4';
export const layoutMovingOperationPointers = '4-5';
export const layoutAfterOperationPointers = '5';

export interface OperationPointerReport {
  /** Layout-4 event chunks rewritten. */
  readonly chunks: number;
  /** `op/` records made pointers into their event chunk. */
  readonly pointers: number;
  /** `op/` records kept whole: their latest event had been pruned. */
  readonly whole: number;
}

/** An operation's text as it is compared and stored: JSON.stringify of it as parsed (the writer's own form, key order kept). */
const canonical = (j: unknown): string => JSON.stringify(j);

/**
 * Brings a book in layout 4 (or one this migration was stopped in) to layout 5, in place.
 * `afterWrite` runs after each write (a test hook may stop there). Throws MigrationRefused
 * for a book in another layout or a record it cannot read.
 */
export async function migrateLayout4(store: Store, afterWrite: () => Promise<void> = async () => {}): Promise<OperationPointerReport> {
  return moveInPlace(store, { from: layoutBeforeOperationPointers, moving: layoutMovingOperationPointers, to: layoutAfterOperationPointers }, afterWrite, async () => {
    let chunks = 0;
    let pointers = 0;
    const end = prefixEnd(keySpaces.event);
    let after: string | null = null;
    for (;;) {
      let found: [string, string] | null = null;
      const range: Range = after === null ? { gte: keySpaces.event, lt: end, limit: 1 } : { gt: after, lt: end, limit: 1 };
      for await (const entry of store.entries(range)) found = entry;
      if (found === null) break;
      const [key, value]: [string, string] = found;
      after = key;
      // Already in the new form: written by an earlier run of this migration.
      if (value.startsWith('#')) continue;
      const moved = await rewriteChunk(store, key, value);
      await store.write(moved.writes, false);
      chunks++;
      pointers += moved.pointers;
      await afterWrite();
    }
    return { chunks, pointers, whole: await verifyOperations(store) };
  });
}

async function rewriteChunk(store: Store, key: string, value: string): Promise<{ writes: BatchOp[]; pointers: number }> {
  let texts: string[];
  let refs: string[];
  try {
    const events = recordJsonList(value, 'event chunk');
    texts = events.map(canonical);
    refs = events.map((e) => decodeOperationJson(e).ref);
  } catch (error) {
    if (error instanceof DamagedRecord) throw new MigrationRefused(`${key}: ${error.message}`);
    throw error;
  }
  const first = parseSeqHex(key.slice(keySpaces.event.length));
  const writes: BatchOp[] = [];
  for (let from = 0; from < texts.length; from += eventChunkEventsMax) {
    writes.push({ type: 'put', key: keys.eventChunk(first + from), value: encodeEventChunk(texts.slice(from, from + eventChunkEventsMax)) });
  }
  // Each operation's record, as it stands or as this write leaves it: the latest event equal to it gets the pointer.
  const distinct = [...new Set(refs)];
  const records = await store.getMany(distinct.map((ref) => keys.operation(ref)));
  const current = new Map<string, string | undefined>();
  for (const [i, ref] of distinct.entries()) current.set(ref, records[i] === undefined ? undefined : await recordText(store, ref, records[i]!));
  const pointed = new Map<string, string>();
  for (const [i, ref] of refs.entries()) {
    if (current.get(ref) !== texts[i]) continue;
    pointed.set(ref, encodeOperationPointer({ chunk: first + i - (i % eventChunkEventsMax), index: i % eventChunkEventsMax }));
  }
  for (const [ref, pointer] of pointed) writes.push({ type: 'put', key: keys.operation(ref), value: pointer });
  return { writes, pointers: pointed.size };
}

/** An `op/` record's operation text: the record itself, or (made a pointer by an earlier chunk of this run) the event it points at. */
async function recordText(store: Store, ref: string, record: string): Promise<string> {
  try {
    const pointer = decodeOperationPointer(record);
    if (pointer === null) return canonical(recordJson(record, 'operation'));
    const chunk = await store.get(keys.eventChunk(pointer.chunk));
    if (chunk === undefined) throw new MigrationRefused(`${keys.operation(ref)} points at an event chunk the book does not hold`);
    return eventChunkText(chunk, pointer.index);
  } catch (error) {
    if (error instanceof DamagedRecord) throw new MigrationRefused(`${keys.operation(ref)}: ${error.message}`);
    throw error;
  }
}

/** Every `op/` record read back through layout 5's reader, a page at a time; returns how many are kept whole. */
async function verifyOperations(store: Store): Promise<number> {
  let whole = 0;
  let after: string | null = null;
  const end = prefixEnd(keySpaces.operation);
  for (;;) {
    const page: [string, string][] = [];
    for await (const entry of store.entries(after === null ? { gte: keySpaces.operation, lt: end, limit: migrateEntriesPerWrite } : { gt: after, lt: end, limit: migrateEntriesPerWrite })) page.push(entry);
    if (page.length === 0) return whole;
    after = page[page.length - 1]![0];
    whole += page.filter(([, text]) => text.startsWith('{')).length;
    try {
      await decidedOfEntries(store, page);
    } catch (error) {
      if (error instanceof DamagedRecord) throw new MigrationRefused(error.message);
      throw error;
    }
  }
}
