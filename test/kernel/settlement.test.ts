/**
 * Settlement decisions in the kernel (docs/settlement.md), with the layer's facts
 * written by hand: what a final block credits or moves once, what a block not yet
 * final only records, and a layer record that disagrees with the book's instruction.
 */
import { describe, expect, it } from 'vitest';
import type { Command, SettleBlock } from '../../src/model/model.js';
import { pendingWithdrawalsPerAccountMax } from '../../src/constants.js';
import { depositRefOf, settlementAccountId } from '../../src/settlement/book.js';
import { acct, actorOf, available, customersGenesis, openBook, operator, submission, sym } from '../support/book.js';

const location = '11'.repeat(32);
const alice = 'did:ledger:acct:alice';
const block = (height: number, facts: Partial<SettleBlock>): SettleBlock => ({ height, deposits: [], instructions: [], expired: [], attestations: [], ...facts });
const settle = (finalHeight: number, blocks: SettleBlock[], due: string[] = []): Command => ({ type: 'settle', finalHeight, headHeight: Math.max(finalHeight, ...blocks.map((b) => b.height)), blocks, due });
const deposit = (seq: number, amountMinor: bigint, height: number) => ({ seq, digest: String(seq).padStart(64, '0'), location, amountMinor, accountRef: depositRefOf(acct(alice)), height });

async function bookWithBoundUsd() {
  const book = await openBook({ genesis: customersGenesis({ alice: 1_000n }) });
  const run = async (actor: typeof operator, command: Command) => {
    const ack = await book.kernel.submit(submission(actor, command));
    await book.kernel.idle();
    return (await book.kernel.operation(ack.operation.ref))!;
  };
  await run(operator, { type: 'bind_asset', asset: sym('USD'), location });
  await run(operator, settle(1, [block(1, { attestations: [{ location, symbol: 'USD', decimals: 2, status: 'active' }] })]));
  const balance = async (account: string) => {
    const view = await book.kernel.openView();
    try {
      return await view.balance(acct(account), sym('USD'));
    } finally {
      await view.close();
    }
  };
  return { ...book, run, balance };
}

