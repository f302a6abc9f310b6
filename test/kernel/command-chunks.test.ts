/**
 * Store layout 5's intake chunks (src/book/command-chunks.ts): one intake write's commands in
 * chunks of consecutive cseqs, at most eventChunkEventsMax each; the chunks a round deletes
 * (those whose last command it decides); the backlog read back from chunks partly decided and
 * from a layout-4 book's single entries; a Received operation found in its chunk.
 */
import { describe, expect, it } from 'vitest';
import { PendingCommandChunks, commandChunkWrites, readBacklog } from '../../src/book/command-chunks.js';
import { Kernel } from '../../src/book/kernel.js';
import { eventChunkEventsMax } from '../../src/constants.js';
import { decodeOperation, encodeOperation, encodeOperationJson } from '../../src/model/codec.js';
import { encodeEventChunk, eventChunkTexts } from '../../src/model/event-chunk.js';
import { sequentialIds } from '../../src/model/ids.js';
import { keys, prefixEnd } from '../../src/model/keys.js';
import type { Operation } from '../../src/model/model.js';
import { readReceived } from '../../src/queries/operation-records.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';
import { TestClock, actorOf, customersGenesis, openBook, receivedOperation, submission, transfer } from '../support/book.js';

/** A Received operation of command `cseq` (only what the chunks read of it matters). */
const received = (cseq: number): Operation =>
  receivedOperation(cseq, { type: 'transfer', legs: [], deadlineMs: 1 }, { principal: 'did:ledger:id:alice', credential: 'did:ledger:cred:alice', onBehalfOf: null, grant: null, kind: 'owner' } as Operation['actor'], 1);

const cseqs = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('intake chunks', () => {
  it('chunks one write\'s commands into runs of consecutive cseqs of at most eventChunkEventsMax', () => {
    const ops = [...cseqs(5, 5 + eventChunkEventsMax), ...cseqs(100, 101)].map(received);
    const { writes, chunks } = commandChunkWrites(ops);
    expect(chunks).toEqual([
      { first: 5, last: 4 + eventChunkEventsMax },
      { first: 5 + eventChunkEventsMax, last: 5 + eventChunkEventsMax },
      { first: 100, last: 101 },
    ]);
    expect(writes.map((w) => w.key)).toEqual(chunks.map((c) => keys.command(c.first)));
  });

  it('deletes a chunk with the round deciding its last command, once that round is durable', () => {
    const pending = new PendingCommandChunks();
    pending.written([{ first: 1, last: 16 }]);
    pending.written([{ first: 17, last: 20 }]);
    expect(pending.decidedThrough(15)).toEqual([]);
    expect(pending.decidedThrough(16)).toEqual([keys.command(1)]);
    expect(pending.decidedThrough(20)).toEqual([keys.command(1), keys.command(17)]);
    pending.dropThrough(16);
    expect(pending.decidedThrough(20)).toEqual([keys.command(17)]);
    expect(() => pending.written([{ first: 18, last: 18 }])).toThrow(/cseq order/);
    // A chunk a reload read back while its write landed is known once.
    pending.written([{ first: 17, last: 20 }]);
    expect(pending.decidedThrough(20)).toEqual([keys.command(17)]);
  });

  it('reads the backlog back from a chunk partly decided and from layout 4\'s single entries, and finds each Received operation', async () => {
    const store = new MemoryStore();
    const { writes } = commandChunkWrites(cseqs(3, 8).map(received));
    await store.write([...writes, { type: 'put', key: keys.command(9), value: encodeOperationJson(received(9)) }]);
    const backlog = await readBacklog(store, 5);
    expect(backlog.ops.map((op) => op.cseq)).toEqual([6, 7, 8, 9]);
    expect(backlog.chunks).toEqual([{ first: 3, last: 8 }, { first: 9, last: 9 }]);
    for (const cseq of cseqs(3, 9)) expect((await readReceived(store, cseq))?.ref).toBe(sequentialIds.operationRef(cseq));
    expect(await readReceived(store, 2)).toBeUndefined();
    expect(await readReceived(store, 10)).toBeUndefined();
    // A chunk whose every command is decided was deleted with the last decision: one found is damage.
    await expect(readBacklog(store, 8)).rejects.toThrow(/deleted with the decision of its last command/);
  });
});

