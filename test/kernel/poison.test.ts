/**
 * Poison commands: a command whose decision trips an assertion is refused with
 * ERR-Internal, alone; the rest of its round is decided as usual, the kernel keeps
 * deciding, and the same holds when the poison is found under cmd/ on reopen.
 */
import { describe, expect, it } from 'vitest';
import { fail } from '../../src/assert.js';
import { keys } from '../../src/codec.js';
import { sequentialIds } from '../../src/ids.js';
import { Kernel, type PoisonReport } from '../../src/kernel.js';
import type { Operation } from '../../src/model.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';
import { TestClock, actorOf, customersGenesis, openBook, submission, transfer } from '../support/book.js';

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const aliceActor = actorOf('did:ledger:id:alice');

/** Trips an assertion while deciding any command whose reference holds "poison". */
const poisonHook = (op: Operation) => {
  if (op.reference !== null && op.reference.includes('poison')) fail(`test poison in ${op.ref}`);
};

/** A memory store that takes submissions but fails every decision write, so commands stay under cmd/. */
class UndecidingStore extends MemoryStore {
  deciding = true;
  override async write(ops: readonly BatchOp[]): Promise<void> {
    if (!this.deciding && ops.some((op) => op.key === keys.head)) throw new Error('EIO: i/o error');
    return super.write(ops);
  }
}

async function submitThree(kernel: Kernel) {
  return Promise.all([
    kernel.submit(submission(aliceActor, transfer(alice, bob, 1n), { reference: '"first"' })),
    kernel.submit(submission(aliceActor, transfer(alice, bob, 2n), { reference: '"poison"' })),
    kernel.submit(submission(aliceActor, transfer(alice, bob, 4n), { reference: '"third"' })),
  ]);
}

async function expectPoisonRefused(kernel: Kernel, refs: readonly string[], reports: readonly PoisonReport[]) {
  const [first, poison, third] = await Promise.all(refs.map((ref) => kernel.operation(ref)));
  expect(first?.state).toBe('Completed');
  expect(third?.state).toBe('Completed');
  expect(poison?.state).toBe('Rejected');
  expect(poison?.error?.error).toBe('ERR-Internal');
  expect(poison?.result).toBeNull();
  expect(reports.map((r) => [r.operation, r.what])).toEqual([[refs[1], 'transfer']]);
  expect(reports[0]!.error.message).toContain('test poison');
  expect(kernel.fatalError).toBeNull();
  const view = await kernel.openView();
  try {
    expect((await view.trialBalance(null)).unbalanced).toEqual([]);
  } finally {
    await view.close();
  }
}

describe('poison commands', () => {
  it('refuses the command whose decision trips an assertion with ERR-Internal and decides the rest of its round', async () => {
    const store = new MemoryStore();
    const clock = new TestClock();
    await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }), store, clock }).then(({ kernel }) => kernel.close());
    const reports: PoisonReport[] = [];
    const kernel = await Kernel.open({ store, clock: clock.read, ids: sequentialIds, beforeDecide: poisonHook, onPoison: (r) => reports.push(r) });
    const acks = await submitThree(kernel);
    await kernel.idle();
    await expectPoisonRefused(kernel, acks.map((a) => a.operation.ref), reports);
    // The kernel goes on deciding.
    const after = await kernel.submit(submission(aliceActor, transfer(alice, bob, 8n)));
    await kernel.idle();
    expect((await kernel.operation(after.operation.ref))?.state).toBe('Completed');
    await kernel.close();
  });

  it('does the same for a poison left under cmd/ and found on reopen', async () => {
    const store = new UndecidingStore();
    const clock = new TestClock();
    await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }), store, clock }).then(({ kernel }) => kernel.close());
    store.deciding = false;
    const first = await Kernel.open({ store, clock: clock.read, ids: sequentialIds, beforeDecide: poisonHook });
    const refs = (await submitThree(first)).map((a) => a.operation.ref);
    await first.idle();
    await first.close();
    expect((await store.get(keys.command(3)))).toBeDefined();

    store.deciding = true;
    const reports: PoisonReport[] = [];
    const kernel = await Kernel.open({ store, clock: clock.read, ids: sequentialIds, beforeDecide: poisonHook, onPoison: (r) => reports.push(r) });
    await kernel.idle();
    await expectPoisonRefused(kernel, refs, reports);
    await kernel.close();
  });
});
