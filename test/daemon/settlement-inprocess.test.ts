/**
 * Settlement paths a real daemon cannot be driven into from outside yet, in process
 * (buildApp over a memory store): a layer that is not serving refuses checkpoints with
 * 503 ERR-SettlementLayerUnavailable and Retry-After while the book goes on; a store
 * failing under a checkpoint is ERR-DecisionUnavailable and the next one follows the
 * store; anchors the layer did not take are sent again.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../daemon/app.js';
import { loadConfig } from '../../daemon/config.js';
import { type Settlement, openLayer, openSettlement } from '../../daemon/settlement.js';
import { builtInPrincipals } from '../../src/auth/authority.js';
import { principalCredentialWrites } from '../../src/auth/credentials.js';
import { importGenesis } from '../../src/book/genesis.js';
import { Kernel } from '../../src/book/kernel.js';
import { Checkpoints } from '../../src/checkpoints/checkpoints.js';
import { sequentialIds } from '../../src/model/ids.js';
import type { SettlementAdapter } from '../../src/settlement/adapter.js';
import { EmbeddedLayer } from '../../src/settlement/embedded.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';
import { customersGenesis } from '../support/book.js';
import { testClerk } from '../support/clerk.js';

const operatorKey = 'o'.repeat(43);
let kernel: Kernel;
let settlement: Settlement;
let app: ReturnType<typeof buildApp>;

beforeAll(async () => {
  const store = new MemoryStore();
  const nowMs = Date.now();
  await importGenesis(store, customersGenesis({ alice: 10n }), nowMs, principalCredentialWrites(builtInPrincipals, { operator: operatorKey, identities: 'i'.repeat(43) }, nowMs));
  kernel = await Kernel.open({ store, clock: Date.now, ids: sequentialIds });
  const config = loadConfig({ flags: {}, env: {}, readFile: () => JSON.stringify({ settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0 } }) });
  settlement = await openSettlement({ store, layer: await openLayer(store, config.settlement), kernel, clerk: testClerk(), config: config.settlement, clock: Date.now });
  app = buildApp({ kernel, config, clock: Date.now, logger: false, version: 'test', settlement, cursorKey: randomBytes(32) });
});
afterAll(async () => {
  await app.close();
  await settlement.close();
  await kernel.close();
});

const post = (url: string, clientKey: string, payload: object = {}) =>
  app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${operatorKey}`, 'client-key': clientKey, 'content-type': 'application/json' }, payload });

describe('a settlement layer that is not serving', () => {
  it('refuses checkpoints with 503 ERR-SettlementLayerUnavailable and Retry-After, and takes them again once it serves', async () => {
    await settlement.layer.setServing(false, Date.now());
    const refused = await post('/v1/ops/checkpoints', 'stopped');
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toMatchObject({ error: 'ERR-SettlementLayerUnavailable' });
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    // Blocks made on request still advance a stopped layer, carrying nothing.
    expect((await post('/v1/ops/layer/blocks', 'b1', { count: 2 })).json()).toEqual({ height: 2, final_height: 0, serving: false });
    await settlement.layer.setServing(true, Date.now());
    // The refusal stored nothing: the same key now takes the checkpoint.
    const taken = await post('/v1/ops/checkpoints', 'stopped');
    expect(taken.statusCode).toBe(200);
    expect(taken.json().result.anchoring.checkpoint).toMatchObject({ number: 1, status: 'pending' });
  });
});

/** A store whose writes of checkpoint records fail once (after landing, like an fsync error). */
class FailingCheckpointWrite extends MemoryStore {
  failNext = false;
  override async write(ops: readonly BatchOp[], sync: boolean): Promise<void> {
    await super.write(ops, sync);
    if (this.failNext && ops.some((op) => op.key.startsWith('cp/'))) {
      this.failNext = false;
      throw new Error('EIO');
    }
  }
}

/** The layer behind an adapter that refuses anchors while `away.now`. */
function awayAdapter(layer: EmbeddedLayer, away: { now: boolean }): SettlementAdapter {
  return {
    instance: layer.instance,
    finalityDepth: layer.finalityDepth,
    head: () => layer.head(),
    status: (nowMs) => layer.status(nowMs),
    blocks: (from, to) => layer.blocks(from, to),
    inbox: (from, to) => layer.inbox(from, to),
    submitAnchor: (anchor) => (away.now ? Promise.reject(new Error('unreachable')) : layer.submitAnchor(anchor)),
    submitInstruction: (instruction) => layer.submitInstruction(instruction),
    requestAttestation: (location) => layer.requestAttestation(location),
    onBlocks: (listener) => layer.onBlocks(listener),
  };
}

async function journalOf(store: MemoryStore, entries: number): Promise<void> {
  const leaves = Array.from({ length: entries }, (_, i) => `{"seq":${i + 1}}`);
  await store.write([{ type: 'put', key: 'j/0000000000000001', value: leaves.join('\n') }, { type: 'put', key: 'meta/head', value: JSON.stringify({ decidedCseq: 0, postingSeq: entries, eventSeq: 0, lastAtMs: 0, accounts: 0 }) }], false);
}

describe('Checkpoints', () => {
  it('answers a store failure with ERR-DecisionUnavailable and follows the store for the next checkpoint', async () => {
    const store = new FailingCheckpointWrite();
    await journalOf(store, 5);
    const layer = await EmbeddedLayer.open({ store, instance: 1, finalityDepth: 1, sync: false });
    const checkpoints = await Checkpoints.open(store, layer);
    store.failNext = true;
    await expect(checkpoints.take(1)).rejects.toMatchObject({ refusal: { error: 'ERR-DecisionUnavailable' } });
    // The record landed: the next checkpoint is number 2, chained to it.
    const second = await checkpoints.take(2);
    expect(second.number).toBe(2);
    expect(second.previous).toBe((await checkpoints.get(1))!.commitment);
  });

  it('sends again an anchor the layer did not take, and moves it once a block carries it', async () => {
    const store = new MemoryStore();
    await journalOf(store, 3);
    const layer = await EmbeddedLayer.open({ store, instance: 1, finalityDepth: 1, sync: false });
    const away = { now: true };
    const checkpoints = await Checkpoints.open(store, awayAdapter(layer, away));
    await checkpoints.take(1);
    await layer.produceBlocks(1, 2);
    expect(await checkpoints.ingest()).toEqual([]);
    away.now = false;
    await layer.produceBlocks(1, 3);
    // The ingest sends the anchor first; the next block carries it, the one after makes it final.
    await checkpoints.ingest();
    await layer.produceBlocks(2, 4);
    expect((await checkpoints.ingest()).map((c) => c.status)).toEqual(['final']);
    // Reopened, it stands where it was.
    const reopened = await Checkpoints.open(store, layer);
    expect(reopened.latest).toMatchObject({ number: 1, status: 'final', height: 3 });
  });
});
