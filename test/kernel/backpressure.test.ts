/**
 * The backlog is shared: one principal holds at most its share of it, so another is
 * still acknowledged while the first floods; decisions give the slots back.
 */
import { describe, expect, it } from 'vitest';
import { sequentialIds } from '../../src/model/ids.js';
import { Kernel } from '../../src/book/kernel.js';
import { MemoryStore } from '../../src/store/memory.js';
import { submittedWith } from '../support/refusals.js';
import { TestClock, actorOf, customersGenesis, openBook, submission, transfer } from '../support/book.js';

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const carol = 'did:ledger:acct:carol';

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
});
