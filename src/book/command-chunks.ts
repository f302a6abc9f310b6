/**
 * Store layout 5's intake records (`cmd/<first cseq>`): the Received operations one intake
 * write acknowledges, in chunks of consecutive cseqs of at most eventChunkEventsMax, in the
 * form of model/event-chunk.ts. Decisions go in cseq order, so a chunk is deleted by the round
 * that decides its last command (`PendingCommandChunks`); until then it may also hold commands
 * already decided, which `op/` then names. A layout-4 book's entries (`cmd/<cseq>`, the
 * operation itself) read as chunks of one.
 */
import { assert } from '../assert.js';
import { eventChunkEventsMax } from '../constants.js';
import { decodeOperation, encodeOperation } from '../model/codec.js';
import { encodeEventChunk, eventChunkLength, eventChunkText, eventChunkTexts } from '../model/event-chunk.js';
import { keys, parseSeqHex, prefixEnd } from '../model/keys.js';
import type { Operation } from '../model/model.js';
import type { BatchOp, ReadView } from '../store/port.js';

/** A chunk's first and last cseq. */
export interface CommandChunk {
  readonly first: number;
  readonly last: number;
}

/** The chunks of one intake write's commands (in cseq order): runs of consecutive cseqs, at most eventChunkEventsMax each. */
export function commandChunkWrites(ops: readonly Operation[]): { writes: BatchOp[]; chunks: CommandChunk[] } {
  const writes: BatchOp[] = [];
  const chunks: CommandChunk[] = [];
  let run: Operation[] = [];
  const flush = () => {
    if (run.length === 0) return;
    writes.push({ type: 'put', key: keys.command(run[0]!.cseq), value: encodeEventChunk(run.map(encodeOperation)) });
    chunks.push({ first: run[0]!.cseq, last: run[run.length - 1]!.cseq });
    run = [];
  };
  for (const op of ops) {
    const previous = run[run.length - 1];
    if (previous !== undefined && (op.cseq !== previous.cseq + 1 || run.length === eventChunkEventsMax)) flush();
    run.push(op);
  }
  flush();
  return { writes, chunks };
}

/** A `cmd/` value's operation texts, in cseq order from the key's: a chunk, or a layout-4 entry's one operation. */
export function commandChunkTexts(value: string): string[] {
  return isLayout4Command(value) ? [value] : eventChunkTexts(value);
}

/** The text of a `cmd/` value's `index`th command (from 0), sliced out alone; undefined past its last. */
export function commandChunkText(value: string, index: number): string | undefined {
  if (isLayout4Command(value)) return index === 0 ? value : undefined;
  return index < eventChunkLength(value) ? eventChunkText(value, index) : undefined;
}

/** Every operation of a page of `cmd/` entries, decided ones still in their chunk included. */
export function commandChunkOperations(entries: readonly (readonly [string, string])[]): Operation[] {
  return entries.flatMap(([, value]) => commandChunkTexts(value).map(decodeOperation));
}

/** A layout-4 entry holds its one command whole (an operation's JSON); a chunk begins with its header. */
const isLayout4Command = (value: string): boolean => value.startsWith('{');

/**
 * The `cmd/` chunks holding commands not yet decided, oldest first, as the decider knows them:
 * read at open and after a write failure (with the backlog), added to by each intake write,
 * dropped once a round deciding their last command is durable.
 */
export class PendingCommandChunks {
  private chunks: CommandChunk[] = [];

  reset(chunks: readonly CommandChunk[]): void {
    this.chunks = [...chunks];
  }

  written(chunks: readonly CommandChunk[]): void {
    for (const chunk of chunks) {
      const last = this.chunks[this.chunks.length - 1];
      if (last !== undefined && chunk.first <= last.last) {
        // Read back already by a reload that ran while this write was landing.
        assert(this.chunks.some((c) => c.first === chunk.first && c.last === chunk.last), 'command chunks are written in cseq order');
        continue;
      }
      this.chunks.push(chunk);
    }
  }

  /** The keys of the chunks a round deciding every command through `lastCseq` deletes. */
  decidedThrough(lastCseq: number): string[] {
    const out: string[] = [];
    for (const chunk of this.chunks) {
      if (chunk.last > lastCseq) break;
      out.push(keys.command(chunk.first));
    }
    return out;
  }

  /** A round deciding through `lastCseq` is durable: its chunks are gone. */
  dropThrough(lastCseq: number): void {
    let n = 0;
    while (n < this.chunks.length && this.chunks[n]!.last <= lastCseq) n++;
    if (n > 0) this.chunks.splice(0, n);
  }
}

/**
 * The commands acknowledged and not decided (after `decidedCseq`), in cseq order, and the
 * chunks holding them; a chunk's commands up to `decidedCseq` are decided already.
 */
export async function readBacklog(store: ReadView, decidedCseq: number): Promise<{ ops: Operation[]; chunks: CommandChunk[] }> {
  const ops: Operation[] = [];
  const chunks: CommandChunk[] = [];
  for await (const [key, value] of store.entries({ gte: keys.commandPrefix, lt: prefixEnd(keys.commandPrefix), limit: Number.MAX_SAFE_INTEGER })) {
    const first = parseSeqHex(key.slice(keys.commandPrefix.length));
    const texts = commandChunkTexts(value);
    const last = first + texts.length - 1;
    assert(last > decidedCseq, 'a command chunk is deleted with the decision of its last command');
    chunks.push({ first, last });
    for (const [i, text] of texts.entries()) {
      if (first + i <= decidedCseq) continue;
      const op = decodeOperation(text);
      assert(op.cseq === first + i && op.cseq > (ops[ops.length - 1]?.cseq ?? decidedCseq), 'an undecided command follows the last decided one');
      assert(op.state === 'Received', 'an undecided command is a Received operation');
      ops.push(op);
    }
  }
  return { ops, chunks };
}
