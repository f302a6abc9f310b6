/**
 * Poison commands: a command whose decision trips an assertion is refused with
 * ERR-Internal, alone; the rest of its round is decided as usual, the kernel keeps
 * deciding, and the same holds when the poison is found under cmd/ on reopen.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { issueChallenge } from '../../src/auth/challenges.js';
import { fail } from '../../src/assert.js';
import { sequentialIds } from '../../src/model/ids.js';
import type { DirectCommand } from '../../src/decide/decide-auth.js';
import { Kernel, type PoisonReport, type RoundPart } from '../../src/book/kernel.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';
import { TestClock, acct, actorOf, available, customersGenesis, openBook, submission, sym, transfer } from '../support/book.js';
import { submittedWith } from '../support/refusals.js';
import { keys } from '../../src/model/keys.js';
import { readReceived } from '../../src/queries/operation-records.js';

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const aliceActor = actorOf('did:ledger:id:alice');

/** Trips an assertion while deciding any command whose reference holds "poison". */
const poisonHook = (part: RoundPart) => {
  if (part.kind === 'command' && part.op.reference !== null && part.op.reference.includes('poison')) fail(`test poison in ${part.op.ref}`);
};

/** A memory store that takes submissions but fails every decision write, so commands stay under cmd/. */
class UndecidingStore extends MemoryStore {
  deciding = true;
  override async write(ops: readonly BatchOp[]): Promise<void> {
    if (!this.deciding && ops.some((op) => op.key === keys.head)) throw new Error('EIO: i/o error');
    return super.write(ops);
  }
}

/** A sealed book of alice and bob in memory, closed: tests open their kernel over it. */
async function sealedBook() {
  const store = new MemoryStore();
  const clock = new TestClock();
  await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }), store, clock }).then(({ kernel }) => kernel.close());
  return { store, clock };
}

/** A kernel over `book` with a poison hook, collecting what it reports. */
async function openPoisoned(book: Awaited<ReturnType<typeof sealedBook>>, hook: (part: RoundPart) => void) {
  const reports: PoisonReport[] = [];
  const kernel = await Kernel.open({ store: book.store, clock: book.clock.read, ids: sequentialIds, beforeDecide: hook, onPoison: (r) => reports.push(r) });
  return { kernel, reports };
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
    const { kernel, reports } = await openPoisoned(await sealedBook(), poisonHook);
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
    expect(await readReceived(store, 3)).toBeDefined();

    store.deciding = true;
    const { kernel, reports } = await openPoisoned({ store, clock }, poisonHook);
    await kernel.idle();
    await expectPoisonRefused(kernel, refs, reports);
    await kernel.close();
  });

  it('gives up only the automatic expiry of a reservation whose expiry trips an assertion; its hold stays', async () => {
    const { store, clock } = await sealedBook();
    let target: string | null = null;
    const hook = (part: RoundPart) => {
      if (part.kind === 'expiry' && part.op.ref === target) fail('test poison in an expiry');
    };
    const { kernel, reports } = await openPoisoned({ store, clock }, hook);
    const reserve = (amountMinor: bigint) => ({ type: 'reserve' as const, payer: acct(alice), asset: sym('USD'), amountMinor, deadlineMs: clock.nowMs + 60_000 });
    const [poisoned, healthy] = await Promise.all([kernel.submit(submission(aliceActor, reserve(300n))), kernel.submit(submission(aliceActor, reserve(200n)))]);
    await kernel.idle();
    target = poisoned.operation.ref;
    const deadlineMs = clock.nowMs + 60_000;
    clock.advance(60_001);
    const later = await kernel.submit(submission(aliceActor, transfer(alice, bob, 5n)));
    await kernel.poke();
    expect((await kernel.operation(poisoned.operation.ref))?.state).toBe('Reserved');
    expect((await kernel.operation(healthy.operation.ref))?.state).toBe('Expired');
    expect((await kernel.operation(later.operation.ref))?.state).toBe('Completed');
    expect(reports.map((r) => [r.operation, r.what])).toEqual([[target, 'expiry']]);
    expect(await store.get(keys.expiry(deadlineMs, target))).toBeUndefined();
    // Not met again: later rounds do not retry it.
    clock.advance(1_000);
    await kernel.poke();
    expect(reports).toHaveLength(1);
    expect(await available(kernel, alice)).toBe(1_000n - 300n - 5n);
    expect(kernel.fatalError).toBeNull();
    await kernel.close();
  });

  it('answers a direct decision that trips an assertion with ERR-Internal and decides the rest of its round', async () => {
    const { store, clock } = await sealedBook();
    const kernelKey = new Uint8Array(32).fill(9);
    // Sign-ins for a credential the book does not hold: the good one is decided (refused), the bad one trips.
    const signIn = (credential: string) => {
      const issued = issueChallenge({ macKey: kernelKey, purpose: 'authenticate', identity: null, randomBytes: randomBytes(32), nowMs: clock.nowMs });
      if ('error' in issued) throw new Error(issued.description);
      const session = { credential, principal: 'did:ledger:id:alice', scheme: 'webauthn-es256', expiresAtMs: clock.nowMs + 60_000, scope: null, hash: randomBytes(32).toString('hex') };
      return { type: 'sign_in' as const, credential, challenge: issued.challenge, counter: 1, session } as unknown as DirectCommand;
    };
    const [bad, good] = [signIn('did:ledger:cred:bad'), signIn('did:ledger:cred:good')];
    const hook = (part: RoundPart) => {
      if (part.kind === 'direct' && part.command.credential === bad.credential) fail('test poison in a sign-in');
    };
    const reports: PoisonReport[] = [];
    const kernel = await Kernel.open({ store, clock: clock.read, ids: sequentialIds, challengeMacKey: kernelKey, beforeDecide: hook, onPoison: (r) => reports.push(r) });
    const [badOutcome, goodOutcome, ack] = await Promise.all([submittedWith(kernel.decideDirect(bad)), kernel.decideDirect(good), kernel.submit(submission(aliceActor, transfer(alice, bob, 5n)))]);
    await kernel.idle();
    expect(badOutcome).toBe('ERR-Internal');
    expect(goodOutcome?.error).toBe('ERR-CredentialInvalid');
    expect((await kernel.operation(ack.operation.ref))?.state).toBe('Completed');
    expect(reports.map((r) => [r.operation, r.what])).toEqual([[null, 'sign_in']]);
    expect(kernel.fatalError).toBeNull();
    await kernel.close();
  });

  it('refuses a submission whose precheck trips an assertion with ERR-Internal, alone, and keeps taking commands', async () => {
    const { store, clock } = await sealedBook();
    const hook = (part: RoundPart) => {
      if (part.kind === 'precheck' && part.sub.reference?.includes('poison')) fail('test poison in a precheck');
    };
    const { kernel, reports } = await openPoisoned({ store, clock }, hook);
    const outcomes = await Promise.all(
      ['"one"', '"poison"', '"three"'].map((reference) => submittedWith(kernel.submit(submission(aliceActor, transfer(alice, bob, 1n), { reference })))),
    );
    expect(outcomes).toEqual(['accepted', 'ERR-Internal', 'accepted']);
    expect(reports.map((r) => [r.operation, r.what])).toEqual([[null, 'transfer']]);
    await kernel.idle();
    expect(await available(kernel, bob)).toBe(2n);
    expect(kernel.fatalError).toBeNull();
    await kernel.close();
  });
});
