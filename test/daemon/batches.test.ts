/**
 * POST /v1/batches over the real daemon, sentence by sentence of CONTRACT 4's batch
 * paragraph: sizes, mixed items, per-item refusals and authority, client keys derived as
 * the single routes derive them, duplicates within a batch, repeats, the backlog share
 * counting items, and the book still balancing.
 */
import { describe, expect, it } from 'vitest';
import { type Client, type Reply, decided, refused, until, useDaemon } from './support.js';

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const carol = 'did:ledger:acct:carol';
const shared = useDaemon({ alice: 10_000_000n, bob: 1_000n, carol: 0n });
const op = shared.as('operator');
const asAlice = shared.as('alice');
const asBob = shared.as('bob');

let counter = 0;
const key = (label: string) => `batch-${label}-${Date.now()}-${++counter}`;
const leg = (amount: string, from = alice, to = bob) => ({ amount, asset: 'USD', from, to });
const transfer = (amount: string, extra: Record<string, unknown> = {}) => ({ command: 'transfer', body: { legs: [leg(amount)] }, ...extra });
const batch = (api: Client, commands: unknown[], headers: Record<string, string> = {}) => api.post('/v1/batches', { commands }, undefined, headers);

async function balance(account: string): Promise<bigint> {
  const r = await op.get(`/v1/accounts/${account}/balances`);
  expect(r.status, r.text).toBe(200);
  return BigInt(r.body.balances.find((b: { asset: string }) => b.asset === 'USD')?.available ?? '0');
}

/** An item's outcome: its refusal at submission, else its decision's code, or 'ok'. */
const outcomeOf = (view: any): string => (typeof view.error === 'string' ? view.error : (view.error?.error ?? 'ok'));

/** Every acknowledged item of a reply, decided: read eight at a time, within a principal's share of read slots. */
async function decideAll(api: Client, r: Reply): Promise<any[]> {
  const items: any[] = r.body.items;
  const views: any[] = new Array(items.length);
  let next = 0;
  const reader = async () => {
    for (let i = next++; i < items.length; i = next++) {
      const item = items[i];
      views[i] = item.operation_reference ? (await decided(api, item.operation_reference)).body : item;
    }
  };
  await Promise.all(Array.from({ length: 8 }, reader));
  return views;
}

