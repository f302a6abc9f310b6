/**
 * Building liabilities trees over a book of thousands of customers, in process
 * (CONTRACT 12.2-12.3): a kill while a tree's records are being written leaves a book
 * whose next checkpoint is right (every leaf, the root and the total rebuilt
 * independently from the balances) and whose earlier proofs still verify; and a book
 * whose first checkpoint is of version 1 goes on with version 2, the chain and the
 * consistency proof between them verifying, the version-1 checkpoint refusing a proof.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AssertionFailure } from '../../src/assert.js';
import { importGenesis } from '../../src/book/genesis.js';
import { Checkpoints } from '../../src/checkpoints/checkpoints.js';
import { Frontier, extendFrontier } from '../../src/checkpoints/merkle.js';
import { chainProblem, checkpointCommitment, consistencyHolds } from '../../src/checkpoints/verify-proofs.js';
import { checkpointView } from '../../src/checkpoints/views.js';
import { decodeAccount, decodeBalanceText } from '../../src/model/codec.js';
import { keys } from '../../src/model/keys.js';
import { EmbeddedLayer } from '../../src/settlement/embedded.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';
import { builtInPrincipals } from '../../src/auth/authority.js';
import { disclose } from '../../src/disclosures/disclose.js';
import { verifyDisclosure } from '../../src/disclosures/verify.js';
import type { AccountId, AssetSymbol, CredentialId, IdentityId } from '../../src/model/values.js';
import { customersGenesis } from '../support/book.js';
import { testClerk } from '../support/clerk.js';
import { independentlyVerify } from '../support/independent-verifier.js';
import { checkChain, liabilitiesRootOf, verifyConsistency, verifyLiabilities } from '../support/independent-audit.js';

const instance = 3;
const key = Buffer.alloc(32, 9);

/** A store that dies (throws, writing nothing more) at the `dieAt`-th batch of liabilities records; `onRecords` is told of each batch first. */
class DyingStore extends MemoryStore {
  private dieAt = 0;
  private seen = 0;
  onRecords: (() => void) | null = null;
  dieAtBatch(n: number): void {
    this.dieAt = n;
    this.seen = 0;
  }
  override async write(ops: readonly BatchOp[]): Promise<void> {
    if (ops.some((op) => op.key.startsWith('lt/'))) this.onRecords?.();
    if (this.dieAt > 0 && ops.some((op) => op.key.startsWith('lt/')) && ++this.seen === this.dieAt) throw new Error('killed');
    await super.write(ops);
  }
}

async function bookOf(customers: number): Promise<DyingStore> {
  const store = new DyingStore();
  const funded = Object.fromEntries(Array.from({ length: customers }, (_, i) => [`c${i}`, BigInt((i * 7919) % 1000)]));
  await importGenesis(store, customersGenesis(funded), 1);
  return store;
}

/** Every customer's USD layers as the store holds them now. */
async function customerBalances(store: MemoryStore): Promise<Map<string, { available: string; reserved: string; encumbered: string }>> {
  const out = new Map<string, { available: string; reserved: string; encumbered: string }>();
  for await (const [k, v] of store.entries({ gte: 'bal/', lt: 'bal0', limit: 1_000_000 })) {
    const [, account, asset] = k.split('/');
    if (asset !== 'USD' || decodeAccount((await store.get(keys.account(account!)))!, keys.account(account!)).kind !== 'customer') continue;
    const b = decodeBalanceText(v);
    out.set(account!, { available: b.available.toString(), reserved: b.reserved.toString(), encumbered: b.encumbered.toString() });
  }
  return out;
}

async function makeFinal(checkpoints: Checkpoints, layer: EmbeddedLayer, atMs: number): Promise<void> {
  await checkpoints.ingest();
  await layer.produceBlocks(1, atMs);
  await layer.produceBlocks(2, atMs);
  await checkpoints.ingest();
}

/**
 * Checks checkpoint `number` against balances: every leaf rebuilt here from the
 * balances and the salts (this test holds the key) gives the published root and total;
 * a sample of holders' proofs verify and carry their balances.
 */
async function audit(checkpoints: Checkpoints, chain: readonly Record<string, any>[], number: number, balances: Map<string, { available: string; reserved: string; encumbered: string }>): Promise<void> {
  const salt = (account: string) => createHmac('sha256', key).update(`ledger-liabilities-salt:v1:${instance}:${number}:${account}`).digest('hex');
  const leaves = [...balances].map(([account, b]) => ({ account, asset: 'USD', ...b, checkpoint: number, salt: salt(account) }));
  const total = leaves.reduce((sum, l) => sum + BigInt(l.available) + BigInt(l.reserved) + BigInt(l.encumbered), 0n);
  const root = chain[number - 1]!.liabilities.USD;
  expect(liabilitiesRootOf(leaves)).toEqual(root);
  expect(root.total).toBe(total.toString());
  for (const [i, [account, b]] of [...balances].entries()) {
    if (i % 97 !== 0) continue;
    const proof = await checkpoints.liabilities(number, 'USD', account);
    const reply = { account, asset: 'USD', instance: proof.instance, checkpoint: checkpointView(proof.checkpoint), leaf: { ...proof.leaf }, index: proof.index, path: proof.path };
    const leaf = verifyLiabilities(instance, chain[number - 1]!, account, 'USD', JSON.parse(JSON.stringify(reply)));
    expect({ available: leaf.available, reserved: leaf.reserved, encumbered: leaf.encumbered }).toEqual(b);
  }
}

