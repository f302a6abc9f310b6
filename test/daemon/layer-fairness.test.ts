/**
 * One customer cannot block the settlement layer's queue (issue 20 item 3): while one
 * customer floods it with more withdrawals than a block carries, none of which the layer
 * can pay yet, another customer's deposit and the operator's checkpoint still go final
 * within a few blocks. Withdrawals waiting for funds take no place in a block, and the
 * places are shared per source.
 */
import { describe, expect, it } from 'vitest';
import { layerBlockItemsMax, pendingWithdrawalsPerAccountMax } from '../../src/constants.js';
import { type Client, decided, useDaemon } from './support.js';

const location = 'ab'.repeat(32);
const finalityDepth = 1;
const shared = useDaemon({ mallory: 1_000_000n, bob: 0n }, { settlement: { blockIntervalMs: 0, finalityDepth, instructionExpiryBlocks: 10_000 } });

let keyCounter = 0;
const key = () => ({ 'client-key': `fair-${++keyCounter}` });
const blocks = (op: Client, count: number) => op.post('/v1/ops/layer/blocks', { count });

/** Runs `tasks` with at most `width` at a time. */
async function inParallel(tasks: (() => Promise<unknown>)[], width: number): Promise<void> {
  const queue = [...tasks];
  await Promise.all(Array.from({ length: width }, async () => {
    for (let task = queue.shift(); task !== undefined; task = queue.shift()) await task();
  }));
}

describe('the settlement layer under one customer flooding it', () => {
  it("carries another customer's deposit and the operator's checkpoint within a few blocks", async () => {
    const operator = shared.as('operator');
    const mallory = shared.as('mallory');
    expect((await decided(operator, (await operator.post('/v1/ops/assets/USD/binding', { location }, undefined, key())).body.operation_reference)).body.state).toBe('Completed');
    for (let i = 0; i < 20 && (await operator.get('/v1/assets')).body.find((a: { id: string }) => a.id === 'USD').binding !== 'bound'; i++) {
      await blocks(operator, 1);
      await new Promise((r) => setTimeout(r, 30));
    }
    // More withdrawals than one block carries, across as many accounts as the per-account bound asks; the layer holds nothing to pay them.
    const accountsNeeded = Math.ceil((layerBlockItemsMax + 100) / pendingWithdrawalsPerAccountMax);
    const accounts: string[] = [];
    for (let i = 0; i < accountsNeeded; i++) {
      const opened = await decided(mallory, (await mallory.post('/v1/accounts', { custody: 'delegated', kind: 'customer', owner: 'did:ledger:id:mallory' }, undefined, key())).body.operation_reference);
      accounts.push(opened.body.result.account);
    }
    const legs = accounts.map((to) => ({ amount: '1000', asset: 'USD', from: 'did:ledger:acct:mallory', to }));
    expect((await decided(mallory, (await mallory.post('/v1/transfers', { legs }, undefined, key())).body.operation_reference)).body.state).toBe('Completed');
    const refs: string[] = [];
    await inParallel(
      accounts.flatMap((account) =>
        Array.from({ length: pendingWithdrawalsPerAccountMax }, () => async () => {
          const r = await mallory.post('/v1/withdrawals', { account, amount: '1', asset: 'USD', destination: { account: 'cd'.repeat(32) } }, undefined, key());
          expect(r.status).toBe(202);
          refs.push(r.body.operation_reference);
        }),
      ),
      16,
    );
    expect((await decided(mallory, refs[refs.length - 1]!)).body.state).toBe('Instructed');
    // Every instruction reaches the layer just after its decision.
    await new Promise((r) => setTimeout(r, 500));
    await blocks(operator, 2);

    // Now the victims: a deposit for bob and a checkpoint of the operator's.
    const bobRef = (await operator.get('/v1/accounts/did:ledger:acct:bob')).body.deposit_ref as string;
    await operator.post('/v1/ops/layer/deposits', { asset: 'USD', amount: '5', account_ref: bobRef });
    const checkpoint = (await operator.post('/v1/ops/checkpoints', {}, undefined, key())).body.result.anchoring.checkpoint.number as number;
    const bobHas = async () => ((await operator.get('/v1/accounts/did:ledger:acct:bob/balances')).body.balances as { asset: string; available: string }[]).find((b) => b.asset === 'USD')?.available;
    const final = async () => (await bobHas()) === '5' && (await operator.get(`/v1/checkpoints/${checkpoint}`)).body.status === 'final';
    let made = 0;
    while (!(await final())) {
      expect(made, 'final within a few blocks').toBeLessThan(finalityDepth + 4);
      await blocks(operator, 1);
      made++;
      await new Promise((r) => setTimeout(r, 100));
    }
    // Most of the flood still waits for funds (bob's deposit paid a few of them): none was dropped.
    const states = await Promise.all(refs.slice(0, 50).map(async (ref) => (await operator.get(`/v1/operations/${ref}`)).body.state as string));
    expect(states.filter((s) => s === 'Instructed').length).toBeGreaterThan(40);
  }, 120_000);
});
