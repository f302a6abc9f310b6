/**
 * The API key on its deciding reply (CONTRACT 5). The handoff alone: a key waiting for its
 * deciding reply goes out once, in time, or never. Then the route when the decision is
 * slow: an API-key registration not decided within the route's wait is acknowledged at
 * Received without the key, and the first repeat after the decision carries it, once.
 * In-process (buildApp), over a store whose decision writes are held back, since a real
 * daemon decides too fast to show it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../daemon/app.js';
import { loadConfig } from '../../daemon/config.js';
import { openLayer, openSettlement } from '../../daemon/settlement.js';
import { testClerk } from '../support/clerk.js';
import { ApiKeyHandoff, decisionWaitMs, handoffKeysMax, handoffWaitMs } from '../../daemon/http/api-keys.js';
import { builtInPrincipals } from '../../src/auth/authority.js';
import { credentialWrites, principalCredentialWrites } from '../../src/auth/credentials.js';
import { importGenesis } from '../../src/book/genesis.js';
import { sequentialIds } from '../../src/model/ids.js';
import { Kernel } from '../../src/book/kernel.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';
import type { CredentialId, IdentityId } from '../../src/model/values.js';
import { customersGenesis } from '../support/book.js';
import { keys } from '../../src/model/keys.js';

describe('ApiKeyHandoff', () => {
  it('gives a held key to the first taker only', () => {
    const handoff = new ApiKeyHandoff(() => 0);
    handoff.hold('op_1', 'ledger_ak_one');
    expect(handoff.take('op_2')).toBeNull();
    expect(handoff.take('op_1')).toBe('ledger_ak_one');
    expect(handoff.take('op_1')).toBeNull();
  });

  it('forgets a key not collected in time', () => {
    let nowMs = 0;
    const handoff = new ApiKeyHandoff(() => nowMs);
    handoff.hold('op_1', 'ledger_ak_one');
    nowMs = handoffWaitMs;
    expect(handoff.take('op_1')).toBeNull();
  });

  it('holds a bounded number of keys, dropping the oldest', () => {
    const handoff = new ApiKeyHandoff(() => 0);
    for (let i = 0; i <= handoffKeysMax; i++) handoff.hold(`op_${i}`, `ledger_ak_${i}`);
    expect(handoff.take('op_0')).toBeNull();
    expect(handoff.take(`op_${handoffKeysMax}`)).toBe(`ledger_ak_${handoffKeysMax}`);
  });
});

/** Holds back every decision write (the one that moves the head) by more than the route waits. */
class SlowDecisions extends MemoryStore {
  override async write(ops: readonly BatchOp[], sync: boolean): Promise<void> {
    if (ops.some((op) => op.key === keys.head)) await new Promise((resolve) => setTimeout(resolve, decisionWaitMs + 500));
    return super.write(ops, sync);
  }
}

const aliceKey = `ledger_ak_${randomBytes(32).toString('base64url')}`;
let kernel: Kernel;
let app: ReturnType<typeof buildApp>;

beforeAll(async () => {
  const store = new SlowDecisions();
  const nowMs = Date.now();
  const alice = { id: 'did:ledger:cred:alice' as CredentialId, identity: 'did:ledger:id:alice' as IdentityId, scheme: 'api-key' as const, verifier: null, scope: null, createdAtMs: nowMs, webauthnId: null, counter: 0 };
  await importGenesis(store, customersGenesis({ alice: 0n }), nowMs, [...principalCredentialWrites(builtInPrincipals, { operator: 'x'.repeat(43), identities: 'y'.repeat(43) }, nowMs), ...credentialWrites(alice, aliceKey)]);
  kernel = await Kernel.open({ store, clock: Date.now, ids: sequentialIds });
  const config = loadConfig({ flags: {}, env: {}, readFile: () => null });
  app = buildApp({ kernel, config, clock: Date.now, logger: false, version: 'test', settlement: await openSettlement({ store, layer: await openLayer(store, config.settlement), kernel, clerk: testClerk(), config: config.settlement, clock: Date.now }), cursorKey: randomBytes(32) });
});

afterAll(async () => {
  await app.close();
  await kernel.close();
});

it('acknowledges without the key, then gives it to the first repeat after the decision only', async () => {
  const send = () =>
    app.inject({ method: 'POST', url: '/v1/credentials', headers: { authorization: `Bearer ${aliceKey}`, 'client-key': 'slow-1', 'content-type': 'application/json' }, payload: { marker: 'ordinary', scheme: 'api-key' } });
  const first = await send();
  expect(first.statusCode).toBe(202);
  expect(first.json()).toMatchObject({ terminal: false, state: 'Received', api_key: null });
  await kernel.idle();
  const deciding = await send();
  expect(deciding.statusCode).toBe(200);
  expect(deciding.json()).toMatchObject({ terminal: true, state: 'Completed' });
  const apiKey = deciding.json().api_key as string;
  expect(apiKey).toMatch(/^ledger_ak_/);
  expect((await send()).json().api_key).toBeNull();
  expect((await kernel.authenticate(apiKey))?.principal).toBe('did:ledger:id:alice');
});