describe('settle and observe', () => {
  it('records a deposit in a block not yet final, credits it once final, and never twice', async () => {
    const { kernel, run, balance } = await bookWithBoundUsd();
    expect(kernel.assetList.find((a) => a.id === 'USD')).toMatchObject({ binding: 'bound', location });
    const seen = await run(operator, settle(1, [block(2, { deposits: [deposit(1, 500n, 2)] })]));
    expect(seen.state).toBe('Completed');
    expect((await balance(alice)).available).toBe(1_000n);
    const final = await run(operator, settle(2, [block(2, { deposits: [deposit(1, 500n, 2)] })]));
    expect(final.result?.postings).toHaveLength(2);
    expect((await balance(alice)).available).toBe(1_500n);
    expect((await balance(settlementAccountId)).available).toBe(-500n);
    // The same final block again, and an observation of it: nothing more.
    await run(operator, settle(2, [block(2, { deposits: [deposit(1, 500n, 2)] })]));
    const again = await run(operator, { type: 'observe', deposit: deposit(1, 500n, 2), final: true });
    expect(again.error?.error).toBe('ERR-ObservationDuplicate');
    const other = await run(operator, { type: 'observe', deposit: { ...deposit(1, 500n, 2), digest: 'ff'.repeat(32) }, final: true });
    expect(other.error?.error).toBe('ERR-EvidenceInsufficient');
    expect((await balance(alice)).available).toBe(1_500n);
    await kernel.close();
  });

  it('applies an observed deposit once final; recorded before', async () => {
    const { kernel, run, balance } = await bookWithBoundUsd();
    const recorded = await run(operator, { type: 'observe', deposit: deposit(4, 40n, 9), final: false });
    expect(recorded.result?.settlement).toMatchObject({ verdict: 'recorded', coordinate: { seq: 4 } });
    expect((await run(operator, { type: 'observe', deposit: deposit(4, 40n, 9), final: false })).error?.error).toBe('ERR-ObservationDuplicate');
    const applied = await run(operator, { type: 'observe', deposit: deposit(4, 40n, 9), final: true });
    expect(applied.result?.settlement).toMatchObject({ verdict: 'applied' });
    expect((await balance(alice)).available).toBe(1_040n);
    const stray = await run(operator, { type: 'observe', deposit: { ...deposit(5, 1n, 9), accountRef: '00'.repeat(32) }, final: true });
    expect(stray.error?.error).toBe('ERR-ObservationUnassociated');
    // Only the operator observes.
    await expect(run(actorOf('did:ledger:id:alice'), { type: 'observe', deposit: deposit(6, 1n, 9), final: true })).rejects.toMatchObject({ refusal: { error: 'ERR-NotAuthorised' } });
    await kernel.close();
  });

  it('moves nothing on an instruction record that disagrees with the book (ERR-AmountMismatch), completes the one that agrees', async () => {
    const { kernel, run, balance } = await bookWithBoundUsd();
    await run(operator, settle(2, [block(2, { deposits: [deposit(1, 500n, 2)] })]));
    const w = await run(actorOf('did:ledger:id:alice'), { type: 'withdraw', account: acct(alice), asset: sym('USD'), amountMinor: 100n, destination: { account: 'cd'.repeat(32) }, deadlineMs: Number.MAX_SAFE_INTEGER });
    expect(w.state).toBe('Instructed');
    const digest = (w.result?.settlement?.instruction as { digest: string }).digest;
    const wrong = await run(operator, settle(3, [block(3, { instructions: [{ digest, location, amountMinor: 99n }] })]));
    expect(wrong.result?.settlement).toMatchObject({ moved: [], condition: 'ERR-AmountMismatch' });
    expect((await kernel.operation(w.ref))?.state).toBe('Instructed');
    expect(await balance(alice)).toMatchObject({ available: 1_400n, encumbered: 100n });
    const right = await run(operator, settle(4, [block(4, { instructions: [{ digest, location, amountMinor: 100n }] })]));
    expect(right.result?.settlement).toEqual({ moved: [{ operation_reference: w.ref, state: 'Completed' }] });
    expect(await balance(alice)).toMatchObject({ available: 1_400n, encumbered: 0n });
    expect((await balance(settlementAccountId)).available).toBe(-400n);
    // An expiry listed for a completed withdrawal changes nothing.
    await run(operator, settle(5, [block(5, { expired: [digest] })]));
    expect((await kernel.operation(w.ref))?.state).toBe('Completed');
    await kernel.close();
  });

  it('expires a withdrawal no final block carried once its expiry height is final (a handover lost), and completes one carried in the same intake', async () => {
    const { kernel, run, balance } = await bookWithBoundUsd();
    await run(operator, settle(2, [block(2, { deposits: [deposit(1, 500n, 2)] })]));
    const withdraw = (amountMinor: bigint) => run(actorOf('did:ledger:id:alice'), { type: 'withdraw', account: acct(alice), asset: sym('USD'), amountMinor, destination: { account: 'cd'.repeat(32) }, deadlineMs: Number.MAX_SAFE_INTEGER });
    const lost = await withdraw(30n);
    const carried = await withdraw(20n);
    const digest = (carried.result?.settlement?.instruction as { digest: string }).digest;
    // Both are due (expiry 0 here); the one a final block carries completes instead.
    const intake = await run(operator, settle(3, [block(3, { instructions: [{ digest, location, amountMinor: 20n }] })], [lost.ref, carried.ref]));
    expect(intake.result?.settlement).toEqual({ moved: [{ operation_reference: carried.ref, state: 'Completed' }, { operation_reference: lost.ref, state: 'Expired' }] });
    expect(await balance(alice)).toMatchObject({ available: 1_480n, encumbered: 0n });
    // Named due again: nothing more.
    const again = await run(operator, settle(4, [], [lost.ref, carried.ref]));
    expect(again.result?.settlement).toEqual({ moved: [] });
    await kernel.close();
  });

  it('bounds the withdrawals one account has pending, and frees a place when one expires', async () => {
    const { kernel, run } = await bookWithBoundUsd();
    const withdraw = () => kernel.submit(submission(actorOf('did:ledger:id:alice'), { type: 'withdraw', account: acct(alice), asset: sym('USD'), amountMinor: 1n, destination: { account: 'cd'.repeat(32) }, deadlineMs: Number.MAX_SAFE_INTEGER }));
    const acks = await Promise.all(Array.from({ length: pendingWithdrawalsPerAccountMax + 1 }, withdraw));
    await kernel.idle();
    const states = await Promise.all(acks.map(async (a) => (await kernel.operation(a.operation.ref))!));
    expect(states.filter((op) => op.state === 'Instructed')).toHaveLength(pendingWithdrawalsPerAccountMax);
    expect(states.filter((op) => op.error?.error === 'ERR-BoundExceeded')).toHaveLength(1);
    await run(operator, settle(1, [], [states[0]!.ref]));
    expect((await kernel.operation(states[0]!.ref))?.state).toBe('Expired');
    const after = await withdraw();
    await kernel.idle();
    expect((await kernel.operation(after.operation.ref))?.state).toBe('Instructed');
    await kernel.close();
  });

  it('credits a deposit in the final block whose attestation binds its asset', async () => {
    const book = await openBook({ genesis: customersGenesis({ alice: 0n }) });
    const ack = await book.kernel.submit(submission(operator, { type: 'bind_asset', asset: sym('USD'), location }));
    await book.kernel.idle();
    expect((await book.kernel.operation(ack.operation.ref))?.state).toBe('Completed');
    const intake = await book.kernel.submit(submission(operator, settle(1, [block(1, { attestations: [{ location, symbol: 'USD', decimals: 2, status: 'active' }], deposits: [deposit(1, 70n, 1)] })])));
    await book.kernel.idle();
    expect((await book.kernel.operation(intake.operation.ref))?.result?.postings).toHaveLength(2);
    expect(await available(book.kernel, alice)).toBe(70n);
    await book.kernel.close();
  });
});
