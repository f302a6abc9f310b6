/**
 * `Kernel.gate`, what a command decided at once passes (src/decide/gates.ts): the kernel
 * deciding and its store writable, the caller's restriction, and the accounts it names.
 */
import { describe, expect, it, vi } from 'vitest';
import { Refused } from '../../src/errors.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';
import type { AccountId, IdentityId } from '../../src/model/values.js';
import { submittedWith } from '../support/refusals.js';
import { actorOf, customersGenesis, openBook, operator, submission, transfer } from '../support/book.js';

const alice = actorOf('did:ledger:id:alice');
const aliceAccount = 'did:ledger:acct:alice' as AccountId;

/** What the gate answers: 'ok', or the code it refused with. */
async function gated(promise: Promise<void>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof Refused) return error.refusal.error;
    throw error;
  }
}

class FlakyStore extends MemoryStore {
  failing = false;
  override async write(ops: readonly BatchOp[]): Promise<void> {
    if (this.failing) throw new Error('ENOSPC: no space left on device');
    return super.write(ops);
  }
}

describe('Kernel.gate', () => {
  it('refuses while the store cannot write (ERR-DecisionUnavailable), and passes once it can', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const store = new FlakyStore();
      const { kernel } = await openBook({ genesis: customersGenesis({ alice: 10n, bob: 0n }), store });
      expect(await gated(kernel.gate(alice, [{ id: aliceAccount, moves: false }]))).toBe('ok');
      store.failing = true;
      expect(await submittedWith(kernel.submit(submission(alice, transfer(aliceAccount, 'did:ledger:acct:bob', 1n))))).toBe('ERR-DecisionUnavailable');
      expect(await gated(kernel.gate(alice, []))).toBe('ERR-DecisionUnavailable');
      store.failing = false;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(await gated(kernel.gate(alice, []))).toBe('ok');
      await kernel.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a restricted identity, an unreachable account and a closed one, as the kernel refuses its commands', async () => {
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 10n, bob: 0n }) });
    const bob = actorOf('did:ledger:id:bob');
    // An account bob cannot see answers as an unknown one; the operator learns it is unknown.
    expect(await gated(kernel.gate(bob, [{ id: aliceAccount, moves: false }]))).toBe('ok');
    expect(await gated(kernel.gate(bob, [{ id: 'did:ledger:acct:nobody' as AccountId, moves: false }]))).toBe('ERR-NotAuthorised');
    expect(await gated(kernel.gate(operator, [{ id: 'did:ledger:acct:nobody' as AccountId, moves: false }]))).toBe('ERR-UnknownAccount');
    await kernel.submit(submission(operator, { type: 'restrict_identity', identity: 'did:ledger:id:alice' as IdentityId, justification: 'test' }));
    await kernel.idle();
    expect(await gated(kernel.gate(alice, []))).toBe('ERR-IdentityRestricted');
    await kernel.submit(submission(operator, { type: 'unrestrict_identity', identity: 'did:ledger:id:alice' as IdentityId, justification: 'test' }));
    await kernel.submit(submission(operator, { type: 'freeze_account', account: aliceAccount, justification: 'test' }));
    await kernel.idle();
    expect(await gated(kernel.gate(alice, [{ id: aliceAccount, moves: false }]))).toBe('ok');
    expect(await gated(kernel.gate(alice, [{ id: aliceAccount, moves: true }]))).toBe('ERR-AccountFrozen');
    // Frozen says nothing to one who does not reach the account: its own authority answers.
    expect(await gated(kernel.gate(bob, [{ id: aliceAccount, moves: true }]))).toBe('ok');
    await kernel.close();
  });
});
