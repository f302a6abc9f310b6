/**
 * The embedded settlement layer (CONTRACT 7 and 9) through its adapter surface and
 * controls: heights, finality, what blocks carry, a stopped layer, determinism and
 * resumption from the store.
 */
import { describe, expect, it } from 'vitest';
import { EmbeddedLayer, blockDigest, genesisDigest } from '../../src/settlement/embedded.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { Instruction } from '../../src/settlement/adapter.js';

const open = (store = new MemoryStore(), finalityDepth = 2) => EmbeddedLayer.open({ store, instance: 1, finalityDepth, sync: false });
const hex = (n: number) => n.toString(16).padStart(64, '0');
const instruction = (n: number, amountMinor: bigint, expiryHeight: number): Instruction => ({
  digest: hex(1000 + n), location: hex(7), amountMinor, destination: { account: hex(9) }, expiryHeight,
});

describe('the embedded settlement layer', () => {
  it('starts at genesis, makes blocks from height 1, and finalises at finalityDepth', async () => {
    const layer = await open();
    expect(await layer.head()).toEqual({ height: 0, finalHeight: 0 });
    const made = await layer.produceBlocks(3, 1_000);
    expect(made.map((b) => b.height)).toEqual([1, 2, 3]);
    expect(made[0]!.previous).toBe(genesisDigest);
    expect(made[1]!.previous).toBe(made[0]!.digest);
    expect(await layer.head()).toEqual({ height: 3, finalHeight: 1 });
    expect((await layer.blocks(1, 3)).map((b) => b.digest)).toEqual(made.map((b) => b.digest));
  });

  it('carries a submitted anchor in the next block, once, however often it is submitted', async () => {
    const layer = await open();
    await layer.produceBlocks(1, 1);
    const anchor = { number: 1, commitment: hex(42) };
    await layer.submitAnchor(anchor);
    await layer.submitAnchor(anchor);
    expect(await layer.anchorHeight(1)).toBeNull();
    expect(await layer.anchorHeight(2)).toBeUndefined();
    const [block] = await layer.produceBlocks(1, 2);
    expect(block!.anchors).toEqual([anchor]);
    expect(await layer.anchorHeight(1)).toBe(2);
    const [next] = await layer.produceBlocks(1, 3);
    expect(next!.anchors).toEqual([]);
  });

  it('advances a stopped layer on request with empty blocks, and carries what waited once it serves again', async () => {
    const layer = await open();
    await layer.submitAnchor({ number: 1, commitment: hex(1) });
    await layer.setServing(false, 5);
    const stopped = await layer.produceBlocks(2, 6);
    expect(stopped.map((b) => [b.serving, b.anchors.length])).toEqual([[false, 0], [false, 0]]);
    expect((await layer.status(10)).serving).toBe(false);
    await layer.setServing(true, 7);
    const [resumed] = await layer.produceBlocks(1, 8);
    expect(resumed!.height).toBe(3);
    expect(resumed!.anchors.map((a) => a.number)).toEqual([1]);
  });

  it('places deposits in the inbox with coordinates, holds them once in a block, pays instructions out of them and expires late ones', async () => {
    const layer = await open();
    const deposit = await layer.placeDeposit({ location: hex(7), amountMinor: 500n, accountRef: hex(3) });
    expect(deposit.coordinate).toMatchObject({ instance: 1, seq: 1 });
    expect(deposit.coordinate.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(deposit.height).toBeNull();
    // More than is held waits; within what is held takes effect; past its expiry it is dropped.
    await layer.submitInstruction(instruction(1, 300n, 10));
    await layer.submitInstruction(instruction(2, 300n, 2));
    const [first, second, third] = await layer.produceBlocks(3, 1);
    expect(first!.deposits.map((d) => [d.coordinate.seq, d.height])).toEqual([[1, 1]]);
    expect(first!.instructions.map((i) => i.digest)).toEqual([hex(1001)]);
    expect(first!.held).toEqual({ [hex(7)]: 200n });
    expect(second!.instructions).toEqual([]);
    expect(third!.expired).toEqual([hex(1002)]);
    expect(layer.mempoolSize).toBe(0);
    expect((await layer.inbox(1, 5)).map((r) => [r.coordinate.seq, r.height, r.amountMinor])).toEqual([[1, 1, 500n]]);
  });

  it('attests only locations it knows', async () => {
    const layer = await open();
    await layer.registerLocation({ location: hex(7), symbol: 'USD', decimals: 2, status: 'active' });
    await layer.requestAttestation(hex(7));
    await layer.requestAttestation(hex(8));
    const [block] = await layer.produceBlocks(1, 1);
    expect(block!.attestations).toEqual([{ location: hex(7), symbol: 'USD', decimals: 2, status: 'active' }]);
  });

  it('is deterministic: the same calls make the same chain of blocks', async () => {
    const run = async () => {
      const layer = await open();
      await layer.submitAnchor({ number: 1, commitment: hex(5) });
      await layer.placeDeposit({ location: hex(7), amountMinor: 10n, accountRef: hex(3) });
      await layer.produceBlocks(4, 77);
      await layer.submitInstruction(instruction(1, 4n, 20));
      return (await layer.produceBlocks(2, 78)).map((b) => b.digest);
    };
    expect(await run()).toEqual(await run());
  });

  it('resumes from its store where it stood: head, mempool, inbox and holdings', async () => {
    const store = new MemoryStore();
    const before = await open(store);
    await before.produceBlocks(5, 1);
    await before.placeDeposit({ location: hex(7), amountMinor: 10n, accountRef: hex(3) });
    await before.produceBlocks(1, 2);
    await before.submitAnchor({ number: 1, commitment: hex(5) });
    await before.setServing(false, 3);
    const after = await open(store);
    expect(await after.head()).toEqual({ height: 6, finalHeight: 4 });
    expect(after.serving).toBe(false);
    expect(after.mempoolSize).toBe(1);
    await after.setServing(true, 4);
    const [block] = await after.produceBlocks(1, 5);
    expect(block!.height).toBe(7);
    expect(block!.previous).toBe((await after.blocks(6, 6))[0]!.digest);
    expect(block!.anchors.map((a) => a.number)).toEqual([1]);
    expect(block!.held).toEqual({ [hex(7)]: 10n });
    const deposit = await after.placeDeposit({ location: hex(7), amountMinor: 1n, accountRef: hex(3) });
    expect(deposit.coordinate.seq).toBe(2);
  });

  it('refuses to read a block whose bytes no longer hash to its digest', async () => {
    const store = new MemoryStore();
    const layer = await open(store);
    await layer.submitAnchor({ number: 1, commitment: hex(1) });
    const [block] = await layer.produceBlocks(1, 1);
    expect(blockDigest(block!)).toBe(block!.digest);
    const key = 'L/b/0000000000000001';
    const text = (await store.get(key))!;
    await store.write([{ type: 'put', key, value: text.replace('"atMs":1', '"atMs":2') }], false);
    await expect(layer.blocks(1, 1)).rejects.toThrow('damaged layer block 1 record: does not hash to its digest');
  });

  it('keeps a run of empty blocks as one record, rebuilds its blocks as they were made, and refuses one tampered with', async () => {
    const store = new MemoryStore();
    const layer = await open(store);
    const made = [...(await layer.produceBlocks(5, 1)), ...(await layer.produceBlocks(5, 9))];
    let records = 0;
    for await (const _ of store.entries({ gte: 'L/b/', lt: 'L/b0', limit: 100 })) records++;
    expect(records).toBe(1);
    expect(await layer.blocks(1, 10)).toEqual(made);
    expect(await layer.blocks(4, 7)).toEqual(made.slice(3, 7));
    // Reopened, it reads the same chain, and the next block with content chains to the run's last.
    const again = await open(store);
    expect(await again.blocks(1, 10)).toEqual(made);
    await again.submitAnchor({ number: 1, commitment: hex(1) });
    const [next] = await again.produceBlocks(1, 20);
    expect(next!.previous).toBe(made[9]!.digest);
    const key = 'L/b/0000000000000001';
    const text = (await store.get(key))!;
    await store.write([{ type: 'put', key, value: text.replace('"atMs":1', '"atMs":2') }], false);
    await expect((await open(store)).blocks(1, 10)).rejects.toThrow('damaged layer block 10 record: does not hash to its digest');
  });

  it('tells its listeners of each run of blocks once it is written', async () => {
    const layer = await open();
    const seen: number[][] = [];
    const off = layer.onBlocks((blocks) => seen.push(blocks.map((b) => b.height)));
    await layer.produceBlocks(2, 1);
    off();
    await layer.produceBlocks(1, 2);
    expect(seen).toEqual([[1, 2]]);
  });
});

/** A store whose next write fails after landing (an fsync error): the write is there, the caller was told it failed. */
class LandedButFailed extends MemoryStore {
  failNext = false;
  override async write(ops: Parameters<MemoryStore['write']>[0], sync: boolean): Promise<void> {
    await super.write(ops, sync);
    if (this.failNext) {
      this.failNext = false;
      throw new Error('EIO: fsync failed');
    }
  }
}

describe('the embedded layer when its store fails', () => {
  it('refuses the change with ERR-SettlementLayerUnavailable and reads its state back before the next', async () => {
    const store = new LandedButFailed();
    const layer = await open(store);
    await layer.produceBlocks(1, 1);
    store.failNext = true;
    await expect(layer.produceBlocks(2, 2)).rejects.toMatchObject({ refusal: { error: 'ERR-SettlementLayerUnavailable' } });
    // The two blocks landed: the layer follows its store, not what it was told.
    const [next] = await layer.produceBlocks(1, 3);
    expect(next!.height).toBe(4);
    expect(next!.previous).toBe((await layer.blocks(3, 3))[0]!.digest);
  });
});