describe('POST /v1/batches: sizes', () => {
  it('refuses an empty batch and one over 1,000 commands with ERR-BatchTooLarge, taking nothing', async () => {
    expect(await refused(batch(asAlice, []))).toEqual({ status: 400, error: 'ERR-BatchTooLarge' });
    const before = await balance(alice);
    const tooMany = Array.from({ length: 1_001 }, () => transfer('1'));
    expect(await refused(batch(asAlice, tooMany))).toEqual({ status: 400, error: 'ERR-BatchTooLarge' });
    expect(await balance(alice)).toBe(before);
  });

  it('takes 1,000 transfers in one request (a body far over the server-wide 64 KiB), each acknowledged and decided', async () => {
    const commands = Array.from({ length: 1_000 }, (_, i) => transfer('1', { client_key: key(`thousand-${i}`), body: { legs: [leg('1')], reference: { line: i, memo: 'payroll run 2026-11' } } }));
    const text = JSON.stringify({ commands });
    expect(Buffer.byteLength(text)).toBeGreaterThan(64 * 1024);
    const before = await balance(bob);
    const r = await asAlice.post('/v1/batches', text);
    expect(r.status, r.text.slice(0, 300)).toBe(202);
    expect(r.body.items).toHaveLength(1_000);
    const refs = new Set(r.body.items.map((item: any) => item.operation_reference));
    expect(refs.size).toBe(1_000);
    // In order: item i's reference is echoed back in item i's reply.
    expect(r.body.items[517].reference).toEqual({ line: 517, memo: 'payroll run 2026-11' });
    const views = await decideAll(asAlice, r);
    expect(views.every((v) => v.state === 'Completed')).toBe(true);
    expect(await balance(bob)).toBe(before + 1_000n);
  });

  it('echoes each item\'s reference exactly as sent (layout and number text kept), beside items that carry none', async () => {
    const legs = JSON.stringify([leg('1')]);
    const sent = '{ "z" : [1.50, "\\u00e9"],"a":{} }';
    const text = `{"commands":[{"command":"transfer","body":{"legs":${legs}}},{"command":"transfer","body":{"reference": ${sent} ,"legs":${legs}}},{"command":"transfer","body":{"legs":${legs},"reference":7e0}}]}`;
    const r = await asAlice.post('/v1/batches', text);
    expect(r.status).toBe(202);
    expect(r.text).toContain(`"reference":${sent}`);
    expect(r.text).toContain('"reference":7e0');
    expect(r.body.items.map((item: any) => item.reference)).toEqual([undefined, { z: [1.5, 'é'], a: {} }, 7]);
    await decideAll(asAlice, r);
  });

  it('refuses a body over 4 MiB with ERR-BatchTooLarge', async () => {
    const padding = 'x'.repeat(1_000);
    const commands = Array.from({ length: 1_000 }, () => transfer('1', { body: { legs: [leg('1')], reference: padding.repeat(5) } }));
    const text = JSON.stringify({ commands });
    expect(Buffer.byteLength(text)).toBeGreaterThan(4 * 1024 * 1024);
    expect(await refused(asAlice.post('/v1/batches', text))).toEqual({ status: 400, error: 'ERR-BatchTooLarge' });
  });

  it('refuses an envelope that is not a batch whole (unknown command, missing body, a client-key header)', async () => {
    expect(await refused(batch(asAlice, [{ command: 'withdraw', body: {} }]))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(await refused(batch(asAlice, [{ command: 'transfer' }]))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(await refused(batch(asAlice, [transfer('1')], { 'client-key': key('header') }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
  });
});

describe('POST /v1/batches: items on their own', () => {
  it('takes transfers, reservations, captures and releases together, and refuses a bad item alone', async () => {
    const holds = await batch(asAlice, [
      { command: 'reservation', body: { payer: alice, asset: 'USD', amount: '300' }, client_key: key('hold-1') },
      { command: 'reservation', body: { payer: alice, asset: 'USD', amount: '200' }, client_key: key('hold-2') },
    ]);
    expect(holds.status).toBe(202);
    const [first, second] = await decideAll(asAlice, holds);
    expect([first.state, second.state]).toEqual(['Reserved', 'Reserved']);

    const bobBefore = await balance(bob);
    const r = await batch(asAlice, [
      transfer('5', { client_key: key('mixed-t') }),
      { command: 'capture', body: { reservation: first.operation_reference, to: bob, amount: '100' } },
      { command: 'release', body: { reservation: second.operation_reference } },
      transfer('12.5'),
      transfer('0'),
      { command: 'transfer', body: { legs: [leg('1')], surplus: true } },
      { command: 'capture', body: { to: bob } },
    ]);
    expect(r.status, r.text).toBe(202);
    const [t, capture, release, fraction, zero, unknown, noRef] = r.body.items;
    expect(t.state).toBe('Received');
    expect(capture.operation_reference).toBeDefined();
    expect(release.operation_reference).toBeDefined();
    expect(fraction.error).toBe('ERR-PrecisionExceeded');
    expect(zero.error).toBe('ERR-ZeroAmount');
    expect(unknown).toMatchObject({ error: 'ERR-MalformedCommand' });
    expect(unknown.description).toContain('commands.5.body');
    expect(noRef).toMatchObject({ error: 'ERR-MalformedCommand' });
    expect(noRef.description).toContain('reservation');
    const [tv, cv, rv] = await decideAll(asAlice, { ...r, body: { items: [t, capture, release] } });
    expect([tv.state, cv.state, rv.state]).toEqual(['Completed', 'Completed', 'Completed']);
    // The holds they finished.
    expect((await asAlice.get(`/v1/operations/${first.operation_reference}`)).body.state).toBe('Captured');
    expect((await asAlice.get(`/v1/operations/${second.operation_reference}`)).body.state).toBe('Released');
    expect(await balance(bob)).toBe(bobBefore + 105n);
  });

  it('decides each item with the authority of the caller alone: another principal\'s account is refused for that item only', async () => {
    const r = await batch(asBob, [
      { command: 'transfer', body: { legs: [leg('1', bob, carol)] } , client_key: key('own') },
      { command: 'transfer', body: { legs: [leg('1', alice, bob)] }, client_key: key('theirs') },
    ]);
    expect([200, 202]).toContain(r.status);
    const [own, theirs] = await decideAll(asBob, r);
    expect(own.state).toBe('Completed');
    // Exactly what the single route answers for the same transfer.
    const alone = await asBob.post('/v1/transfers', { legs: [leg('1', alice, bob)] }, undefined, { 'client-key': key('theirs-alone') });
    const aloneOutcome = alone.status >= 400 ? alone.body.error : (await decided(asBob, alone.body.operation_reference)).body.error.error;
    expect(aloneOutcome).toMatch(/^ERR-/);
    expect(outcomeOf(theirs)).toBe(aloneOutcome);
  });

  it('refuses an on-behalf-of the caller holds no authority for, as the single routes do', async () => {
    expect(await refused(batch(asBob, [transfer('1')], { 'on-behalf-of': 'did:ledger:id:alice' }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
  });
});

describe('POST /v1/batches: client keys', () => {
  it('derives an item\'s key as its own route does: a batch item and the same command sent alone are one operation', async () => {
    const body = { legs: [leg('3', alice, carol)], reference: { derived: counter++ } };
    const alone = await asAlice.post('/v1/transfers', body);
    expect(alone.body.client_key_derived).toBe(true);
    const r = await batch(asAlice, [{ command: 'transfer', body }]);
    expect(r.body.items[0]).toMatchObject({ client_key: alone.body.client_key, client_key_derived: true, operation_reference: alone.body.operation_reference });

    // And the other way round, for a capture whose route carries the reservation in its path.
    const hold = await asAlice.post('/v1/reservations', { payer: alice, asset: 'USD', amount: '9' }, undefined, { 'client-key': key('hold') });
    const ref = (await decided(asAlice, hold.body.operation_reference)).body.operation_reference;
    const inBatch = await batch(asAlice, [{ command: 'capture', body: { reservation: ref, to: carol } }]);
    const single = await asAlice.post(`/v1/reservations/${ref}/capture`, { to: carol });
    expect(single.body.operation_reference).toBe(inBatch.body.items[0].operation_reference);
    expect(single.body.client_key).toBe(inBatch.body.items[0].client_key);
    await decided(asAlice, alone.body.operation_reference);
    await decided(asAlice, single.body.operation_reference);
  });

  it('answers the same key twice in one batch with one reply when the items are identical, and ERR-ClientKeyReused when not', async () => {
    const same = key('dup');
    const carolBefore = await balance(carol);
    const r = await batch(asAlice, [
      transfer('4', { client_key: same, body: { legs: [leg('4', alice, carol)] } }),
      transfer('4', { client_key: same, body: { legs: [leg('4', alice, carol)] } }),
      transfer('5', { client_key: same, body: { legs: [leg('5', alice, carol)] } }),
    ]);
    const [a, b, c] = r.body.items;
    expect(b.operation_reference).toBe(a.operation_reference);
    expect(c.error).toBe('ERR-ClientKeyReused');
    await decideAll(asAlice, { ...r, body: { items: [a] } });
    expect(await balance(carol)).toBe(carolBefore + 4n);
  });

  it('repeats a batch with no second effect, answering 200 once every item is decided', async () => {
    const commands = [transfer('6', { client_key: key('rep-1') }), transfer('7', { client_key: key('rep-2') }), transfer('0', { client_key: key('rep-3') })];
    const bobBefore = await balance(bob);
    const first = await batch(asAlice, commands);
    expect(first.status).toBe(202);
    await decideAll(asAlice, first);
    const again = await batch(asAlice, commands);
    expect(again.status).toBe(200);
    expect(again.body.items.map((i: any) => i.operation_reference)).toEqual(first.body.items.map((i: any) => i.operation_reference));
    expect(again.body.items[0]).toMatchObject({ terminal: true, state: 'Completed' });
    expect(again.body.items[2].error).toBe('ERR-ZeroAmount');
    expect(await balance(bob)).toBe(bobBefore + 13n);
  });
});

/** Atomic store writes so far (intake's submission writes and the decider's rounds), from /metrics. */
async function storeWrites(): Promise<number> {
  const r = await op.get('/metrics');
  const line = /^ledgerd_store_write_seconds_count (\d+)$/m.exec(r.text);
  expect(line, r.text.slice(0, 200)).not.toBeNull();
  return Number(line![1]);
}

describe('POST /v1/batches: intake', () => {
  it('takes a batch of 1,000 in fewer than 50 store writes, submissions and decisions together', async () => {
    const before = await storeWrites();
    const r = await batch(asAlice, Array.from({ length: 1_000 }, (_, i) => transfer('1', { client_key: key(`writes-${i}`) })));
    expect(r.status).toBe(202);
    await decideAll(asAlice, r);
    const writes = (await storeWrites()) - before;
    // One submission write for the batch, a few decision rounds, and whatever the settlement layer wrote meanwhile.
    expect(writes).toBeLessThan(50);
  });
});

describe('POST /v1/batches: the book', () => {
  it('keeps the trial balance at zero', async () => {
    await until(() => op.get('/v1/trial-balance'), (r) => r.status === 200);
    const r = await op.get('/v1/trial-balance');
    for (const row of r.body.rows) {
      const sum = BigInt(row.openings) + BigInt(row.layers.available) + BigInt(row.layers.reserved) + BigInt(row.layers.encumbered);
      expect(sum, JSON.stringify(row)).toBe(0n);
    }
  });
});

describe('POST /v1/batches: the backlog share counts items', () => {
  // A backlog of 16 gives each principal a share of 2 undecided commands.
  const small = useDaemon({ dave: 1_000n, erin: 0n }, { backlogMax: 16 });
  it('refuses the items past the caller\'s share with ERR-DecisionUnavailable and Retry-After, taking the rest', async () => {
    const dave = small.as('dave');
    const commands = Array.from({ length: 50 }, (_, i) => ({ command: 'transfer', body: { legs: [{ amount: '1', asset: 'USD', from: 'did:ledger:acct:dave', to: 'did:ledger:acct:erin' }] }, client_key: key(`share-${i}`) }));
    const r = await batch(dave, commands);
    expect(r.status).toBe(202);
    const refusedItems = r.body.items.filter((i: any) => i.error === 'ERR-DecisionUnavailable');
    const taken = r.body.items.filter((i: any) => i.operation_reference);
    expect(taken.length).toBeGreaterThan(0);
    expect(taken.length).toBeLessThanOrEqual(2);
    expect(refusedItems.length).toBe(50 - taken.length);
    expect(r.headers['retry-after']).toBeDefined();
  });
});
