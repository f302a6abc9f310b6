/**
 * A write reported failed may still have landed (an fsync error after the data
 * reached the disk). Once the store recovers, the kernel follows what the store
 * holds: a submission that landed is decided (once), a decision that landed is not
 * taken again.
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';
import { submittedWith } from '../support/refusals.js';
import { actorOf, available, customersGenesis, openBook, submission, transfer } from '../support/book.js';
import { keys } from '../../src/model/keys.js';

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const aliceActor = actorOf('did:ledger:id:alice');

/** Applies the next write that matches, then reports it failed. */
class LandsThenFails extends MemoryStore {
  armed: ((ops: readonly BatchOp[]) => boolean) | null = null;
  recoveries = 0;
  override async write(ops: readonly BatchOp[]): Promise<void> {
    await super.write(ops);
    if (this.armed?.(ops)) {
      this.armed = null;
      throw new Error('EIO: fsync failed');
    }
  }
  override async recover(): Promise<void> {
    this.recoveries++;
  }
}

describe('writes reported failed that landed', () => {
  it('decides a submission whose write landed, once, and answers its retry as a repeat', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const store = new LandsThenFails();
      const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }), store });
      store.armed = (ops) => ops.some((op) => op.key.startsWith(keys.commandPrefix) && op.type === 'put');
      expect(await submittedWith(kernel.submit(submission(aliceActor, transfer(alice, bob, 5n), { clientKey: 'landed' })))).toBe('ERR-DecisionUnavailable');
      await vi.advanceTimersByTimeAsync(1_000);
      await kernel.idle();
      const again = await kernel.submit(submission(aliceActor, transfer(alice, bob, 5n), { clientKey: 'landed' }));
      expect(again.repeat).toBe(true);
      expect(again.operation.state).toBe('Completed');
      expect(await available(kernel, bob)).toBe(5n);
      expect(store.recoveries).toBe(1);
      await kernel.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not decide again a round whose write landed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const store = new LandsThenFails();
      const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }), store });
      store.armed = (ops) => ops.some((op) => op.key === keys.head);
      const ack = await kernel.submit(submission(aliceActor, transfer(alice, bob, 7n)));
      await kernel.idle();
      await vi.advanceTimersByTimeAsync(1_000);
      await kernel.idle();
      const op = await kernel.operation(ack.operation.ref);
      expect(op?.state).toBe('Completed');
      expect(op?.result?.postings).toHaveLength(2);
      expect(kernel.currentHead.postingSeq).toBe(op!.result!.postings!.at(-1));
      expect(await available(kernel, bob)).toBe(7n);
      const view = await kernel.openView();
      expect((await view.trialBalance(null)).unbalanced).toEqual([]);
      await view.close();
      await kernel.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
