/**
 * Decision events: the listeners told of each committed change, the stored event chunks
 * (`ev/`, model/event-chunk.ts) read back in order, and waiting for one operation's decision.
 */
import { decodeOperation } from '../model/codec.js';
import { eventChunkLength, eventChunkText } from '../model/event-chunk.js';
import { keys, parseSeqHex, prefixEnd } from '../model/keys.js';
import type { Operation } from '../model/model.js';
import type { Store } from '../store/port.js';
import type { DecisionEvent } from './kernel-types.js';

export class DecisionEvents {
  private readonly listeners = new Set<(event: DecisionEvent) => void>();

  constructor(
    private readonly store: Store,
    private readonly readOperation: (ref: string) => Promise<Operation | undefined>,
  ) {}

  /**
   * The operation once decided (out of Received), or null when `timeoutMs` passes
   * first. Bounded: one listener, removed on either outcome.
   */
  decision(ref: string, timeoutMs: number): Promise<Operation | null> {
    return new Promise((resolve) => {
      const finish = (op: Operation | null) => {
        clearTimeout(timer);
        off();
        resolve(op);
      };
      const off = this.onDecision((event) => {
        if (event.operation.ref === ref && event.operation.state !== 'Received') finish(event.operation);
      });
      const timer = setTimeout(() => finish(null), timeoutMs);
      timer.unref();
      // Listening first, then reading: a decision written in between is seen either way.
      // A read that fails leaves the timeout to answer.
      this.readOperation(ref).then((op) => {
        if (op !== undefined && op.state !== 'Received') finish(op);
      }, () => {});
    });
  }

  onDecision(listener: (event: DecisionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells every listener of the operations a committed round changed, numbered from `eventStart + 1`. */
  emitRound(eventStart: number, events: readonly Operation[]): void {
    for (const [i, op] of events.entries()) this.emit({ seq: eventStart + i + 1, operation: op });
  }

  private emit(event: DecisionEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** Stored events after `afterSeq`, oldest first, at most `limit`. */
  async eventsAfter(afterSeq: number, limit: number): Promise<DecisionEvent[]> {
    // The chunk holding event afterSeq+1 is the last one starting at or before it.
    let from = keys.eventChunk(afterSeq + 1);
    for await (const [key] of this.store.entries({ gte: keys.eventPrefix, lte: from, reverse: true, limit: 1 })) from = key;
    const out: DecisionEvent[] = [];
    // Each chunk holds at least one event, so `limit` chunks always suffice.
    for await (const [key, value] of this.store.entries({ gte: from, lt: prefixEnd(keys.eventPrefix), limit })) {
      const first = parseSeqHex(key.slice(keys.eventPrefix.length));
      const count = eventChunkLength(value);
      // Only the events asked for are parsed (a page may start or end inside a chunk).
      for (let i = Math.max(0, afterSeq + 1 - first); i < count && out.length < limit; i++) {
        out.push({ seq: first + i, operation: decodeOperation(eventChunkText(value, i)) });
      }
      if (out.length >= limit) break;
    }
    return out;
  }

  clear(): void {
    this.listeners.clear();
  }
}
