import { describe, expect, it } from 'vitest';
import { submittedWith } from '../support/refusals.js';
import { defaultGenesis } from '../../src/book/genesis.js';
import { acct, actorOf, customersGenesis, issuanceGrant, openBook, operator, submission, sym, transfer } from '../support/book.js';

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const aliceActor = actorOf('did:ledger:id:alice');
const bobActor = actorOf('did:ledger:id:bob');


async function balances(kernel: Awaited<ReturnType<typeof openBook>>['kernel'], account: string, asset = 'USD') {
  const view = await kernel.openView();
  try {
    return await view.balance(acct(account), sym(asset));
  } finally {
    await view.close();
  }
}

describe('transfers', () => {
  it('acknowledges at Received, then decides Completed with balanced postings', async () => {
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 10_000n, bob: 0n }) });
    const ack = await kernel.submit(submission(aliceActor, transfer(alice, bob, 2_500n), { reference: '{"invoice": 7}' }));
    expect(ack.operation.state).toBe('Received');
    expect(ack.repeat).toBe(false);
    await kernel.idle();
    const op = await kernel.operation(ack.operation.ref);
    expect(op?.state).toBe('Completed');
    expect(op?.result?.postings).toHaveLength(2);
    expect(await balances(kernel, alice)).toMatchObject({ available: 7_500n, reserved: 0n });
    expect(await balances(kernel, bob)).toMatchObject({ available: 2_500n });
    const view = await kernel.openView();
    const tb = await view.trialBalance(null);
    expect(tb.unbalanced).toEqual([]);
    expect(tb.rows.every((r) => r.openingsMinor === 0n)).toBe(true);
    const page = await view.movements(operator, { account: acct(bob), identity: null, limit: 10, fromMs: null, toMs: null, asset: null, direction: null, cursor: null });
    expect(page.movements.map((m) => [m.direction, m.amountMinor, m.reference])).toEqual([['credit', 2_500n, '{"invoice": 7}']]);
    expect(page.movements[0]!.authorities[0]).toMatchObject({ kind: 'owner', principal: 'did:ledger:id:alice' });
    await view.close();
    await kernel.close();
  });

  it('rejects an overdraft of a customer account and moves nothing (all legs or none)', async () => {
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 500n }) });
    const ack = await kernel.submit(
      submission(operator, {
        type: 'transfer',
        deadlineMs: Number.MAX_SAFE_INTEGER,
        legs: [
          { from: acct(alice), to: acct(bob), asset: sym('USD'), amountMinor: 900n },
          { from: acct(alice), to: acct(bob), asset: sym('USD'), amountMinor: 200n },
        ],
      }),
    );
    await kernel.idle();
    const op = await kernel.operation(ack.operation.ref);
    expect(op?.state).toBe('Rejected');
    expect(op?.error?.error).toBe('ERR-InsufficientAvailable');
    expect(await balances(kernel, alice)).toMatchObject({ available: 1_000n });
    expect(await balances(kernel, bob)).toMatchObject({ available: 500n });
    await kernel.close();
  });

  it('lets a treasury go below zero down to its limit, and not further', async () => {
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 0n }) });
    await kernel.submit(submission(operator, issuanceGrant('did:ledger:acct:treasury-USD')));
    await kernel.idle();
    const limit = defaultGenesis().accounts[0]!.treasuryLimits.USD!;
    const ok = await kernel.submit(submission(operator, transfer('did:ledger:acct:treasury-USD', alice, limit)));
    const over = await kernel.submit(submission(operator, transfer('did:ledger:acct:treasury-USD', alice, 1n)));
    await kernel.idle();
    expect((await kernel.operation(ok.operation.ref))?.state).toBe('Completed');
    expect((await kernel.operation(over.operation.ref))?.error?.error).toBe('ERR-InsufficientAvailable');
    expect((await balances(kernel, 'did:ledger:acct:treasury-USD')).available).toBe(-limit);
    await kernel.close();
  });

  it('refuses at submission what could never be allowed, storing nothing', async () => {
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }) });
    expect(await submittedWith(kernel.submit(submission(aliceActor, transfer(alice, alice, 1n))))).toBe('ERR-UnsupportedLeg');
    expect(await submittedWith(kernel.submit(submission(aliceActor, transfer(alice, bob, 1n, Number.MAX_SAFE_INTEGER, 'GBP'))))).toBe('ERR-UnknownAsset');
    expect(await submittedWith(kernel.submit(submission(bobActor, transfer(alice, bob, 1n))))).toBe('ERR-NotAuthorised');
    expect(await submittedWith(kernel.submit(submission(bobActor, transfer('did:ledger:acct:nobody', bob, 1n))))).toBe('ERR-NotAuthorised');
    expect(await submittedWith(kernel.submit(submission(operator, transfer('did:ledger:acct:nobody', bob, 1n))))).toBe('ERR-UnknownAccount');
    const legs = Array.from({ length: 65 }, () => ({ from: acct(alice), to: acct(bob), asset: sym('USD'), amountMinor: 1n }));
    expect(await submittedWith(kernel.submit(submission(aliceActor, { type: 'transfer', legs, deadlineMs: Number.MAX_SAFE_INTEGER })))).toBe('ERR-BatchTooLarge');
    expect(kernel.currentHead.decidedCseq).toBe(0);
    await kernel.close();
  });

  it('expires a transfer not decided by its deadline, moving nothing', async () => {
    const { kernel, clock } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }) });
    const ack = await kernel.submit(submission(aliceActor, transfer(alice, bob, 1n, clock.nowMs - 1)));
    await kernel.idle();
    const op = await kernel.operation(ack.operation.ref);
    expect(op?.state).toBe('Expired');
    expect(op?.error).toBeNull();
    expect((await balances(kernel, bob)).available).toBe(0n);
    await kernel.close();
  });
});

