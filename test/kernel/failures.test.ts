/**
 * Operating errors are handled, not fatal: a store that cannot write turns new
 * commands away with ERR-DecisionUnavailable and the kernel resumes when it can;
 * a full backlog does the same. A retry under the same client key has one effect.
 */
import { submittedWith } from '../support/refusals.js';
import { describe, expect, it, vi } from 'vitest';
import { sequentialIds } from '../../src/model/ids.js';
import { Kernel } from '../../src/book/kernel.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';
import { TestClock, actorOf, available, customersGenesis, openBook, submission, transfer } from '../support/book.js';

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const aliceActor = actorOf('did:ledger:id:alice');

/** A memory store whose writes fail while `failing` is set, like a full disk. */
class FlakyStore extends MemoryStore {
  failing = false;
  override async write(ops: readonly BatchOp[]): Promise<void> {
    if (this.failing) throw new Error('ENOSPC: no space left on device');
    return super.write(ops);
  }
}


describe('operating errors', () => {
  it('refuses with ERR-DecisionUnavailable while the store cannot write, then resumes with one effect per key', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const store = new FlakyStore();
      const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }), store });
      store.failing = true;
      expect(await submittedWith(kernel.submit(submission(aliceActor, transfer(alice, bob, 5n), { clientKey: 'retry-me' })))).toBe('ERR-DecisionUnavailable');
      // While the failure stands, new commands are turned away at once.
      expect(await submittedWith(kernel.submit(submission(aliceActor, transfer(alice, bob, 5n), { clientKey: 'other' })))).toBe('ERR-DecisionUnavailable');
      expect(kernel.writeAvailable).toBe(false);
      store.failing = false;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(kernel.writeAvailable).toBe(true);
      const first = await kernel.submit(submission(aliceActor, transfer(alice, bob, 5n), { clientKey: 'retry-me' }));
      const again = await kernel.submit(submission(aliceActor, transfer(alice, bob, 5n), { clientKey: 'retry-me' }));
      expect(again.operation.ref).toBe(first.operation.ref);
      await kernel.idle();
      expect(await available(kernel, bob)).toBe(5n);
      await kernel.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps a decision round that failed to write, and decides it once the store recovers', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const store = new FlakyStore();
      const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }), store });
      const realWrite = MemoryStore.prototype.write;
      let writes = 0;
      // Fail the second write: the first makes the submission durable, the second is its decision.
      store.write = async function (ops) {
        if (++writes === 2) throw new Error('EIO: i/o error');
        return realWrite.call(this, ops);
      };
      const ack = await kernel.submit(submission(aliceActor, transfer(alice, bob, 7n)));
      await kernel.idle();
      expect((await kernel.operation(ack.operation.ref))?.state).toBe('Received');
      await vi.advanceTimersByTimeAsync(1_000);
      await kernel.idle();
      expect((await kernel.operation(ack.operation.ref))?.state).toBe('Completed');
      expect(await available(kernel, bob)).toBe(7n);
      await kernel.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('turns commands away with ERR-DecisionUnavailable once the backlog reaches its bound', async () => {
    const store = new MemoryStore();
    const clock = new TestClock();
    await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }), store, clock }).then(({ kernel }) => kernel.close());
    const kernel = await Kernel.open({ store, clock: clock.read, ids: sequentialIds, backlogMax: 3 });
    const results = await Promise.all(Array.from({ length: 5 }, () => submittedWith(kernel.submit(submission(aliceActor, transfer(alice, bob, 1n))))));
    expect(results.filter((r) => r === 'accepted')).toHaveLength(3);
    expect(results.filter((r) => r === 'ERR-DecisionUnavailable')).toHaveLength(2);
    await kernel.idle();
    expect(await submittedWith(kernel.submit(submission(aliceActor, transfer(alice, bob, 1n))))).toBe('accepted');
    await kernel.close();
  });
});
