/**
 * The operator audit trail (CONTRACT 13) through a real ledgerd: every member's
 * command (completed or rejected), sign-in and backup is one item, oldest first, with
 * the route's operationId; paged and filtered by member; no other principal's acts; an
 * auditor reads it; the backup carries it.
 */
import { describe, expect, it } from 'vitest';
import { auditEntryItems } from '../../src/auth/audit.js';
import { SoftwareAuthenticator } from '../support/authenticator.js';
import { type Client, client, decided, refusalOf, useDaemon } from './support.js';

// The backup below is read as plain lines: the daemon allows a backup without a recipient.
// No approval rules: root's acts are taken directly beside its members (dual control: approvals.test.ts).
const shared = useDaemon({ alice: 1_000n, bob: 0n }, { backup: { allowPlaintext: true }, approvals: { rules: [] } });
const root = () => shared.as('operator');
const anonymous = client(() => shared.daemon.url, '');
let counter = 0;
const freshKey = () => ({ 'client-key': `audit-${Date.now()}-${++counter}` });
const as = (token: string): Client => client(() => shared.daemon.url, token);

async function decidedRef(api: Client, path: string, body: unknown): Promise<{ ref: string; view: any }> {
  const r = await api.post(path, body, undefined, freshKey());
  expect([200, 202], r.text).toContain(r.status);
  return { ref: r.body.operation_reference, view: (await decided(api, r.body.operation_reference)).body };
}