describe('client keys', () => {
  it('returns the decided reply to a repeat, and refuses the key with another request', async () => {
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }) });
    const first = await kernel.submit(submission(aliceActor, transfer(alice, bob, 10n), { clientKey: 'pay-1' }));
    await kernel.idle();
    const again = await kernel.submit(submission(aliceActor, transfer(alice, bob, 10n), { clientKey: 'pay-1' }));
    expect(again.repeat).toBe(true);
    expect(again.operation.ref).toBe(first.operation.ref);
    expect(again.operation.state).toBe('Completed');
    expect(await submittedWith(kernel.submit(submission(aliceActor, transfer(alice, bob, 11n), { clientKey: 'pay-1' })))).toBe('ERR-ClientKeyReused');
    expect((await balances(kernel, bob)).available).toBe(10n);
    await kernel.close();
  });

  it('gives concurrent repeats of an in-flight key one effect', async () => {
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }) });
    const acks = await Promise.all(Array.from({ length: 20 }, () => kernel.submit(submission(aliceActor, transfer(alice, bob, 10n), { clientKey: 'same' }))));
    expect(new Set(acks.map((a) => a.operation.ref)).size).toBe(1);
    await kernel.idle();
    expect((await balances(kernel, bob)).available).toBe(10n);
    await kernel.close();
  });

  it('keeps each principal in its own key space', async () => {
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 1_000n }) });
    const a = await kernel.submit(submission(aliceActor, transfer(alice, bob, 1n), { clientKey: 'k' }));
    const b = await kernel.submit(submission(bobActor, transfer(bob, alice, 2n), { clientKey: 'k' }));
    expect(a.operation.ref).not.toBe(b.operation.ref);
    await kernel.close();
  });
});

