/**
 * Members of the operator (CONTRACT 13) through a real ledgerd: `root` from the book's
 * operator key, members added with roles, the role table (auditor reads only, operator
 * commands, admin members), role changes and removals holding at once, the last admin,
 * and members signing in with passkeys whose sessions carry their role.
 */
import { describe, expect, it } from 'vitest';
import { SoftwareAuthenticator } from '../support/authenticator.js';
import { type Client, client, decided, refusalOf, useDaemon } from './support.js';

// Token lookups remembered a minute: a removal or a role change must hold at once all the same.
// No approval rules: members acts taken directly (dual control: approvals.test.ts).
const shared = useDaemon({ alice: 1_000n, bob: 0n }, { authCacheMs: 60_000, approvals: { rules: [] } });
const root = () => shared.as('operator');
const anonymous = client(() => shared.daemon.url, '');
let counter = 0;
const freshKey = () => ({ 'client-key': `members-${Date.now()}-${++counter}` });
const as = (token: string): Client => client(() => shared.daemon.url, token);
const transfer = { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', amount: '1', asset: 'USD' }] };

/** Submits as `api` and follows the command to its decision: the view. */
async function outcome(api: Client, path: string, body: unknown): Promise<{ status: number; error: string | null; view: any }> {
  const r = await api.post(path, body, undefined, freshKey());
  if (r.status !== 200 && r.status !== 202) return { status: r.status, error: refusalOf(r).error, view: r.body };
  const view = (await decided(api, r.body.operation_reference)).body;
  return { status: r.status, error: view.error?.error ?? null, view: { ...view, api_key: r.body.api_key } };
}

/** Adds an api-key member and answers its credential and key. */
async function addMember(name: string, role: string, by: Client = root()): Promise<{ credential: string; key: string }> {
  const r = await by.post('/v1/ops/members', { name, role, scheme: 'api-key' }, undefined, freshKey());
  expect(r.status, r.text).toBe(200);
  expect(r.body.state).toBe('Completed');
  return { credential: r.body.result.credential, key: r.body.api_key };
}

const memberNamed = async (name: string) => ((await root().get('/v1/ops/members')).body.items as any[]).filter((m) => m.name === name);

describe('members of the operator', () => {
  it('starts with root, the admin whose key is DIR/operator.key', async () => {
    const r = await root().get('/v1/ops/members');
    expect(r.status, r.text).toBe(200);
    expect(r.body.items).toEqual([{ credential: 'did:ledger:cred:operator', name: 'root', role: 'admin', scheme: 'api-key', added_at: expect.any(Number), added_by: null, removed_at: null }]);
  });

  it('adds members with roles; each role reaches what the table gives it and no more', async () => {
    const auditor = await addMember('ann.audit', 'auditor');
    const operator = await addMember('otto_ops-1', 'operator');
    const items = (await root().get('/v1/ops/members')).body.items;
    expect(items.map((m: any) => [m.name, m.role, m.added_by])).toEqual([['ann.audit', 'auditor', 'root'], ['otto_ops-1', 'operator', 'root'], ['root', 'admin', null]]);
    expect((await as(auditor.key).get('/v1/whoami')).body.credential).toBe(auditor.credential);

    // An auditor reads every operator read, and no command, whatever the body or header.
    for (const path of ['/v1/trial-balance', '/v1/ops/members', '/v1/ops/integrating-parties', '/v1/accounts/did:ledger:acct:alice']) expect((await as(auditor.key).get(path)).status, path).toBe(200);
    expect(await outcome(as(auditor.key), '/v1/transfers', transfer)).toMatchObject({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await outcome(as(auditor.key), '/v1/transfers', {})).toMatchObject({ status: 403, error: 'ERR-NotAuthorised' });
    const behalf = await as(auditor.key).post('/v1/transfers', transfer, undefined, { ...freshKey(), 'on-behalf-of': 'did:ledger:id:alice' });
    expect(refusalOf(behalf)).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await outcome(as(auditor.key), '/v1/accounts/did:ledger:acct:bob/freeze', { justification: 'x' })).toMatchObject({ status: 403, error: 'ERR-NotAuthorised' });

    // An operator commands, but manages no members.
    expect(await outcome(as(operator.key), '/v1/transfers', transfer)).toMatchObject({ error: null });
    expect(await outcome(as(operator.key), '/v1/ops/members', { name: 'sneaky', role: 'admin', scheme: 'api-key' })).toMatchObject({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await outcome(as(operator.key), `/v1/ops/members/${operator.credential}/role`, { role: 'admin' })).toMatchObject({ status: 403, error: 'ERR-NotAuthorised' });
    expect((await as(operator.key).get('/v1/ops/backup')).status).toBe(403);
  });

  it('refuses a malformed or taken name, and operator credentials outside the member routes', async () => {
    for (const name of ['', 'Upper', 'a b', 'x'.repeat(65), 'tab\there', 'esc\u001b[31m']) {
      expect(await outcome(root(), '/v1/ops/members', { name, role: 'operator', scheme: 'api-key' }), JSON.stringify(name)).toMatchObject({ status: 400, error: 'ERR-MalformedCommand' });
    }
    expect(await outcome(root(), '/v1/ops/members', { name: 'x', role: 'owner', scheme: 'api-key' })).toMatchObject({ status: 400, error: 'ERR-MalformedCommand' });
    await addMember('taken', 'auditor');
    expect(await outcome(root(), '/v1/ops/members', { name: 'taken', role: 'operator', scheme: 'api-key' })).toMatchObject({ error: 'ERR-InvalidTransition' });
    // A credential of the operator's set that is no member: refused (it would carry no name and no role).
    expect(await outcome(root(), '/v1/credentials', { marker: 'ordinary', scheme: 'api-key' })).toMatchObject({ status: 403, error: 'ERR-NotAuthorised' });
    // Nor may the identities principal slip a credential into the operator's set on its behalf.
    const slipped = await shared.as('identities').post('/v1/credentials', { marker: 'ordinary', scheme: 'api-key' }, undefined, { ...freshKey(), 'on-behalf-of': 'did:ledger:id:operator' });
    expect(slipped.status === 403 ? 'ERR-NotAuthorised' : (await decided(root(), slipped.body.operation_reference)).body.error?.error).toBe('ERR-NotAuthorised');
    expect(slipped.body.api_key ?? null).toBeNull();
    // Not the operator: no members.
    expect(await outcome(shared.as('alice'), '/v1/ops/members', { name: 'mallory', role: 'admin', scheme: 'api-key' })).toMatchObject({ status: 403, error: 'ERR-NotAuthorised' });
    expect((await shared.as('alice').get('/v1/ops/members')).status).toBe(403);
  });

  it('changes a role and removes a member, holding at once; a removed name may be used again', async () => {
    const m = await addMember('rotating', 'operator');
    expect((await as(m.key).get('/v1/trial-balance')).status).toBe(200);
    expect(await outcome(as(m.key), '/v1/transfers', transfer)).toMatchObject({ error: null });
    expect(await outcome(root(), `/v1/ops/members/${m.credential}/role`, { role: 'auditor' })).toMatchObject({ error: null });
    expect(await outcome(as(m.key), '/v1/transfers', transfer)).toMatchObject({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await outcome(root(), `/v1/ops/members/${m.credential}/remove`, {})).toMatchObject({ error: null });
    expect(refusalOf(await as(m.key).get('/v1/whoami'))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect(refusalOf(await as(m.key).get('/v1/trial-balance'))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect((await memberNamed('rotating'))[0]).toMatchObject({ removed_at: expect.any(Number), role: 'auditor' });
    // Removed already: no second removal, no role.
    expect(await outcome(root(), `/v1/ops/members/${m.credential}/remove`, {})).toMatchObject({ error: 'ERR-NotAuthorised' });
    expect(await outcome(root(), `/v1/ops/members/${m.credential}/role`, { role: 'admin' })).toMatchObject({ error: 'ERR-NotAuthorised' });
    const again = await addMember('rotating', 'auditor');
    expect(again.credential).not.toBe(m.credential);
    expect(await memberNamed('rotating')).toHaveLength(2);
  });

  it('keeps the last live admin: root may neither remove nor demote itself alone; with a second admin it may retire', async () => {
    expect(await outcome(root(), '/v1/ops/members/did:ledger:cred:operator/remove', {})).toMatchObject({ error: 'ERR-InvalidTransition' });
    expect(await outcome(root(), '/v1/ops/members/did:ledger:cred:operator/role', { role: 'operator' })).toMatchObject({ error: 'ERR-InvalidTransition' });
    const admin = await addMember('second-admin', 'admin');
    // The new admin retires root: its key (DIR/operator.key) stops working at once.
    expect(await outcome(as(admin.key), '/v1/ops/members/did:ledger:cred:operator/remove', {})).toMatchObject({ error: null });
    expect(refusalOf(await root().get('/v1/whoami'))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect(await outcome(as(admin.key), `/v1/ops/members/${admin.credential}/remove`, {})).toMatchObject({ error: 'ERR-InvalidTransition' });
    // The new admin runs the book: members, commands.
    const next = await addMember('after-root', 'operator', as(admin.key));
    expect(await outcome(as(next.key), '/v1/transfers', transfer)).toMatchObject({ error: null });
    const items = (await as(admin.key).get('/v1/ops/members')).body.items;
    expect(items.find((m: any) => m.name === 'after-root').added_by).toBe('second-admin');
    expect(items.find((m: any) => m.name === 'root').removed_at).toEqual(expect.any(Number));
    // Settlement's own intake, submitted under root's credential, goes on without root.
    expect((await as(admin.key).post('/v1/ops/settlement/sync', {}, undefined, freshKey())).status).toBeLessThan(300);
    adminKey = admin.key;
  });

  it('signs a passkey member in; its session carries its role and dies with its removal', async () => {
    const admin = as(adminKey);
    const auth = new SoftwareAuthenticator();
    const challenge = async (purpose: string) => (await anonymous.post('/v1/auth/challenge', { purpose }, null)).body.challenge as string;
    const added = await admin.post('/v1/ops/members', { name: 'pat.passkey', role: 'auditor', scheme: 'webauthn-es256', passkey: auth.register(await challenge('register')) }, undefined, freshKey());
    expect(added.status, added.text).toBeLessThan(300);
    const credential = (await decided(admin, added.body.operation_reference)).body.result.credential as string;
    const signIn = () => challenge('authenticate').then((c) => anonymous.post('/v1/auth/passkey', { assertion: auth.assert(c), credential }, null));
    const session = await signIn();
    expect(session.status, session.text).toBe(200);
    const token = session.body.session as string;
    const who = await as(token).get('/v1/whoami');
    expect(who.body).toMatchObject({ principal: 'did:ledger:id:operator', credential, scheme: 'webauthn-es256' });
    expect((await as(token).get('/v1/trial-balance')).status).toBe(200);
    expect(await outcome(as(token), '/v1/transfers', transfer)).toMatchObject({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await outcome(admin, `/v1/ops/members/${credential}/remove`, {})).toMatchObject({ error: null });
    expect(refusalOf(await as(token).get('/v1/whoami'))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect(refusalOf(await signIn())).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
  });
});

let adminKey = '';
