/**
 * The read slots' shares (daemon/snapshot-slots.ts): the daemon's own reads (settlement
 * intake, automatic checkpoints) run in the operator's reserved share under a key of
 * their own, so neither principals filling their slots nor the operator's full queue
 * keeps them waiting, and they take no slot the principals share.
 */
import { describe, expect, it } from 'vitest';
import type { Kernel } from '../../src/book/kernel.js';
import { SnapshotSlots } from '../../daemon/snapshot-slots.js';

const kernel = { principals: { operator: 'did:ledger:id:operator' } } as unknown as Kernel;
const bounds = { slotsMax: 4, perPrincipalMax: 1, operatorReserved: 2, queuePerPrincipalMax: 1, queueWaitMs: 60_000 };

describe('read slots', () => {
  it("serve the daemon's own reads at once while principals and the operator hold and queue all they may", async () => {
    const slots = new SnapshotSlots(kernel, bounds);
    const operator = slots.principal('did:ledger:id:operator');
    // Two principals hold the principals' two slots; the operator holds its one and queues one more.
    const held = [await slots.acquire(slots.principal('did:ledger:id:a')), await slots.acquire(slots.principal('did:ledger:id:b')), await slots.acquire(operator)];
    const operatorWaiting = slots.acquire(operator);
    await expect(slots.hold(operator, async () => 0)).rejects.toMatchObject({ refusal: { error: 'ERR-DecisionUnavailable' } });
    let thirdServed = false;
    const third = slots.acquire(slots.principal('did:ledger:id:c')).then((h) => ((thirdServed = true), h));

    const gate = slots.gate(slots.internal);
    let waited = -1;
    expect(await slots.hold(slots.internal, async () => 'read', (ms) => (waited = ms))).toBe('read');
    expect(waited).toBe(-1);
    expect(await gate(async () => 42)).toBe(42);
    // The internal reads took nothing from the principals: the third one still waits for theirs.
    await new Promise((r) => setImmediate(r));
    expect(thirdServed).toBe(false);
    expect(slots.queuedCount).toBe(2);

    held[0]!.release();
    (await third).release();
    held[2]!.release();
    (await operatorWaiting).release();
    held[1]!.release();
  });
});