describe('reservations', () => {
  const reserve = (amountMinor: bigint, deadlineMs = Number.MAX_SAFE_INTEGER) => ({ type: 'reserve' as const, payer: acct(alice), asset: sym('USD'), amountMinor, deadlineMs });

  it('holds value, then captures part of it and releases the rest', async () => {
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }) });
    const r = await kernel.submit(submission(aliceActor, reserve(600n)));
    await kernel.idle();
    expect((await kernel.operation(r.operation.ref))?.state).toBe('Reserved');
    expect(await balances(kernel, alice)).toMatchObject({ available: 400n, reserved: 600n });
    const c = await kernel.submit(submission(aliceActor, { type: 'capture', reservation: r.operation.ref, to: acct(bob), amountMinor: 250n }));
    await kernel.idle();
    expect((await kernel.operation(c.operation.ref))?.state).toBe('Completed');
    expect((await kernel.operation(r.operation.ref))?.state).toBe('Captured');
    expect(await balances(kernel, alice)).toMatchObject({ available: 750n, reserved: 0n });
    expect(await balances(kernel, bob)).toMatchObject({ available: 250n });
    expect(await submittedWith(kernel.submit(submission(aliceActor, { type: 'release', reservation: r.operation.ref })))).toBe('ERR-OperationTerminal');
    await kernel.close();
  });

  it('rejects a reservation beyond available, and releases on request', async () => {
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }) });
    const big = await kernel.submit(submission(aliceActor, reserve(1_001n)));
    const ok = await kernel.submit(submission(aliceActor, reserve(1_000n)));
    await kernel.idle();
    expect((await kernel.operation(big.operation.ref))?.error?.error).toBe('ERR-InsufficientAvailable');
    await kernel.submit(submission(aliceActor, { type: 'release', reservation: ok.operation.ref }));
    await kernel.idle();
    expect((await kernel.operation(ok.operation.ref))?.state).toBe('Released');
    expect(await balances(kernel, alice)).toMatchObject({ available: 1_000n, reserved: 0n });
    await kernel.close();
  });

  it('expires an uncaptured hold at its deadline and returns it to available', async () => {
    const { kernel, clock } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }) });
    const r = await kernel.submit(submission(aliceActor, reserve(300n, clock.nowMs + 60_000)));
    await kernel.idle();
    clock.advance(60_001);
    await kernel.poke();
    const op = await kernel.operation(r.operation.ref);
    expect(op?.state).toBe('Expired');
    expect(op?.result?.postings).toHaveLength(4);
    expect(await balances(kernel, alice)).toMatchObject({ available: 1_000n, reserved: 0n });
    const events = await kernel.eventsAfter(0, 10);
    expect(events.map((e) => e.operation.state)).toEqual(['Reserved', 'Expired']);
    await kernel.close();
  });

  it('pages stored events from any position, within a chunk and across chunks', async () => {
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }) });
    // One round decides these together (one chunk), then one more round (another chunk).
    await Promise.all(Array.from({ length: 7 }, () => kernel.submit(submission(aliceActor, transfer(alice, bob, 1n)))));
    await kernel.idle();
    await kernel.submit(submission(aliceActor, transfer(alice, bob, 1n)));
    await kernel.idle();
    const all = await kernel.eventsAfter(0, 100);
    expect(all.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const [after, limit] of [[0, 3], [3, 3], [2, 1], [6, 5], [7, 2], [8, 2]] as const) {
      const page = await kernel.eventsAfter(after, limit);
      expect(page.map((e) => e.seq)).toEqual(all.filter((e) => e.seq > after).slice(0, limit).map((e) => e.seq));
      expect(page.map((e) => e.operation.ref)).toEqual(all.filter((e) => e.seq > after).slice(0, limit).map((e) => e.operation.ref));
    }
    await kernel.close();
  });
});

