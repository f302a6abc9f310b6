/**
 * Dual control (CONTRACT 13) through a real ledgerd: the policy from config and its read
 * route, ERR-ApprovalRequired for covered acts sent directly (and the bootstrap while no
 * other member could approve), proposals checked at submission, approved or rejected by
 * another member only, the act taken under `proposal:<id>` with both authorities on its
 * postings, expiry on the daemon's clock, the per-member bound, and the attacks: self-approval
 * through a second session, a request made invalid before approval, approve racing reject,
 * the auditor's ways around its role, the last admin, control characters.
 */
import { describe, expect, it } from 'vitest';
import { SoftwareAuthenticator } from '../support/authenticator.js';
import { type Client, addConfig, client, decided, refusalOf, repoRoot, startDaemon, useDaemon, useTempDirs, writeBook } from './support.js';

const ttlMs = 3_600_000;
const policy = { rules: ['members', 'policy', 'backup', 'legal_disclosure', 'freeze', 'close', 'issuance_above'], issuanceAboveMinor: { USD: '100' }, ttlMs };
const shared = useDaemon({ alice: 1_000n, bob: 0n, carol: 0n, dave: 0n }, { approvals: policy, authCacheMs: 60_000, settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0, finalityDepth: 1 } }, {
  NODE_OPTIONS: `--import ${repoRoot}test/support/clock-shift.mjs`,
  LEDGERD_TEST_CLOCK_STEP_MS: String(ttlMs + 1000),
});
const root = () => shared.as('operator');
const as = (token: string): Client => client(() => shared.daemon.url, token);
const anonymous = client(() => shared.daemon.url, '');
let counter = 0;
const freshKey = () => ({ 'client-key': `approvals-${++counter}` });
const acct = (name: string) => `did:ledger:acct:${name}`;
const freeze = (name: string) => ({ method: 'POST', path: `/v1/accounts/${acct(name)}/freeze`, body: { justification: `freeze ${name}` } });

async function addMember(name: string, role: string): Promise<{ credential: string; key: string; api: Client }> {
  const r = await root().post('/v1/ops/members', { name, role, scheme: 'api-key' }, undefined, freshKey());
  expect(r.status, r.text).toBe(200);
  return { credential: r.body.result.credential, key: r.body.api_key, api: as(r.body.api_key) };
}

/** Proposes `request` as `api`: the proposal's id once decided. */
async function propose(api: Client, request: unknown, justification = 'four eyes'): Promise<string> {
  const r = await api.post('/v1/ops/proposals', { request, justification }, undefined, freshKey());
  expect(r.status, r.text).toBeLessThan(300);
  const view = (await decided(api, r.body.operation_reference)).body;
  expect(view.state, JSON.stringify(view)).toBe('Completed');
  return view.result.proposal as string;
}

const proposalOf = async (id: string) => (await root().get(`/v1/ops/proposals/${id}`)).body;
const accountOf = async (name: string) => (await root().get(`/v1/accounts/${acct(name)}`)).body;

let ada: Awaited<ReturnType<typeof addMember>>;
let ben: Awaited<ReturnType<typeof addMember>>;
let ann: Awaited<ReturnType<typeof addMember>>;

