/**
 * What a settlement comparison is the record of (spec 2.2 `anchors`): the checkpoints
 * anchored and final at the height it compares, the embedded layer driven block by block.
 */
import { describe, expect, it } from 'vitest';
import { type Client, decided, until, useDaemon } from './support.js';

const location = 'ab'.repeat(32);
const key = () => ({ 'client-key': `k-${Math.random().toString(36).slice(2)}` });

const blocks = (op: Client, count: number) => op.post('/v1/ops/layer/blocks', { count });
const checkpointStatus = async (op: Client, number: number) => (await op.get(`/v1/checkpoints/${number}`)).body.status as string;
/** Takes the layer in up to its final head, then compares. */
async function compared(op: Client): Promise<{ anchors: number[]; height: number }> {
  const sync = await op.post('/v1/ops/settlement/sync', {}, undefined, key());
  expect((await decided(op, sync.body.operation_reference)).body.state).toBe('Completed');
  return (await op.post('/v1/ops/settlement/comparisons', {}, undefined, key())).body.result.settlement.comparison;
}

describe('settlement comparison anchors', () => {
  const shared = useDaemon({ alice: 100n }, { settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0, finalityDepth: 2 } });

  it('names the checkpoints anchored in the newest anchoring block final at the compared height', async () => {
    const operator = shared.as('operator');
    const bind = await operator.post('/v1/ops/assets/USD/binding', { location }, undefined, key());
    expect((await decided(operator, bind.body.operation_reference)).body.state).toBe('Completed');
    expect((await compared(operator)).anchors).toEqual([]);

    // Two checkpoints before a block: one block carries both anchors.
    const take = async () => (await operator.post('/v1/ops/checkpoints', {}, undefined, key())).body.result.anchoring;
    expect((await take()).checkpoint.number).toBe(1);
    expect((await take()).checkpoint.number).toBe(2);
    await blocks(operator, 1);
    await until(() => checkpointStatus(operator, 2), (s) => s === 'submitted');
    // In a block, not final: not yet anything a comparison is the record of.
    expect((await compared(operator)).anchors).toEqual([]);
    await blocks(operator, 2);
    await until(() => checkpointStatus(operator, 2), (s) => s === 'final');
    expect((await compared(operator)).anchors).toEqual([1, 2]);

    // A third, in its own block: named once final, and the checkpoint command's own comparison names the two before until then.
    const third = await take();
    expect(third.checkpoint.number).toBe(3);
    expect(third.comparison.anchors).toEqual([1, 2]);
    await blocks(operator, 1);
    await until(() => checkpointStatus(operator, 3), (s) => s === 'submitted');
    expect((await compared(operator)).anchors).toEqual([1, 2]);
    await blocks(operator, 2);
    await until(() => checkpointStatus(operator, 3), (s) => s === 'final');
    const last = await compared(operator);
    expect(last.anchors).toEqual([3]);
    expect((await take()).comparison.anchors).toEqual([3]);
  });
});