describe('accounts and queries', () => {
  it('opens an account and finds the treasuries by alias', async () => {
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 0n }) });
    const ack = await kernel.submit(submission(aliceActor, { type: 'open_account', owner: 'did:ledger:id:alice' as never, kind: 'customer', custody: 'delegated', treasuryLimits: {} }));
    await kernel.idle();
    const op = await kernel.operation(ack.operation.ref);
    expect(op?.state).toBe('Completed');
    const view = await kernel.openView();
    const account = await view.account(op!.result!.account!);
    expect(account).toMatchObject({ owner: 'did:ledger:id:alice', kind: 'customer', status: 'active' });
    expect(await view.alias(operator, 'ledger', 'treasury:USD')).toBe('did:ledger:acct:treasury-USD');
    await expect(view.alias(operator, 'legacy', 'gone-1')).rejects.toMatchObject({ refusal: { error: 'ERR-IdentifierArchived' } });
    await expect(view.alias(aliceActor, 'ledger', 'treasury:USD')).rejects.toMatchObject({ refusal: { error: 'ERR-UnknownAccount' } });
    expect((await view.trialBalance(null)).accounts).toBe(6); // four treasuries, alice, and the new one
    await view.close();
    await kernel.close();
  });

  it('reads statements with openings, closings and as_of views, and pages movements by cursor', async () => {
    const { kernel, clock } = await openBook({ genesis: customersGenesis({ alice: 10_000n, bob: 0n }) });
    const t0 = clock.nowMs;
    for (let i = 1; i <= 5; i++) {
      clock.advance(1_000);
      await kernel.submit(submission(aliceActor, transfer(alice, bob, BigInt(i * 100))));
      await kernel.idle();
    }
    const view = await kernel.openView();
    const all = await view.statement(bobActor, { account: acct(bob), asset: sym('USD'), fromMs: t0, toMs: clock.nowMs + 1, asOf: null });
    expect(all.movements.map((m) => m.amountMinor)).toEqual([100n, 200n, 300n, 400n, 500n]);
    expect(all.opening.available).toBe(0n);
    expect(all.closing.available).toBe(1_500n);
    expect(all.closed).toBe(false);
    const middle = await view.statement(bobActor, { account: acct(bob), asset: sym('USD'), fromMs: t0 + 2_000, toMs: t0 + 4_000, asOf: null });
    expect(middle.opening.available).toBe(100n);
    expect(middle.movements.map((m) => m.amountMinor)).toEqual([200n, 300n]);
    expect(middle.closing.available).toBe(600n);
    expect(middle.closed).toBe(true);
    const earlier = await view.statement(bobActor, { account: acct(bob), asset: sym('USD'), fromMs: t0, toMs: clock.nowMs + 1, asOf: view.view - 4 });
    expect(earlier.closing.available).toBe(600n);
    await expect(view.statement(bobActor, { account: acct(bob), asset: sym('USD'), fromMs: t0, toMs: t0 + 1, asOf: view.view + 1 })).rejects.toMatchObject({ refusal: { error: 'ERR-QueryUnbounded' } });
    await expect(view.statement(bobActor, { account: acct(alice), asset: sym('USD'), fromMs: t0, toMs: t0 + 1, asOf: null })).rejects.toMatchObject({ refusal: { error: 'ERR-NotAuthorised' } });

    const q = { account: null, identity: 'did:ledger:id:alice' as never, limit: 2, fromMs: null, toMs: null, asset: null, direction: 'debit' as const, cursor: null as string | null };
    const seen: bigint[] = [];
    let pages = 0;
    for (;;) {
      const page = await view.movements(aliceActor, q);
      pages++;
      seen.push(...page.movements.map((m) => m.amountMinor));
      if (page.next === null) break;
      q.cursor = page.next;
    }
    expect(seen).toEqual([100n, 200n, 300n, 400n, 500n]);
    expect(pages).toBe(3);
    await expect(view.movements(aliceActor, { ...q, direction: 'credit', cursor: q.cursor })).rejects.toMatchObject({ refusal: { error: 'ERR-MalformedCommand' } });
    await view.close();
    await kernel.close();
  });
});
