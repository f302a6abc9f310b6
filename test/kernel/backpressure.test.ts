/**
 * The backlog is shared: one principal holds at most its share of it, so another is
 * still acknowledged while the first floods; decisions give the slots back.
 */
import { describe, expect, it } from 'vitest';
import { sequentialIds } from '../../src/model/ids.js';
import { admittedPerPrincipalMax } from '../../src/constants.js';
import { Kernel } from '../../src/book/kernel.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';
import { keySpaces } from '../../src/model/keys.js';
import { submittedWith } from '../support/refusals.js';
import { TestClock, actorOf, customersGenesis, openBook, submission, transfer } from '../support/book.js';

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const carol = 'did:ledger:acct:carol';

/** A store whose writes of decisions (operation records) wait until `held` resolves; submissions are written at once. */
class DecisionsHeldStore extends MemoryStore {
  held: Promise<void> | null = null;
  override async write(ops: readonly BatchOp[], sync?: boolean): Promise<void> {
    if (this.held !== null && ops.some((op) => op.key.startsWith(keySpaces.operation))) await this.held;
    return super.write(ops, sync);
  }
}

describe('the backlog shared between principals', () => {
  it('turns a principal away past its share while another is still acknowledged, and frees the share as commands are decided', async () => {
    const store = new MemoryStore();
    const clock = new TestClock();
    await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 1_000n, carol: 0n }), store, clock }).then(({ kernel }) => kernel.close());
    const kernel = await Kernel.open({ store, clock: clock.read, ids: sequentialIds, backlogMax: 8, backlogPerPrincipalMax: 2 });
    const flood = Array.from({ length: 6 }, () => submittedWith(kernel.submit(submission(actorOf('did:ledger:id:alice'), transfer(alice, carol, 1n)))));
    const quiet = Array.from({ length: 2 }, () => submittedWith(kernel.submit(submission(actorOf('did:ledger:id:bob'), transfer(bob, carol, 1n)))));
    const floodResults = await Promise.all(flood);
    expect(floodResults.filter((r) => r === 'accepted')).toHaveLength(2);
    expect(floodResults.filter((r) => r === 'ERR-DecisionUnavailable')).toHaveLength(4);
    expect(await Promise.all(quiet)).toEqual(['accepted', 'accepted']);
    await kernel.idle();
    expect(await submittedWith(kernel.submit(submission(actorOf('did:ledger:id:alice'), transfer(alice, carol, 1n))))).toBe('accepted');
    await kernel.close();
  });

  it('takes commands into rounds in turn per principal: a flood waits behind its own admitted commands, not another principal\'s', async () => {
    const store = new MemoryStore();
    const clock = new TestClock();
    await openBook({ genesis: customersGenesis({ alice: 1_000_000n, bob: 1_000n, carol: 0n }), store, clock }).then(({ kernel }) => kernel.close());
    const kernel = await Kernel.open({ store, clock: clock.read, ids: sequentialIds });
    const floodCount = admittedPerPrincipalMax * 2;
    const flood = Array.from({ length: floodCount }, () => kernel.submit(submission(actorOf('did:ledger:id:alice'), transfer(alice, carol, 1n))));
    // Submitted after the whole flood, in the same turn.
    const quiet = await kernel.submit(submission(actorOf('did:ledger:id:bob'), transfer(bob, carol, 1n)));
    const floodAcks = await Promise.all(flood);
    // The first round takes one of each in turn: bob's command is second, not after 2,048 of alice's.
    expect(sequentialIds.cseqOf(quiet.operation.ref)!).toBeLessThanOrEqual(2);
    // Alice's commands past her bound were taken only as hers were decided, after bob's.
    const later = floodAcks.filter((a) => sequentialIds.cseqOf(a.operation.ref)! > admittedPerPrincipalMax + 1);
    expect(later).toHaveLength(floodCount - admittedPerPrincipalMax);
    await kernel.idle();
    const decidedQuiet = (await kernel.operation(quiet.operation.ref))!;
    expect(decidedQuiet.state).toBe('Completed');
    await kernel.close();
  });

  it('refuses a command that waits its whole admission wait for its turn, and takes the rest once the flood is decided', async () => {
    const store = new DecisionsHeldStore();
    const clock = new TestClock();
    await openBook({ genesis: customersGenesis({ alice: 1_000_000n, bob: 1_000n, carol: 0n }), store, clock }).then(({ kernel }) => kernel.close());
    // Decisions' writes are held back, so alice's admitted commands stay at their bound.
    let release!: () => void;
    store.held = new Promise<void>((r) => (release = r));
    const kernel = await Kernel.open({ store, clock: clock.read, ids: sequentialIds, admissionWaitMs: 1_000 });
    const flood = Array.from({ length: admittedPerPrincipalMax + 3 }, () => submittedWith(kernel.submit(submission(actorOf('did:ledger:id:alice'), transfer(alice, carol, 1n)))));
    const results = await Promise.all(flood);
    expect(results.filter((r) => r === 'accepted')).toHaveLength(admittedPerPrincipalMax);
    expect(results.filter((r) => r === 'ERR-DecisionUnavailable')).toHaveLength(3);
    release();
    await kernel.idle();
    expect(await submittedWith(kernel.submit(submission(actorOf('did:ledger:id:alice'), transfer(alice, carol, 1n))))).toBe('accepted');
    await kernel.close();
  });
});
