/**
 * What a round writes of the operations it changed (store layout 5, model/event-chunk.ts):
 * their events in chunks of at most eventChunkEventsMax, each operation's text written once
 * there, and for each operation `op/<ref>` pointing at its latest event.
 */
import { eventChunkEventsMax } from '../constants.js';
import { encodeOperation } from '../model/codec.js';
import { encodeEventChunk, encodeOperationPointer } from '../model/event-chunk.js';
import { keys } from '../model/keys.js';
import type { Operation } from '../model/model.js';
import type { BatchOp } from '../store/port.js';

/** The writes of events numbered from `eventStart + 1`; `pointed`: the operations given a pointer (one per distinct reference). */
export function eventRecordWrites(events: readonly Operation[], eventStart: number): { writes: BatchOp[]; pointed: number } {
  const writes: BatchOp[] = [];
  const latest = new Map<string, string>();
  for (let from = 0; from < events.length; from += eventChunkEventsMax) {
    const part = events.slice(from, from + eventChunkEventsMax);
    const chunk = eventStart + 1 + from;
    writes.push({ type: 'put', key: keys.eventChunk(chunk), value: encodeEventChunk(part.map(encodeOperation)) });
    for (const [index, op] of part.entries()) latest.set(op.ref, encodeOperationPointer({ chunk, index }));
  }
  for (const [ref, pointer] of latest) writes.push({ type: 'put', key: keys.operation(ref), value: pointer });
  return { writes, pointed: latest.size };
}