describe('the approval policy', () => {
  it('is the config\'s, read by every member and no one else', async () => {
    const r = await root().get('/v1/ops/approvals/policy');
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ rules: policy.rules, issuanceAboveMinor: { USD: '100' }, ttlMs });
    expect((await shared.as('alice').get('/v1/ops/approvals/policy')).status).toBe(403);
  });

  it('lets root alone take covered acts (no one could approve them), marked on the trail', async () => {
    const r = await root().post(`/v1/accounts/${acct('dave')}/freeze`, { justification: 'bootstrap' }, undefined, freshKey());
    expect(r.status, r.text).toBeLessThan(300);
    expect((await decided(root(), r.body.operation_reference)).body.state).toBe('Completed');
    const trail = (await root().get('/v1/ops/audit?limit=1000')).body.items;
    expect(trail.find((i: any) => i.operation_reference === r.body.operation_reference)).toMatchObject({ act: 'freezeAccount', member: 'root', approval: 'none available' });
    // Not covered: no mark (unfreezing is the freeze rule's).
    const open = await root().post('/v1/transfers', { legs: [{ from: acct('alice'), to: acct('carol'), amount: '1', asset: 'USD' }] }, undefined, freshKey());
    const thaw = await root().post(`/v1/accounts/${acct('dave')}/unfreeze`, { justification: 'bootstrap' }, undefined, freshKey());
    expect((await decided(root(), thaw.body.operation_reference)).body.state).toBe('Completed');
    await decided(root(), open.body.operation_reference);
    expect((await root().get('/v1/ops/audit?limit=1000')).body.items.find((i: any) => i.operation_reference === open.body.operation_reference).approval).toBeUndefined();
  });

  it('refuses a covered act sent directly once another member could approve it: ERR-ApprovalRequired, nothing stored', async () => {
    // Root alone adds members until a second admin could approve them.
    ben = await addMember('ben', 'operator');
    ann = await addMember('ann', 'auditor');
    ada = await addMember('ada', 'admin');
    // Ben, an operator, could not approve a members act: root took each directly, marked so.
    const adds = (await root().get('/v1/ops/audit?limit=1000')).body.items.filter((i: any) => i.act === 'addMember');
    expect(adds.map((i: any) => [i.member, i.approval])).toEqual([['root', 'none available'], ['root', 'none available'], ['root', 'none available']]);
    const before = (await root().get('/v1/ops/audit?limit=1000')).body.items.length;
    const r = await root().post(`/v1/accounts/${acct('bob')}/freeze`, { justification: 'direct' }, undefined, freshKey());
    expect(refusalOf(r)).toEqual({ status: 403, error: 'ERR-ApprovalRequired' });
    expect(r.body.description).toContain('freeze');
    expect((await accountOf('bob')).status).toBe('active');
    expect((await root().get('/v1/ops/audit?limit=1000')).body.items.length).toBe(before);
    // Members need an admin to approve: ben the operator cannot, ada can.
    expect(refusalOf(await ada.api.post('/v1/ops/members', { name: 'cy', role: 'operator', scheme: 'api-key' }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-ApprovalRequired' });
    // A backup is an admin's, covered by default: refused while another admin could approve it.
    expect(refusalOf(await root().get('/v1/ops/backup?recipient=age19xmxjfvwkf7sdyh0wm63kadu3p324kthjwssf7u0zh9nl29qxshql6ulqe'))).toEqual({ status: 403, error: 'ERR-ApprovalRequired' });
    // The policy changes only by a proposal.
    expect(refusalOf(await ada.api.post('/v1/ops/approvals/policy', { rules: [] }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-ApprovalRequired' });
    // The role check comes first.
    expect(refusalOf(await ann.api.post(`/v1/accounts/${acct('bob')}/freeze`, { justification: 'x' }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    // issuance_above: a treasury's transfer above the asset's threshold; at or below it, no approval.
    const issue = (amount: string) => root().post('/v1/transfers', { legs: [{ from: acct('treasury-USD'), to: acct('alice'), amount, asset: 'USD' }] }, undefined, freshKey());
    expect(refusalOf(await issue('101'))).toEqual({ status: 403, error: 'ERR-ApprovalRequired' });
    const small = await issue('100');
    expect(small.status === 403 ? refusalOf(small).error : 'taken').not.toBe('ERR-ApprovalRequired');
    // In a batch, item by item, as if each were sent alone.
    const batch = await root().post('/v1/batches', { commands: [101, 100].map((n) => ({ command: 'transfer', body: { legs: [{ from: acct('treasury-USD'), to: acct('alice'), amount: String(n), asset: 'USD' }] } })) });
    expect(batch.status, batch.text).toBeLessThan(300);
    expect(batch.body.items[0]).toMatchObject({ error: 'ERR-ApprovalRequired' });
    expect(batch.body.items[1].error).not.toBe('ERR-ApprovalRequired');
    // A transfer between customers is no issuance.
    const moved = await root().post('/v1/transfers', { legs: [{ from: acct('alice'), to: acct('bob'), amount: '500', asset: 'USD' }] }, undefined, freshKey());
    expect(moved.status, moved.text).toBeLessThan(300);
  });
});

describe('proposals', () => {
  it('checks the request at submission as its route would: malformed, unknown, not the proposer\'s to send', async () => {
    const listed = async () => (await root().get('/v1/ops/proposals')).body.items.length;
    const before = await listed();
    const refused = async (api: Client, request: unknown, justification: unknown = 'x') => refusalOf(await api.post('/v1/ops/proposals', { request, justification }, undefined, freshKey()));
    expect(await refused(ben.api, { method: 'POST', path: `/v1/accounts/${acct('bob')}/freeze`, body: { justification: 'x', extra: 1 } })).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(await refused(ben.api, { method: 'POST', path: `/v1/accounts/${acct('bob')}/freeze`, body: {} })).toEqual({ status: 400, error: 'ERR-JustificationRequired' });
    expect(await refused(ben.api, { method: 'POST', path: '/v1/transfers', body: { legs: [{ from: acct('nobody'), to: acct('bob'), amount: '1', asset: 'USD' }] } })).toMatchObject({ error: 'ERR-UnknownAccount' });
    expect(await refused(ben.api, { method: 'POST', path: '/v1/no-such-route', body: {} })).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(await refused(ben.api, { method: 'GET', path: '/v1/trial-balance', body: {} })).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(await refused(ben.api, { method: 'POST', path: '/v1/batches', body: { commands: [] } })).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(await refused(ben.api, freeze('bob'), '   ')).toEqual({ status: 400, error: 'ERR-JustificationRequired' });
    // No proposal of proposals or their decisions, of ceremonies, or by a path spelt around the check.
    for (const path of ['/v1/ops/proposals', '/v1/ops/proposals/did:ledger:proposal:00/approve', '/v1/ops/x/../proposals', '/v1/ops/%70roposals', '/v1/auth/challenge', '/v1/ops//proposals']) {
      expect(await refused(ben.api, { method: 'POST', path, body: { purpose: 'register', request: freeze('bob'), justification: 'x' } }), path).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    }
    // An operator proposes no admin's act: the route's role is checked as for the proposer.
    expect(await refused(ben.api, { method: 'POST', path: '/v1/ops/members', body: { name: 'cy', role: 'admin', scheme: 'api-key' } })).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    // An api-key member is never proposed: its key would be drawn at approval and reach the approver, not the member.
    for (const body of [{ name: 'cy', role: 'auditor', scheme: 'api-key' }, { name: 'cy', role: 'auditor', scheme: 'api-key', reference: 1 }]) {
      const r = await ada.api.post('/v1/ops/proposals', { request: { method: 'POST', path: '/v1/ops/members', body }, justification: 'x' }, undefined, freshKey());
      expect(refusalOf(r)).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
      expect(r.body.description).toMatch(/api-key member cannot be added by a proposal.*webauthn-es256.*scheme key/);
    }
    // An auditor proposes nothing, and reaches no command by a batch or on-behalf-of either.
    expect(await refused(ann.api, freeze('bob'))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusalOf(await ann.api.post('/v1/batches', { commands: [{ command: 'transfer', body: { legs: [{ from: acct('alice'), to: acct('bob'), amount: '1', asset: 'USD' }] } }] }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusalOf(await ann.api.post('/v1/transfers', { legs: [{ from: acct('alice'), to: acct('bob'), amount: '1', asset: 'USD' }] }, undefined, { ...freshKey(), 'on-behalf-of': 'did:ledger:id:alice' }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    // A forged dispatch ticket is an unknown credential.
    expect(refusalOf(await anonymous.post(`/v1/accounts/${acct('bob')}/freeze`, { justification: 'x' }, null, { 'x-ledgerd-dispatch': 'f'.repeat(64) }))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect(await listed()).toBe(before);
    expect((await accountOf('bob')).status).toBe('active');
  });

  it('is approved by another member only; the act goes under proposal:<id>, its postings naming both', async () => {
    const id = await propose(ben.api, freeze('bob'), 'suspicious \u001b[31m activity');
    expect(id).toMatch(/^did:ledger:proposal:[0-9a-f]{32}$/);
    const shown = await proposalOf(id);
    expect(shown).toEqual({ proposal: id, request: freeze('bob'), justification: 'suspicious \u001b[31m activity', proposer: 'ben', proposed_at: expect.any(Number), state: 'open' });
    const approve = (api: Client) => api.post(`/v1/ops/proposals/${id}/approve`, {}, undefined, freshKey());
    expect(refusalOf(await approve(ben.api))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusalOf(await approve(ann.api))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    const r = await approve(root());
    expect(r.status, r.text).toBeLessThan(300);
    expect(r.body.result.operation).toBe(r.body.operation_reference);
    const act = (await decided(root(), r.body.operation_reference)).body;
    expect(act).toMatchObject({ state: 'Completed', client_key: `proposal:${id.slice('did:ledger:proposal:'.length)}` });
    expect(r.body.client_key).not.toBe(act.client_key);
    expect((await accountOf('bob')).status).toBe('frozen');
    expect(await proposalOf(id)).toMatchObject({ state: 'approved', decided_by: 'root', decided_at: expect.any(Number), operation_reference: r.body.operation_reference });
    expect(refusalOf(await approve(ada.api))).toEqual({ status: 409, error: 'ERR-OperationTerminal' });
    const trail = (await root().get('/v1/ops/audit?limit=1000')).body.items;
    expect(trail.filter((i: any) => i.proposal === id).map((i: any) => [i.member, i.act, i.approval ?? null])).toEqual([
      ['ben', 'createProposal', null],
      ['root', 'approveProposal', null],
      ['ben', 'freezeAccount', 'root'],
    ]);
    expect(trail.find((i: any) => i.act === 'freezeAccount' && i.proposal === id).justification).toBe('suspicious \u001b[31m activity');

    // A transfer by proposal: each posting lists the proposer's authority, then the approver's.
    const pay = await propose(ben.api, { method: 'POST', path: '/v1/transfers', body: { legs: [{ from: acct('alice'), to: acct('carol'), amount: '7', asset: 'USD' }], reference: { invoice: 7 } } });
    const paid = await ada.api.post(`/v1/ops/proposals/${pay}/approve`, {}, undefined, freshKey());
    expect(paid.status, paid.text).toBeLessThan(300);
    expect((await decided(root(), paid.body.operation_reference)).body.state).toBe('Completed');
    const moves = (await root().get(`/v1/movements?account=${acct('carol')}&limit=10`)).body.movements;
    const posting = moves.find((m: any) => m.operation === paid.body.operation_reference);
    expect(posting.authorities.map((a: any) => [a.credential, a.kind])).toEqual([[ben.credential, 'operator'], [ada.credential, 'operator']]);
    // The same approver's retry is a repeat, not a second act; another member's is refused.
    const again = await ada.api.post(`/v1/ops/proposals/${pay}/approve`, {}, undefined, freshKey());
    expect(again.body.operation_reference, again.text).toBe(paid.body.operation_reference);
    expect(again.body.result.operation).toBe(paid.body.operation_reference);
    expect(refusalOf(await root().post(`/v1/ops/proposals/${pay}/approve`, {}, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-OperationTerminal' });
    expect((await root().get(`/v1/movements?account=${acct('carol')}&limit=10`)).body.movements.filter((m: any) => m.operation === paid.body.operation_reference)).toHaveLength(1);
  });

  it('is rejected by a member who could approve it or withdrawn by its proposer; reasons stored as given', async () => {
    const id = await propose(ben.api, freeze('carol'));
    const reject = (api: Client, reason: unknown) => api.post(`/v1/ops/proposals/${id}/reject`, { reason }, undefined, freshKey());
    expect(refusalOf(await reject(ann.api, 'no'))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusalOf(await reject(ada.api, ''))).toEqual({ status: 400, error: 'ERR-JustificationRequired' });
    const r = await reject(ada.api, 'not\u0007 \u009b2J enough\r\n');
    expect((await decided(ada.api, r.body.operation_reference)).body.state).toBe('Completed');
    const shown = await root().get(`/v1/ops/proposals/${id}`);
    expect(shown.body).toMatchObject({ state: 'rejected', decided_by: 'ada', reason: 'not\u0007 \u009b2J enough\r\n' });
    expect(shown.text).not.toContain('\u0007');
    expect(refusalOf(await ada.api.post(`/v1/ops/proposals/${id}/approve`, {}, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-OperationTerminal' });
    const second = await reject(ada.api, 'again');
    expect((await decided(ada.api, second.body.operation_reference)).body.error.error).toBe('ERR-OperationTerminal');
    expect((await accountOf('carol')).status).toBe('active');

    const own = await propose(ben.api, freeze('carol'));
    const withdrawn = await ben.api.post(`/v1/ops/proposals/${own}/reject`, { reason: 'my mistake' }, undefined, freshKey());
    expect((await decided(ben.api, withdrawn.body.operation_reference)).body.state).toBe('Completed');
    expect(await proposalOf(own)).toMatchObject({ state: 'rejected', decided_by: 'ben' });
    expect(refusalOf(await root().get('/v1/ops/proposals/did:ledger:proposal:0123'))).toEqual({ status: 404, error: 'ERR-UnknownOperation' });
  });

  it('lists newest first, by state, in pages', async () => {
    const all = (await root().get('/v1/ops/proposals?limit=200')).body.items;
    expect(all.map((p: any) => p.proposed_at)).toEqual([...all.map((p: any) => p.proposed_at)].sort((a, b) => b - a));
    const page = await ann.api.get('/v1/ops/proposals?limit=1&state=rejected');
    expect(page.status, page.text).toBe(200);
    expect(page.body.items).toHaveLength(1);
    expect(page.body.items[0].state).toBe('rejected');
    const next = await ann.api.get(`/v1/ops/proposals?limit=1&state=rejected&cursor=${page.body.next}`);
    expect(next.body.items[0].state).toBe('rejected');
    expect(next.body.items[0].proposal).not.toBe(page.body.items[0].proposal);
    expect(refusalOf(await root().get('/v1/ops/proposals?limit=0'))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(refusalOf(await root().get('/v1/ops/proposals?state=closed'))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
  });

  it('settles approve racing reject: one wins whole, the other is ERR-OperationTerminal', async () => {
    for (let i = 0; i < 3; i++) {
      const id = await propose(ben.api, freeze('carol'));
      const [approved, rejected] = await Promise.all([
        root().post(`/v1/ops/proposals/${id}/approve`, {}, undefined, freshKey()),
        ada.api.post(`/v1/ops/proposals/${id}/reject`, { reason: 'race' }, undefined, freshKey()),
      ]);
      const rejectOutcome = rejected.status < 300 ? (await decided(ada.api, rejected.body.operation_reference)).body : null;
      const approveOutcome = approved.status < 300 ? (await decided(root(), approved.body.operation_reference)).body : null;
      const shown = await proposalOf(id);
      const frozen = (await accountOf('carol')).status === 'frozen';
      if (shown.state === 'approved') {
        expect(approveOutcome?.state).toBe('Completed');
        expect(rejectOutcome?.error?.error ?? refusalOf(rejected).error).toBe('ERR-OperationTerminal');
        expect(frozen).toBe(true);
        const back = await propose(ben.api, { method: 'POST', path: `/v1/accounts/${acct('carol')}/unfreeze`, body: { justification: 'race over' } });
        await decided(root(), (await root().post(`/v1/ops/proposals/${back}/approve`, {}, undefined, freshKey())).body.operation_reference);
      } else {
        expect(shown.state).toBe('rejected');
        expect(rejectOutcome?.state).toBe('Completed');
        expect(approveOutcome === null ? refusalOf(approved).error : approveOutcome.error?.error).toBe('ERR-OperationTerminal');
        expect(frozen).toBe(false);
      }
    }
  });

  it('decides an approval whose request became invalid like any command: never half', async () => {
    const close = await propose(ben.api, { method: 'POST', path: `/v1/accounts/${acct('dave')}/close`, body: {} });
    const freezeDave = await propose(ben.api, freeze('dave'));
    const closed = await root().post(`/v1/ops/proposals/${close}/approve`, {}, undefined, freshKey());
    expect((await decided(root(), closed.body.operation_reference)).body.state).toBe('Completed');
    expect((await accountOf('dave')).status).toBe('closed');
    const r = await root().post(`/v1/ops/proposals/${freezeDave}/approve`, {}, undefined, freshKey());
    if (r.status < 300) {
      // Acknowledged: the act is decided Rejected and the proposal stands approved with it.
      expect((await decided(root(), r.body.operation_reference)).body).toMatchObject({ state: 'Rejected', error: { error: 'ERR-AccountClosed' } });
      expect(await proposalOf(freezeDave)).toMatchObject({ state: 'approved', operation_reference: r.body.operation_reference });
    } else {
      // Refused as its route refuses it now: nothing taken, the proposal still open.
      expect(refusalOf(r).error).toBe('ERR-AccountClosed');
      expect((await proposalOf(freezeDave)).state).toBe('open');
    }
    expect((await accountOf('dave')).status).toBe('closed');
  });

  it('takes a disclosure under a legal obligation by a proposal, decided at once when approved', async () => {
    expect((await root().post('/v1/ops/checkpoints', {}, undefined, freshKey())).status).toBe(200);
    await root().post('/v1/ops/layer/blocks', { count: 2 });
    const body = { subject: acct('alice'), assertion: { shape: 'holds_at_least', amount: '1', asset: 'USD', kind: 'available' }, legal_obligation: 'court order \u001b]0;owned\u0007', recipient_reference: 'ab'.repeat(32) };
    expect(refusalOf(await ben.api.post('/v1/disclosures', body, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-ApprovalRequired' });
    // Without the obligation it is no legal disclosure: the route's own refusal, checked at submission.
    const { legal_obligation: _, ...plain } = body;
    expect(refusalOf(await ben.api.post('/v1/ops/proposals', { request: { method: 'POST', path: '/v1/disclosures', body: plain }, justification: 'x' }, undefined, freshKey()))).toEqual({ status: 400, error: 'ERR-JustificationRequired' });
    const id = await propose(ben.api, { method: 'POST', path: '/v1/disclosures', body }, 'subpoena');
    const r = await ada.api.post(`/v1/ops/proposals/${id}/approve`, {}, undefined, freshKey());
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ state: 'Completed', result: { disclosure: expect.any(String), operation: r.body.operation_reference } });
    expect(await proposalOf(id)).toMatchObject({ state: 'approved', decided_by: 'ada', operation_reference: r.body.operation_reference });
    const trail = (await root().get('/v1/ops/audit?limit=1000')).body.items.filter((i: any) => i.proposal === id);
    expect(trail.map((i: any) => [i.member, i.act, i.approval ?? null, i.justification ?? null])).toEqual([
      ['ben', 'createProposal', null, 'subpoena'],
      ['ada', 'approveProposal', null, null],
      ['ben', 'createDisclosure', 'ada', 'subpoena'],
    ]);
    expect(refusalOf(await root().post(`/v1/ops/proposals/${id}/approve`, {}, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-OperationTerminal' });
  });

  it('refuses self-approval through a second session of the same member', async () => {
    const auth = new SoftwareAuthenticator();
    const challenge = async (purpose: string) => (await anonymous.post('/v1/auth/challenge', { purpose }, null)).body.challenge as string;
    const added = await propose(ada.api, { method: 'POST', path: '/v1/ops/members', body: { name: 'pat', role: 'admin', scheme: 'webauthn-es256', passkey: auth.register(await challenge('register')) } });
    const made = await root().post(`/v1/ops/proposals/${added}/approve`, {}, undefined, freshKey());
    const credential = (await decided(root(), made.body.operation_reference)).body.result.credential as string;
    // The approver's retry is a repeat (its reply again), though the passkey's challenge was taken by the first.
    const retried = await root().post(`/v1/ops/proposals/${added}/approve`, {}, undefined, freshKey());
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body.operation_reference).toBe(made.body.operation_reference);
    const session = async () => (await anonymous.post('/v1/auth/passkey', { assertion: auth.assert(await challenge('authenticate')), credential }, null)).body.session as string;
    const first = as(await session());
    const second = as(await session());
    const id = await propose(first, freeze('carol'));
    expect(refusalOf(await second.post(`/v1/ops/proposals/${id}/approve`, {}, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(refusalOf(await first.post(`/v1/ops/proposals/${id}/approve`, {}, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    const withdrawn = await second.post(`/v1/ops/proposals/${id}/reject`, { reason: 'withdrawn' }, undefined, freshKey());
    expect((await decided(second, withdrawn.body.operation_reference)).body.state).toBe('Completed');
    patCredential = credential;
  });

  it('keeps the last admin: with no other admin, removing itself is taken directly and refused', async () => {
    // Root, pat and ada are admins; pat and ada go by proposals, leaving root the last.
    for (const who of [patCredential, ada.credential]) {
      const id = await propose(root(), { method: 'POST', path: `/v1/ops/members/${who}/remove`, body: {} });
      // Ada approves even her own removal: root proposed it.
      const r = await ada.api.post(`/v1/ops/proposals/${id}/approve`, {}, undefined, freshKey());
      expect(r.status, r.text).toBeLessThan(300);
      expect((await decided(root(), r.body.operation_reference)).body.state).toBe('Completed');
    }
    const r = await root().post('/v1/ops/members/did:ledger:cred:operator/remove', {}, undefined, freshKey());
    expect(r.status, r.text).toBeLessThan(300);
    expect((await decided(root(), r.body.operation_reference)).body.error.error).toBe('ERR-InvalidTransition');
    expect((await root().get('/v1/whoami')).status).toBe(200);
  });

  it('bounds open proposals per member (ERR-BoundExceeded); expired ones no longer count', async () => {
    for (let i = 0; i < 64; i++) {
      const r = await ben.api.post('/v1/ops/proposals', { request: freeze('alice'), justification: `flood ${i}` }, undefined, freshKey());
      expect(r.status, r.text).toBeLessThan(300);
    }
    const over = await ben.api.post('/v1/ops/proposals', { request: freeze('alice'), justification: 'one too many' }, undefined, freshKey());
    const outcome = (await decided(ben.api, over.body.operation_reference)).body;
    expect(outcome.error.error).toBe('ERR-BoundExceeded');
    // Another member is not held back by ben's flood.
    await propose(root(), freeze('alice'));
    const open = (await root().get('/v1/ops/proposals?state=open&limit=200')).body.items.filter((p: any) => p.proposer === 'ben');
    // Past ttlMs on the daemon's clock every one of them is expired, approvable no more, and ben proposes again.
    const before = shared.daemon.stderr.length;
    shared.daemon.process.kill('SIGUSR2');
    await expect.poll(() => shared.daemon.stderr.slice(before).some((l) => l.startsWith('test clock:'))).toBe(true);
    expect((await proposalOf(open[0].proposal)).state).toBe('expired');
    expect((await root().get('/v1/ops/proposals?state=open&limit=200')).body.items.filter((p: any) => p.proposer === 'ben')).toHaveLength(0);
    expect(refusalOf(await root().post(`/v1/ops/proposals/${open[0].proposal}/approve`, {}, undefined, freshKey()))).toEqual({ status: 409, error: 'ERR-OperationTerminal' });
    // Listed as expired, undecided; withdrawing one is too late as well.
    const expired = (await root().get('/v1/ops/proposals?state=expired&limit=200')).body.items.filter((p: any) => p.proposer === 'ben');
    expect(expired.map((p: any) => p.proposal).sort()).toEqual(open.map((p: any) => p.proposal).sort());
    expect(expired[0].decided_by).toBeUndefined();
    const late = await ben.api.post(`/v1/ops/proposals/${open[1].proposal}/reject`, { reason: 'too late' }, undefined, freshKey());
    expect((await decided(ben.api, late.body.operation_reference)).body.error.error).toBe('ERR-OperationTerminal');
    expect((await proposalOf(open[1].proposal)).state).toBe('expired');
    await propose(ben.api, freeze('alice'));
    expect((await accountOf('alice')).status).toBe('active');
  });
});

let patCredential = '';

describe('proposals and the policy across restarts', () => {
  const dirs = useTempDirs();

  it('keeps an open proposal, approves it after a restart, and keeps the book\'s policy over a changed config', async () => {
    const dir = dirs();
    const keys = await writeBook(dir, { alice: 10n, bob: 0n });
    addConfig(dir, { approvals: { rules: ['freeze'] } });
    let daemon = await startDaemon({ dataDir: dir });
    const api = (token: string) => client(() => daemon.url, token);
    try {
      const added = await api(keys.operator).post('/v1/ops/members', { name: 'ben', role: 'operator', scheme: 'api-key' }, undefined, freshKey());
      const ben = api(added.body.api_key);
      expect(refusalOf(await api(keys.operator).post(`/v1/accounts/${acct('bob')}/freeze`, { justification: 'x' }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-ApprovalRequired' });
      const id = await propose(ben, freeze('bob'));
      expect(await daemon.stop()).toBe(0);
      // The config now asks for no rules: the book's policy stands, changed only by an approved proposal.
      addConfig(dir, { approvals: { rules: [] } });
      daemon = await startDaemon({ dataDir: dir });
      expect((await api(keys.operator).get('/v1/ops/approvals/policy')).body.rules).toEqual(['freeze']);
      expect((await api(keys.operator).get(`/v1/ops/proposals/${id}`)).body.state).toBe('open');
      const r = await api(keys.operator).post(`/v1/ops/proposals/${id}/approve`, {}, undefined, freshKey());
      expect(r.status, r.text).toBeLessThan(300);
      expect((await decided(api(keys.operator), r.body.operation_reference)).body.state).toBe('Completed');
      expect(await daemon.stop()).toBe(0);
      daemon = await startDaemon({ dataDir: dir });
      expect((await api(keys.operator).get(`/v1/ops/proposals/${id}`)).body).toMatchObject({ state: 'approved', decided_by: 'root', operation_reference: r.body.operation_reference });
      expect((await api(keys.operator).get(`/v1/accounts/${acct('bob')}`)).body.status).toBe('frozen');
      // A retry of the approval after the restart is the same act, not a second one.
      const again = await api(keys.operator).post(`/v1/ops/proposals/${id}/approve`, {}, undefined, freshKey());
      expect(again.body.operation_reference).toBe(r.body.operation_reference);

      // The policy: an admin's, by an approved proposal once another admin could approve it.
      const second = await api(keys.operator).post('/v1/ops/members', { name: 'ada', role: 'admin', scheme: 'api-key' }, undefined, freshKey());
      const ada = api(second.body.api_key);
      const next = { rules: ['freeze', 'close'], issuanceAboveMinor: { USD: '5' }, ttlMs: 60_000 };
      expect(refusalOf(await api(keys.operator).post('/v1/ops/approvals/policy', next, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-ApprovalRequired' });
      const policyRequest = (body: unknown) => ({ method: 'POST', path: '/v1/ops/approvals/policy', body });
      expect(refusalOf(await ben.post('/v1/ops/proposals', { request: policyRequest(next), justification: 'x' }, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
      for (const bad of [{ rules: ['nope'] }, { rules: [], ttlMs: 10 }, { rules: [], issuanceAboveMinor: { USD: '-1' } }]) {
        expect(refusalOf(await api(keys.operator).post('/v1/ops/proposals', { request: policyRequest(bad), justification: 'x' }, undefined, freshKey())), JSON.stringify(bad)).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
      }
      const change = await propose(api(keys.operator), policyRequest(next), 'tighter');
      expect(refusalOf(await ben.post(`/v1/ops/proposals/${change}/approve`, {}, undefined, freshKey()))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
      const changed = await ada.post(`/v1/ops/proposals/${change}/approve`, {}, undefined, freshKey());
      expect((await decided(ada, changed.body.operation_reference)).body.state).toBe('Completed');
      expect((await ben.get('/v1/ops/approvals/policy')).body).toEqual(next);
    } finally {
      await daemon.stop();
    }
  });
});
