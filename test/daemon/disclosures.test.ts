/**
 * Disclosures through the daemon (spec endpoints 19 and 21, CONTRACT 9): each of the
 * four shapes made by the owner and by the operator under a legal obligation, checked
 * by endpoint 21 and by an independent verifier written from CONTRACT 9 alone; any
 * single byte changed makes both fail; every refusal code; bad input to endpoint 21
 * named by the failing check, never a 500.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/model/canonical.js';
import { type Trust, verifyDisclosure } from '../../src/disclosures/verify.js';
import { type IndependentTrust, independentlyVerify } from '../support/independent-verifier.js';
import { type Client, type Daemon, client, decided, refused, startDaemon, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();
let daemon: Daemon;
let dir: string;
let keys: Awaited<ReturnType<typeof writeBook>>;
let op: Client;
let alice: Client;
let bob: Client;
const transfers: string[] = [];
let seqs: number[] = [];
let key = 0;

beforeAll(async () => {
  dir = newDir();
  keys = await writeBook(dir, { alice: 1_000n, bob: 0n, dave: 0n });
  writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0, finalityDepth: 1 } }));
  daemon = await startDaemon({ dataDir: dir });
  op = client(() => daemon.url, keys.operator);
  alice = client(() => daemon.url, keys.customers.alice!);
  bob = client(() => daemon.url, keys.customers.bob!);
  for (const amount of ['100', '50']) {
    const r = await alice.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount }] });
    const done = await decided(alice, r.body.operation_reference);
    expect(done.body.state).toBe('Completed');
    transfers.push(r.body.operation_reference);
    seqs = [...seqs, ...done.body.result.postings];
  }
  // Checkpoint 1 is final; checkpoint 2 (after one more transfer) stays pending.
  expect((await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-1' })).status).toBe(200);
  await op.post('/v1/ops/layer/blocks', { count: 2 });
  const r = await alice.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '1' }] });
  await decided(alice, r.body.operation_reference);
  expect((await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-2' })).body.result.anchoring.checkpoint.status).toBe('pending');
});
afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
});

const aliceAcct = 'did:ledger:acct:alice';
const recipient = { recipient_reference: 'ab'.repeat(32) };

async function make(who: Client, body: Record<string, unknown>) {
  return who.post('/v1/disclosures', body, undefined, { 'client-key': `d-${++key}` });
}

async function trusts(): Promise<{ independent: IndependentTrust; service: Trust }> {
  const clerk = (await alice.get('/v1/clerk')).body;
  const items = ((await alice.get('/v1/checkpoints')).body.items as any[]).reverse();
  const service: Trust = {
    clerkPublicKeyHex: clerk.public_key,
    instance: clerk.instance,
    finalCheckpoint: (n) => items.find((c) => c.number === n && c.status === 'final'),
  };
  return { independent: { clerk: clerk.public_key, instance: clerk.instance, checkpoints: items }, service };
}

/** Both verifiers pass it; each single byte changed (every one here, in process) fails both, and endpoint 21 names the failing check. */
async function expectVerifiable(hex: string): Promise<void> {
  const { independent, service } = await trusts();
  independentlyVerify(hex, independent);
  const online = await alice.get(`/v1/disclosures/verify?disclosure=${hex}`);
  expect(online.body).toEqual({ passed: true, report: expect.stringMatching(/^parse: ok\nsignature: ok\ncheckpoint: ok\nproofs: ok\nassertion: ok/) });
  const bytes = Buffer.from(hex, 'hex');
  for (let i = 0; i < bytes.length; i++) {
    const changed = Buffer.from(bytes);
    changed[i] = changed[i]! ^ 0x01;
    const bad = changed.toString('hex');
    expect(() => independentlyVerify(bad, independent), `byte ${i}`).toThrow();
    expect((await verifyDisclosure(bad, service)).passed, `byte ${i}`).toBe(false);
  }
  for (const i of [0, 17, Math.floor(bytes.length / 2), bytes.length - 3]) {
    const changed = Buffer.from(bytes);
    changed[i] = changed[i]! ^ 0x01;
    const r = await alice.get(`/v1/disclosures/verify?disclosure=${changed.toString('hex')}`);
    expect(r.status).toBe(200);
    expect(r.body.passed).toBe(false);
    expect(r.body.report).toMatch(/: failed: /);
  }
}

const decode = (hex: string) => JSON.parse(Buffer.from(hex, 'hex').toString('utf8'));