describe('a kernel on intake chunks', () => {
  it('writes one chunk per intake write and leaves none once every command is decided', async () => {
    const store = new MemoryStore();
    const clock = new TestClock();
    await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }), store, clock }).then(({ kernel }) => kernel.close());
    const written: string[] = [];
    const recording = Object.assign(Object.create(store) as MemoryStore, {
      write: async (ops: Parameters<MemoryStore['write']>[0], sync?: boolean) => {
        for (const op of ops) if (op.key.startsWith(keys.commandPrefix)) written.push(`${op.type} ${op.key}`);
        return store.write(ops, sync);
      },
    });
    const kernel = await Kernel.open({ store: recording, clock: clock.read, ids: sequentialIds });
    const acks = await Promise.all(Array.from({ length: 5 }, () => kernel.submit(submission(actorOf('did:ledger:id:alice'), transfer('did:ledger:acct:alice', 'did:ledger:acct:bob', 1n)))));
    await kernel.idle();
    for (const ack of acks) expect((await kernel.operation(ack.operation.ref))?.state).toBe('Completed');
    // Every put of a chunk is matched by its deletion, and fewer chunks than commands were written.
    const puts = written.filter((w) => w.startsWith('put'));
    expect(puts.length).toBeLessThan(acks.length);
    expect(written.filter((w) => w.startsWith('del')).sort()).toEqual(puts.map((w) => w.replace('put', 'del')).sort());
    const left: string[] = [];
    for await (const [key] of store.entries({ gte: keys.commandPrefix, lt: prefixEnd(keys.commandPrefix), limit: 10 })) left.push(key);
    expect(left).toEqual([]);
    await kernel.close();
  });
});

describe('chunks mixing the forms of operations', () => {
  it("reads layout 7's compact operations and layouts 2-6's objects side by side in one intake or event chunk", async () => {
    const store = new MemoryStore();
    const clock = new TestClock();
    await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }), store, clock }).then(({ kernel }) => kernel.close());
    // Three acknowledged commands in one intake chunk, the middle one in the compact form (a book moved to layout 7 by the mark alone).
    const decidedCseq = Number((await store.get(keys.cseq)) ?? 0);
    const alice = { principal: 'did:ledger:id:alice', credential: 'did:ledger:cred:alice', onBehalfOf: null, grant: null, kind: 'owner' } as Operation['actor'];
    const backlog = cseqs(decidedCseq + 1, decidedCseq + 3).map((cseq) => receivedOperation(cseq, transfer('did:ledger:acct:alice', 'did:ledger:acct:bob', BigInt(cseq)), alice, clock.read()));
    const texts = backlog.map((op, i) => (i === 1 ? encodeOperation(op) : encodeOperationJson(op)));
    expect(texts.map((t) => t[0])).toEqual(['{', '[', '{']);
    await store.write([{ type: 'put', key: keys.command(decidedCseq + 1), value: encodeEventChunk(texts) }, { type: 'put', key: keys.cseq, value: String(decidedCseq + 3) }]);
    expect((await readBacklog(store, decidedCseq)).ops).toEqual(backlog);
    for (const op of backlog) expect(await readReceived(store, op.cseq)).toEqual(op);

    // Decided by a kernel reopened over them; then each event chunk rewritten with every other operation in the old form.
    let kernel = await Kernel.open({ store, clock: clock.read, ids: sequentialIds });
    await kernel.idle();
    expect(kernel.fatalError).toBeNull();
    const decided = await Promise.all(backlog.map((op) => kernel.operation(op.ref)));
    expect(decided.map((op) => op?.state)).toEqual(['Completed', 'Completed', 'Completed']);
    const events = await kernel.eventsAfter(0, 1000);
    await kernel.close();
    const mixed: BatchOp[] = [];
    for await (const [key, value] of store.entries({ gte: keys.eventPrefix, lt: prefixEnd(keys.eventPrefix), limit: 1000 })) {
      const chunk = eventChunkTexts(value).map((text, i) => (i % 2 === 0 ? encodeOperationJson(decodeOperation(text)) : text));
      mixed.push({ type: 'put', key, value: encodeEventChunk(chunk) });
    }
    expect(mixed.length).toBeGreaterThan(0);
    await store.write(mixed);
    kernel = await Kernel.open({ store, clock: clock.read, ids: sequentialIds });
    try {
      expect(await Promise.all(backlog.map((op) => kernel.operation(op.ref)))).toEqual(decided);
      expect(await kernel.eventsAfter(0, 1000)).toEqual(events);
    } finally {
      await kernel.close();
    }
  });
});