/** Every item of the trail, following `next` with pages of `limit`. */
async function wholeTrail(api: Client, query = '', limit = 2): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const r = await api.get(`/v1/ops/audit?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(r.status, r.text).toBe(200);
    out.push(...r.body.items);
    if (r.body.next === undefined) return out;
    cursor = r.body.next;
  }
  throw new Error('the trail did not end');
}

describe('the audit trail', () => {
  it('holds one item per member act, oldest first, and none of anyone else', async () => {
    const added = await root().post('/v1/ops/members', { name: 'olga', role: 'operator', scheme: 'api-key' }, undefined, freshKey());
    const auditorAdded = await root().post('/v1/ops/members', { name: 'aud', role: 'auditor', scheme: 'api-key' }, undefined, freshKey());
    const olga = as(added.body.api_key);
    const auditor = as(auditorAdded.body.api_key);
    const transfer = await decidedRef(olga, '/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', amount: '1', asset: 'USD' }] });
    const freeze = await decidedRef(olga, '/v1/accounts/did:ledger:acct:bob/freeze', { justification: 'court order 7\u001b[31m' });
    const again = await decidedRef(olga, '/v1/accounts/did:ledger:acct:bob/freeze', { justification: 'twice' }).catch(() => null);
    // A customer's command is no operator act.
    await decidedRef(shared.as('alice'), '/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', amount: '1', asset: 'USD' }] }).catch(() => null);

    const trail = await wholeTrail(auditor);
    expect(trail.map((i) => i.seq)).toEqual(trail.map((_, n) => n + 1));
    expect(trail.map((i) => [i.member, i.act])).toEqual([
      ['root', 'addMember'],
      ['root', 'addMember'],
      ['olga', 'createTransfer'],
      ['olga', 'freezeAccount'],
      ...(again === null ? [] : [['olga', 'freezeAccount']]),
    ]);
    expect(trail[0]).toMatchObject({ credential: 'did:ledger:cred:operator', operation_reference: added.body.operation_reference, at: expect.any(Number) });
    expect(trail[2]).toEqual({ seq: 3, at: expect.any(Number), member: 'olga', credential: added.body.result.credential, act: 'createTransfer', operation_reference: transfer.ref });
    expect(trail[3]).toMatchObject({ operation_reference: freeze.ref, justification: 'court order 7\u001b[31m' });
    // The member filter, and one page with everything.
    expect((await wholeTrail(auditor, '&member=olga', 1)).map((i) => i.seq)).toEqual(trail.filter((i) => i.member === 'olga').map((i) => i.seq));
    expect((await auditor.get('/v1/ops/audit?limit=1000')).body).toEqual({ items: trail });
    expect((await auditor.get('/v1/ops/audit?member=nobody')).body).toEqual({ items: [] });
  });

  it('records sign-ins and backups, and the backup carries the trail', async () => {
    const auth = new SoftwareAuthenticator();
    const challenge = async (purpose: string) => (await anonymous.post('/v1/auth/challenge', { purpose }, null)).body.challenge as string;
    const added = await root().post('/v1/ops/members', { name: 'pia', role: 'auditor', scheme: 'webauthn-es256', passkey: auth.register(await challenge('register')) }, undefined, freshKey());
    const credential = (await decided(root(), added.body.operation_reference)).body.result.credential;
    const session = await anonymous.post('/v1/auth/passkey', { assertion: auth.assert(await challenge('authenticate')), credential }, null);
    expect(session.status, session.text).toBe(200);
    const backup = await root().get('/v1/ops/backup');
    expect(backup.status).toBe(200);
    const trail = await wholeTrail(root(), '', 1000);
    const last = trail.slice(-3).map((i) => [i.member, i.act, i.credential]);
    expect(last).toEqual([['root', 'addMember', 'did:ledger:cred:operator'], ['pia', 'sign_in', credential], ['root', 'backup', 'did:ledger:cred:operator']]);
    // The backup was taken after its own item was written: it carries the whole trail.
    const auditLines = backup.text.split('\n').filter((line) => line.startsWith('["au/'));
    // A line per stored entry: layout 7 writes a round's items in one chunk.
    const carried = auditLines.flatMap((line) => auditEntryItems(...(JSON.parse(line) as [string, string])));
    expect(carried.map((i) => i.seq)).toEqual(trail.map((i) => i.seq));
  });

  it('records commands decided at once (checkpoints, disclosures) in the batch of their reply, once', async () => {
    const before = (await wholeTrail(root(), '', 1000)).length;
    const key = freshKey();
    const checkpoint = await root().post('/v1/ops/checkpoints', {}, undefined, key);
    expect(checkpoint.status, checkpoint.text).toBe(200);
    expect((await root().post('/v1/ops/checkpoints', {}, undefined, key)).body).toEqual(checkpoint.body);
    expect((await root().post('/v1/ops/layer/blocks', { count: 3 }, undefined, freshKey())).status).toBe(200);
    const disclosure = { subject: 'did:ledger:acct:alice', assertion: { shape: 'holds_at_least', amount: '1', asset: 'USD', kind: 'available' }, legal_obligation: 'subpoena 12\u0007', recipient_reference: 'ab'.repeat(32) };
    let made = await root().post('/v1/disclosures', disclosure, undefined, freshKey());
    for (let i = 0; i < 50 && made.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      made = await root().post('/v1/disclosures', disclosure, undefined, freshKey());
    }
    expect(made.status, made.text).toBe(200);
    const added = (await wholeTrail(root(), '', 1000)).slice(before);
    expect(added.map((i) => [i.member, i.act, i.operation_reference, i.justification ?? null])).toEqual([
      ['root', 'createCheckpoint', checkpoint.body.operation_reference, null],
      ['root', 'createDisclosure', made.body.operation_reference, 'subpoena 12\u0007'],
    ]);
  });

  it('is the operator members\' to read, and refuses a malformed page', async () => {
    expect(refusalOf(await shared.as('alice').get('/v1/ops/audit'))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusalOf(await shared.as('identities').get('/v1/ops/audit'))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    for (const q of ['limit=0', 'limit=1001', 'limit=x', 'cursor=zz', 'cursor=ffffffffffffffff', 'cursor=001fffffffffffff', 'member=Bad%20Name', 'other=1']) {
      expect(refusalOf(await root().get(`/v1/ops/audit?${q}`)), q).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    }
  });
});
