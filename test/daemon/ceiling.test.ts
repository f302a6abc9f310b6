/**
 * Balances have a ceiling (CONTRACT 3, issue 20 item 13): no balance and no per-asset
 * total passes 2^128 - 1. A deposit that would is held (`recorded`), not credited, and an
 * observation of it is refused; a transfer or capture that would is decided Rejected with
 * ERR-PrecisionExceeded; nothing moves either way.
 */
import { describe, expect, it } from 'vitest';
import { type Client, decided, until, useDaemon } from './support.js';

const max = (1n << 128n) - 1n;
const location = 'ab'.repeat(32);
const shared = useDaemon({ alice: 1000n, bob: 0n }, { settlement: { blockIntervalMs: 0, finalityDepth: 1 } });

let keyCounter = 0;
const key = () => ({ 'client-key': `ceiling-${++keyCounter}` });
const blocks = (op: Client, count: number) => op.post('/v1/ops/layer/blocks', { count });
const balance = async (name: string) =>
  ((await shared.as('operator').get(`/v1/accounts/did:ledger:acct:${name}/balances`)).body.balances as { asset: string; available: string; reserved: string }[]).find((b) => b.asset === 'USD');
const outcome = async (who: Client, reply: Promise<{ body: any }>) => (await decided(who, (await reply).body.operation_reference)).body;

describe('the amount ceiling', () => {
  it('holds a deposit that would pass it, refuses transfers and captures that would, and moves nothing', async () => {
    const operator = shared.as('operator');
    const alice = shared.as('alice');
    expect((await outcome(operator, operator.post('/v1/ops/assets/USD/binding', { location }, undefined, key()))).state).toBe('Completed');
    for (let i = 0; i < 20 && (await operator.get('/v1/assets')).body.find((a: { id: string }) => a.id === 'USD').binding !== 'bound'; i++) {
      await blocks(operator, 1);
      await new Promise((r) => setTimeout(r, 30));
    }
    const bobRef = (await operator.get('/v1/accounts/did:ledger:acct:bob')).body.deposit_ref as string;
    // Bob is brought to 500 below the ceiling by one deposit.
    await operator.post('/v1/ops/layer/deposits', { asset: 'USD', amount: (max - 500n).toString(), account_ref: bobRef });
    await blocks(operator, 2);
    await until(() => balance('bob'), (b) => b?.available === (max - 500n).toString());
    // A second deposit of 1000 would take bob (and what the book records on the layer) past it: held, not credited.
    const over = (await operator.post('/v1/ops/layer/deposits', { asset: 'USD', amount: '1000', account_ref: bobRef })).body.result.settlement.coordinate;
    await blocks(operator, 3);
    await new Promise((r) => setTimeout(r, 200));
    expect((await balance('bob'))!.available).toBe((max - 500n).toString());
    const observed = await outcome(operator, operator.post('/v1/ops/settlement/observations', { coordinate: over }, undefined, key()));
    expect(observed).toMatchObject({ state: 'Rejected', error: { error: 'ERR-PrecisionExceeded' } });
    // A transfer of 1000 into bob would pass it: Rejected, nothing moves; 500 reaches it exactly.
    const leg = (amount: string) => ({ legs: [{ amount, asset: 'USD', from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob' }] });
    expect(await outcome(alice, alice.post('/v1/transfers', leg('1000'), undefined, key()))).toMatchObject({ state: 'Rejected', error: { error: 'ERR-PrecisionExceeded' } });
    expect((await balance('alice'))!.available).toBe('1000');
    expect((await balance('bob'))!.available).toBe((max - 500n).toString());
    expect(await outcome(alice, alice.post('/v1/transfers', leg('500'), undefined, key()))).toMatchObject({ state: 'Completed' });
    expect((await balance('bob'))!.available).toBe(max.toString());
    // A reservation of alice's is fine; capturing any of it into bob is not.
    const reservation = await alice.post('/v1/reservations', { amount: '500', asset: 'USD', payer: 'did:ledger:acct:alice' }, undefined, key());
    expect((await decided(alice, reservation.body.operation_reference)).body.state).toBe('Reserved');
    const capture = await outcome(alice, alice.post(`/v1/reservations/${reservation.body.operation_reference}/capture`, { to: 'did:ledger:acct:bob', amount: '1' }, undefined, key()));
    expect(capture).toMatchObject({ state: 'Rejected', error: { error: 'ERR-PrecisionExceeded' } });
    expect(await balance('alice')).toMatchObject({ available: '0', reserved: '500' });
    expect((await balance('bob'))!.available).toBe(max.toString());
    // The book still balances and answers its reads.
    const trial = await operator.get('/v1/trial-balance?asset=USD');
    expect(trial.status).toBe(200);
    expect(trial.body.unbalanced).toEqual([]);
  });
});