describe('liabilities trees on a larger book', () => {
  it('survive a kill while a tree is written: the next checkpoint is right and earlier proofs verify', async () => {
    const store = await bookOf(3000);
    const layer = await EmbeddedLayer.open({ store, instance, finalityDepth: 1, sync: false });
    let checkpoints = await Checkpoints.open(store, layer, key);
    await checkpoints.take(10);
    await makeFinal(checkpoints, layer, 11);
    const before = await customerBalances(store);
    // Value moves between customers (as decided rounds would write it), so the next tree differs from the killed one.
    const moved = [...before.keys()].slice(0, 40);
    const writes: BatchOp[] = moved.map((account, i) => {
      const b = before.get(account)!;
      const delta = i % 2 === 0 ? 1n : -1n;
      return { type: 'put', key: keys.balance(account, 'USD'), value: JSON.stringify({ a: (BigInt(b.available) + (BigInt(b.available) > 0n || delta > 0n ? delta : 1n)).toString(), r: b.reserved, e: b.encumbered }) };
    });
    store.dieAtBatch(1);
    await expect(checkpoints.take(20)).rejects.toThrow();
    store.dieAtBatch(2);
    await expect(checkpoints.take(21)).rejects.toThrow();
    // The killed build left records of checkpoint 2 behind, and no checkpoint 2.
    let left = 0;
    for await (const _ of store.entries({ gte: 'lt/0000000000000002/', lt: 'lt/0000000000000003', limit: 10 })) left++;
    expect(left).toBeGreaterThan(0);
    expect(await store.get('cp/0000000000000002')).toBeUndefined();
    await store.write(writes);
    store.dieAtBatch(0);
    // A restart: a new Checkpoints over the book as the kill left it.
    checkpoints = await Checkpoints.open(store, layer, key);
    expect(checkpoints.latest?.number).toBe(1);
    const second = await checkpoints.take(30);
    expect(second.number).toBe(2);
    await makeFinal(checkpoints, layer, 31);
    const chain = checkChain(instance, (await checkpoints.list(null, 10)).items.reverse().map(checkpointView) as Record<string, any>[]);
    expect(chainProblem(instance, chain as never)).toBeNull();
    await audit(checkpoints, chain, 2, await customerBalances(store));
    await audit(checkpoints, chain, 1, before);
  });

  it('are abandoned at once when the checkpoints close mid-build (ledgerd closing), and the restarted book takes that checkpoint whole', async () => {
    const store = await bookOf(3000);
    const layer = await EmbeddedLayer.open({ store, instance, finalityDepth: 1, sync: false });
    const closing = await Checkpoints.open(store, layer, key);
    // Closed as the first batch of records is written: the tree worker is ended, the build fails.
    store.onRecords = () => closing.close();
    await expect(closing.take(10)).rejects.toMatchObject({ refusal: { error: 'ERR-DecisionUnavailable', description: expect.stringContaining('abandoned') } });
    expect(await store.get('cp/0000000000000001')).toBeUndefined();
    await expect(closing.take(11)).rejects.toMatchObject({ refusal: { error: 'ERR-DecisionUnavailable' } });
    store.onRecords = null;
    const checkpoints = await Checkpoints.open(store, layer, key);
    expect((await checkpoints.take(12)).number).toBe(1);
    await makeFinal(checkpoints, layer, 13);
    const chain = checkChain(instance, (await checkpoints.list(null, 10)).items.reverse().map(checkpointView) as Record<string, any>[]);
    await audit(checkpoints, chain, 1, await customerBalances(store));
  });

  it('fail as an assertion when the tree worker finds a damaged leaf, write no checkpoint, and build it whole once the record is put right', async () => {
    const store = await bookOf(50);
    const layer = await EmbeddedLayer.open({ store, instance, finalityDepth: 1, sync: false });
    const checkpoints = await Checkpoints.open(store, layer, key);
    const right = (await store.get(keys.balance('did:ledger:acct:c7', 'USD')))!;
    // Layers past what any decision makes: the worker's packed sums refuse them.
    await store.write([{ type: 'put', key: keys.balance('did:ledger:acct:c7', 'USD'), value: JSON.stringify({ a: (2n ** 200n).toString(), r: '0', e: '0' }) }]);
    const failed = checkpoints.take(10);
    await expect(failed).rejects.toBeInstanceOf(AssertionFailure);
    await expect(failed).rejects.toThrow(/below 2\^192/);
    expect(await store.get('cp/0000000000000001')).toBeUndefined();
    await store.write([{ type: 'put', key: keys.balance('did:ledger:acct:c7', 'USD'), value: right }]);
    expect((await checkpoints.take(11)).number).toBe(1);
    await makeFinal(checkpoints, layer, 12);
    const chain = checkChain(instance, (await checkpoints.list(null, 10)).items.reverse().map(checkpointView) as Record<string, any>[]);
    await audit(checkpoints, chain, 1, await customerBalances(store));
  });

  it('go on from a version-1 checkpoint: the chain and the consistency proof verify, the version-1 one refuses a proof', async () => {
    const store = await bookOf(5);
    const head = JSON.parse((await store.get(keys.head))!);
    const frontier = Frontier.empty();
    const subtrees = await extendFrontier(frontier, store, head.postingSeq);
    const v1 = { number: 1, entrySequence: head.postingSeq, kernelRoot: frontier.rootHex(), previous: '0'.repeat(64), createdAtMs: 5, status: 'final', height: 1, instance, frontier: frontier.peaksHex };
    const commitment = checkpointCommitment({ instance, number: 1, entry_sequence: v1.entrySequence, kernel_root: v1.kernelRoot, previous: v1.previous });
    await store.write([...subtrees, { type: 'put', key: 'cp/0000000000000001', value: JSON.stringify({ ...v1, commitment }) }]);
    const layer = await EmbeddedLayer.open({ store, instance, finalityDepth: 1, sync: false });
    const checkpoints = await Checkpoints.open(store, layer, key);
    const second = await checkpoints.take(10);
    expect(second).toMatchObject({ number: 2, version: 2, previous: commitment });
    await makeFinal(checkpoints, layer, 11);
    const chain = (await checkpoints.list(null, 10)).items.reverse().map(checkpointView) as Record<string, any>[];
    expect('version' in chain[0]!).toBe(false);
    expect(chainProblem(instance, chain as never)).toBeNull();
    checkChain(instance, chain);
    // A version-1 checkpoint after a version-2 one, or a version 3, breaks the chain for both verifiers.
    for (const bad of [[chain[1], { ...chain[0], number: 2 }], [{ ...chain[0], version: 3 }]]) {
      expect(chainProblem(instance, bad as never)).not.toBeNull();
      expect(() => checkChain(instance, bad as Record<string, any>[])).toThrow();
    }
    const { from, to, proof } = await checkpoints.consistency(1, 2);
    expect(consistencyHolds(from.entrySequence, to.entrySequence, from.kernelRoot, to.kernelRoot, proof)).toBe(true);
    verifyConsistency(from.entrySequence, to.entrySequence, from.kernelRoot, to.kernelRoot, proof);
    await expect(checkpoints.liabilities(1, 'USD', 'did:ledger:acct:c1')).rejects.toMatchObject({ refusal: { error: 'ERR-NotDisclosable' } });
    await audit(checkpoints, chain, 2, await customerBalances(store));

    // CONTRACT 12.7: a disclosure with the liabilities proof rests on a version-2 checkpoint only.
    const clerk = testClerk();
    const request = (checkpoint: number) => ({
      actor: { principal: 'did:ledger:id:c1' as IdentityId, credential: 'did:ledger:cred:c1' as CredentialId, onBehalfOf: null }, operator: builtInPrincipals.operator,
      subject: 'did:ledger:acct:c1' as AccountId, assertion: { shape: 'holds_at_least' as const, amount: '1', asset: 'USD' as AssetSymbol, kind: 'available' as const },
      checkpoint, legalObligation: null, recipient: { reference: 'ab'.repeat(32) }, withLiabilities: true,
    });
    const context = { view: store, checkpoints, assets: ['USD' as AssetSymbol], instance, clerk, nowMs: 20, operationPostings: async () => undefined };
    await expect(disclose(request(1), context)).rejects.toMatchObject({ refusal: { error: 'ERR-NotDisclosable' } });
    const hex = await disclose(request(2), context);
    const trust = { clerkPublicKeyHex: clerk.publicKeyHex, instance, finalCheckpoint: (n: number) => (n === 2 ? { ...chain[1]! } as never : undefined) };
    expect((await verifyDisclosure(hex, trust)).report).toMatch(/^parse: ok\nsignature: ok\ncheckpoint: ok\nproofs: ok\nliabilities: ok\nassertion: ok/);
    independentlyVerify(hex, { clerk: clerk.publicKeyHex, instance, checkpoints: chain as never });
  });
});