describe('POST /v1/disclosures', () => {
  it('discloses that an operation occurred, resting on the latest final checkpoint, with only the subject\'s entries', async () => {
    const r = await make(alice, { subject: aliceAcct, assertion: { shape: 'operation_occurred', operation: transfers[0] }, ...recipient });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ terminal: true, state: 'Completed', result: { disclosure: expect.stringMatching(/^[0-9a-f]+$/) } });
    const d = decode(r.body.result.disclosure);
    expect(d.checkpoint.number).toBe(1);
    expect(d.recipient).toEqual({ reference: 'ab'.repeat(32) });
    expect(d.clerk).toBe(readFileSync(join(dir, 'clerk.pub'), 'utf8').trim());
    expect(d.evidence.map((e: any) => [e.leaf.account, e.leaf.operation])).toEqual([[aliceAcct, transfers[0]]]);
    await expectVerifiable(r.body.result.disclosure);
  });

  it('discloses what an operation moved, a flow bound over a range, and a balance held at the checkpoint', async () => {
    const moved = await make(alice, { subject: aliceAcct, assertion: { shape: 'operation_moved', operation: transfers[1], amount: '50', asset: 'USD' }, ...recipient });
    await expectVerifiable(moved.body.result.disclosure);
    const first = Math.min(...seqs);
    const last = Math.max(...seqs);
    const flows = await make(alice, { subject: aliceAcct, assertion: { shape: 'flows_bound', asset: 'USD', bound: '150', bound_kind: 'at_least', direction: 'out', from_sequence: first, to_sequence: last }, recipient_identity: 'did:ledger:id:bob' });
    expect(decode(flows.body.result.disclosure).evidence).toHaveLength(2);
    await expectVerifiable(flows.body.result.disclosure);
    const holds = await make(alice, { subject: aliceAcct, assertion: { shape: 'holds_at_least', amount: '850', asset: 'USD', kind: 'available' }, checkpoint: 1, ...recipient });
    const d = decode(holds.body.result.disclosure);
    expect(d.evidence.map((e: any) => e.leaf.after.available)).toEqual(['850']);
    await expectVerifiable(holds.body.result.disclosure);
    expect((await alice.get(`/v1/disclosures/verify?disclosure=${holds.body.result.disclosure}`)).body.report).toMatch(/assertion: ok \(completeness rests on the clerk's signature/);
  });

  it('is made by the operator only under a legal obligation, and by no one else', async () => {
    const assertion = { shape: 'holds_at_least', amount: '1', asset: 'USD', kind: 'available' };
    expect(await refused(make(op, { subject: aliceAcct, assertion, ...recipient }))).toEqual({ status: 400, error: 'ERR-JustificationRequired' });
    const r = await make(op, { subject: aliceAcct, assertion, legal_obligation: 'court order 2026/17', ...recipient });
    await expectVerifiable(r.body.result.disclosure);
    expect(await refused(make(bob, { subject: aliceAcct, assertion, ...recipient }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await refused(make(bob, { subject: 'did:ledger:acct:nobody', assertion, ...recipient }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await refused(make(op, { subject: 'did:ledger:acct:nobody', assertion, legal_obligation: 'x', ...recipient }))).toEqual({ status: 404, error: 'ERR-UnknownAccount' });
    expect(await refused(bob.post('/v1/disclosures', { subject: 'did:ledger:acct:bob', assertion, ...recipient }, undefined, { 'on-behalf-of': 'did:ledger:id:alice' }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
  });

  it('refuses what it cannot or will not disclose with the code of CONTRACT 9', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ assertion: { shape: 'net_worth' } }, 400, 'ERR-DisclosureUnsupported'],
      [{ assertion: { shape: 'holds_at_least', amount: '1', asset: 'USD', kind: 'reserved' } }, 400, 'ERR-DisclosureUnsupported'],
      [{ assertion: { shape: 'holds_at_least', amount: '1', asset: 'USD', kind: 'total' } }, 400, 'ERR-DisclosureUnsupported'],
      [{ assertion: { shape: 'holds_at_least', amount: '1', asset: 'USD', kind: 'available', extra: 1 } }, 400, 'ERR-MalformedCommand'],
      [{ assertion: { shape: 'holds_at_least', amount: '0', asset: 'USD', kind: 'available' } }, 400, 'ERR-ZeroAmount'],
      [{ assertion: { shape: 'holds_at_least', amount: '1', asset: 'XYZ', kind: 'available' } }, 404, 'ERR-UnknownAsset'],
      [{ assertion: { shape: 'holds_at_least', amount: '851', asset: 'USD', kind: 'available' }, checkpoint: 1 }, 409, 'ERR-DisclosureFalse'],
      [{ assertion: { shape: 'operation_moved', operation: transfers[1], amount: '51', asset: 'USD' } }, 409, 'ERR-DisclosureFalse'],
      [{ assertion: { shape: 'operation_occurred', operation: 'no-such-op' } }, 409, 'ERR-DisclosureFalse'],
      [{ assertion: { shape: 'flows_bound', asset: 'USD', bound: '149', bound_kind: 'at_most', direction: 'out', from_sequence: 1, to_sequence: 5 } }, 409, 'ERR-DisclosureFalse'],
      [{ assertion: { shape: 'flows_bound', asset: 'USD', bound: '1', bound_kind: 'at_most', direction: 'out', from_sequence: 1, to_sequence: 10_000 } }, 409, 'ERR-NotDisclosable'],
      [{ assertion: { shape: 'holds_at_least', amount: '1', asset: 'USD', kind: 'available' }, checkpoint: 2 }, 409, 'ERR-AnchorNotFinal'],
      [{ assertion: { shape: 'holds_at_least', amount: '1', asset: 'USD', kind: 'available' }, checkpoint: 99 }, 409, 'ERR-AnchorNotFinal'],
    ];
    for (const [body, status, error] of cases) {
      expect(await refused(make(alice, { subject: aliceAcct, ...recipient, ...body })), JSON.stringify(body)).toEqual({ status, error });
    }
    const assertion = { shape: 'holds_at_least', amount: '1', asset: 'USD', kind: 'available' };
    const dave = client(() => daemon.url, keys.customers.dave!);
    expect(await refused(make(dave, { subject: 'did:ledger:acct:dave', assertion, ...recipient }))).toEqual({ status: 409, error: 'ERR-NotDisclosable' });
    for (const r of [{}, { recipient_reference: 'ab'.repeat(32), recipient_identity: 'did:ledger:id:bob' }, { recipient_reference: 'AB'.repeat(32) }, { recipient_identity: 'did:ledger:id:nobody' }, { recipient_identity: 'alice@example.com' }]) {
      expect(await refused(make(alice, { subject: aliceAcct, assertion, ...r })), JSON.stringify(r)).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    }
  });

  it('answers a repeat under its client key with the same disclosure', async () => {
    const body = { subject: aliceAcct, assertion: { shape: 'operation_occurred', operation: transfers[0] }, ...recipient };
    const first = await alice.post('/v1/disclosures', body, undefined, { 'client-key': 'same' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const again = await alice.post('/v1/disclosures', body, undefined, { 'client-key': 'same' });
    expect(again.body).toEqual(first.body);
    expect(await refused(alice.post('/v1/disclosures', { ...body, checkpoint: 1 }, undefined, { 'client-key': 'same' }))).toEqual({ status: 409, error: 'ERR-ClientKeyReused' });
  });
});

describe('GET /v1/disclosures/verify', () => {
  it('names the failing check for bad input, never a 500', async () => {
    const good = (await make(alice, { subject: aliceAcct, assertion: { shape: 'operation_occurred', operation: transfers[0] }, ...recipient })).body.result.disclosure as string;
    const d = decode(good);
    const other = generateKeyPairSync('ed25519');
    const otherPub = other.publicKey.export({ type: 'spki', format: 'der' }).subarray(-32).toString('hex');
    const { signature: _s, ...unsigned } = d;
    const resigned = { ...unsigned, clerk: otherPub };
    const resignedHex = Buffer.from(canonicalJson({ ...resigned, signature: sign(null, Buffer.from(`ledger-disclosure:v1:${canonicalJson(resigned)}`), other.privateKey).toString('hex') })).toString('hex');
    const cases: [string, RegExp][] = [
      ['', /^parse: failed/],
      ['?disclosure=zz', /^parse: failed: the disclosure is not lowercase hex/],
      ['?disclosure=abc', /^parse: failed/],
      [`?disclosure=${good.slice(0, -20)}`, /^parse: failed: the bytes are not JSON/],
      [`?disclosure=${Buffer.from(JSON.stringify(d, null, 1)).toString('hex')}`, /^parse: failed: the bytes are not canonical JSON/],
      [`?disclosure=${Buffer.from('[1]').toString('hex')}`, /^parse: failed/],
      [`?disclosure=ff${good.slice(2)}`, /^parse: failed: the bytes are not UTF-8/],
      [`?disclosure=${resignedHex}`, /^parse: ok\nsignature: failed: the clerk key named is not this deployment's clerk$/],
      ['?disclosure=00', /^parse: failed/],
    ];
    for (const [query, report] of cases) {
      const r = await alice.get(`/v1/disclosures/verify${query}`);
      expect(r.status, query.slice(0, 40)).toBe(200);
      expect(r.body.passed).toBe(false);
      expect(r.body.report, query.slice(0, 40)).toMatch(report);
    }
    // Resting on another deployment's checkpoint: the same clerk, another instance.
    const { service } = await trusts();
    const elsewhere = await verifyDisclosure(good, { ...service, instance: service.instance + 1 });
    expect(elsewhere.report).toMatch(/checkpoint: failed: instance \d+ is another deployment/);
    expect(await refused(alice.get('/v1/disclosures/verify?disclosure=00&x=1'))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
  });
});
