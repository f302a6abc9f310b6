/**
 * The authorization matrix (spec 5 and 2.6, endpoints 1-22 as served): every route
 * (a test checks the rows against the OpenAPI document),
 * called by every kind of principal, is allowed or refused exactly as the spec says,
 * with the refusal's code. A command counts as allowed when it is acknowledged and
 * then decided without error; refused when either the submission or the decision
 * names the code (CONTRACT 6: decision refusals are the operation's error).
 */
import * as ed from '@noble/ed25519';
import { beforeAll, describe, expect, it } from 'vitest';
import { independentlyVerify } from '../support/independent-verifier.js';
import '../../src/auth/keys.js';
import { type Client, type Reply, client, decided, refusalOf, useDaemon } from './support.js';

// `operator` is root (admin, DIR/operator.key); `admin`, `member` (role operator) and `auditor` are members added to the
// operator (CONTRACT 13); `removed` a member removed since. Unless a row names them, `admin` and `member` get what `operator`
// gets, `auditor` that on a GET and ERR-NotAuthorised on anything else, `removed` what `none` gets.
const kinds = ['none', 'owner', 'other', 'scoped', 'holder', 'beyond', 'revoked', 'party', 'identities', 'operator', 'admin', 'member', 'auditor', 'removed'] as const;
type Kind = (typeof kinds)[number];
type Outcome = 'ok' | `ERR-${string}`;

// No approval rules: the matrix is of roles (each route's own refusals); dual control's rows below.
const shared = useDaemon({ alice: 100_000n, bob: 0n, carol: 0n, dave: 0n, erin: 0n }, { approvals: { rules: [] } });
const id = (name: string) => `did:ledger:id:${name}`;
const acct = (name: string) => `did:ledger:acct:${name}`;
const alice = acct('alice');
const bob = acct('bob');
const treasury = 'did:ledger:acct:treasury-USD';
/** Backups are served encrypted (CONTRACT 13): to this recipient, whose identity no test needs. */
const backupRecipient = 'age19xmxjfvwkf7sdyh0wm63kadu3p324kthjwssf7u0zh9nl29qxshql6ulqe';

const tokens = {} as Record<Kind, string | null>;
const api = (kind: Kind): Client => client(() => shared.daemon.url, () => tokens[kind]!);
let keyCounter = 0;
const freshKey = () => ({ 'client-key': `matrix-${Date.now()}-${++keyCounter}` });
let aliceSecond = '';
let aliceTransfer = '';
let aliceDisclosure = '';
/** A key credential of alice's set and its signing key, for reclaim proofs. */
const aliceSecret = ed.utils.randomSecretKey();
let aliceKey = '';

/** Submits as `kind` and follows the command to its decision: 'ok', or the code that refused it. */
async function commandOutcome(kind: Kind, r: Reply): Promise<Outcome> {
  if (r.status !== 200 && r.status !== 202) return refusalOf(r).error as Outcome;
  const view = (await decided(api(kind), r.body.operation_reference)).body;
  return view.error === undefined ? 'ok' : view.error.error;
}

/** A batch item's outcome: its refusal at submission, else as a single command's. */
async function batchItemOutcome(kind: Kind, item: { error?: string; operation_reference?: string }): Promise<Outcome> {
  if (item.error !== undefined) return item.error as Outcome;
  const view = (await decided(api(kind), item.operation_reference!)).body;
  return view.error === undefined ? 'ok' : view.error.error;
}

const readOutcome = (r: Reply): Outcome => (r.status === 200 ? 'ok' : (refusalOf(r).error as Outcome));

/** Delegated terms from alice over her first account, bounded at 100 a use. */
const aliceGrant = (principal: string, ops = ['transfer', 'reserve']) => ({ kind: 'delegated', principal: id(principal), subject: { account: alice }, ops, per_operation: '100' });

async function decidedAs(kind: Kind, path: string, body: unknown, headers: Record<string, string> = {}) {
  const r = await api(kind).post(path, body, undefined, { ...freshKey(), ...headers });
  expect([200, 202], r.text).toContain(r.status);
  const view = (await decided(api(kind), r.body.operation_reference)).body;
  expect(view.error, JSON.stringify(view)).toBeUndefined();
  return { reply: r.body, view };
}

/** A reservation alice holds on her first account, for a capture or release to finish. */
async function reservation(): Promise<string> {
  return (await decidedAs('owner', '/v1/reservations', { payer: alice, amount: '1', asset: 'USD' })).view.operation_reference;
}

/** A fresh delegated account of alice's, so that each kind acts on one of its own. */
async function aliceAccount(): Promise<string> {
  return (await decidedAs('owner', '/v1/accounts', { owner: id('alice'), kind: 'customer', custody: 'delegated' })).view.result.account;
}

/** A succession of a fresh account of alice's to bob, opened by alice: its account and pending change. */
async function aliceSuccession(): Promise<{ account: string; pending: string }> {
  const account = await aliceAccount();
  return { account, pending: (await decidedAs('owner', `/v1/accounts/${account}/custody/changes`, { kind: 'succession', new_owner: id('bob') })).view.result.pending };
}

/** A fresh identity, so that restricting it touches no other row. */
async function freshIdentity(): Promise<string> {
  return (await decidedAs('identities', '/v1/identities', { scheme: 'api-key' })).view.result.identity;
}

/** Whether an event stream opens for `kind` (the stream is closed as soon as it answers). */
async function streamOutcome(kind: Kind): Promise<Outcome> {
  const controller = new AbortController();
  const res = await fetch(`${shared.daemon.url}/v1/events`, { headers: tokens[kind] === null ? {} : { authorization: `Bearer ${tokens[kind]}` }, signal: controller.signal });
  const outcome: Outcome = res.status === 200 ? 'ok' : ((await res.json()) as { error: Outcome }).error;
  controller.abort();
  return outcome;
}

interface Row {
  readonly route: string;
  readonly call: (kind: Kind) => Promise<Outcome>;
  /** What each kind gets; kinds not named get `rest`. */
  readonly expect: Partial<Record<Kind, Outcome>> & { rest: Outcome };
}

const no = 'ERR-NotAuthorised';
const anonymous = 'ERR-CredentialInvalid';

const rows: Row[] = [
  { route: 'GET /v1/health', call: async (k) => readOutcome(await api(k).get('/v1/health')), expect: { rest: 'ok' } },
  { route: 'GET /v1/openapi.json', call: async (k) => readOutcome(await api(k).get('/v1/openapi.json')), expect: { rest: 'ok' } },
  { route: 'POST /v1/auth/challenge', call: async (k) => readOutcome(await api(k).post('/v1/auth/challenge', { purpose: 'authenticate' })), expect: { rest: 'ok' } },
  {
    route: 'POST /v1/auth/passkey (an assertion that does not verify)',
    call: async (k) => {
      const junk = Buffer.alloc(40, 1).toString('base64url');
      return readOutcome(await api(k).post('/v1/auth/passkey', { assertion: { authenticator_data: junk, client_data_json: junk, raw_id: junk, signature: junk }, credential: 'did:ledger:cred:alice' }));
    },
    expect: { rest: anonymous },
  },
  { route: 'GET /v1/whoami', call: async (k) => readOutcome(await api(k).get('/v1/whoami')), expect: { none: anonymous, rest: 'ok' } },
  {
    route: 'POST /v1/transfers (alice to bob; 500 beyond the holder bound)',
    call: async (k) => commandOutcome(k, await api(k).post('/v1/transfers', { legs: [{ from: alice, to: bob, asset: 'USD', amount: k === 'beyond' ? '500' : '1' }] }, undefined, freshKey())),
    expect: { none: anonymous, owner: 'ok', holder: 'ok', beyond: 'ERR-BoundExceeded', revoked: 'ERR-AuthorityRevoked', operator: 'ok', rest: no },
  },
  {
    route: 'POST /v1/batches (one transfer alice to bob, one capture of a hold alice holds; 500 beyond the holder bound)',
    call: async (k) => {
      const transfer = { command: 'transfer', body: { legs: [{ from: alice, to: bob, asset: 'USD', amount: k === 'beyond' ? '500' : '1' }] }, client_key: freshKey()['client-key'] };
      const r = await api(k).post('/v1/batches', { commands: [transfer] });
      return r.status !== 200 && r.status !== 202 ? (refusalOf(r).error as Outcome) : batchItemOutcome(k, r.body.items[0]);
    },
    // Each item as its own route: the transfer row's expectations.
    expect: { none: anonymous, owner: 'ok', holder: 'ok', beyond: 'ERR-BoundExceeded', revoked: 'ERR-AuthorityRevoked', operator: 'ok', rest: no },
  },
  {
    route: 'POST /v1/batches (a capture of a hold alice holds)',
    call: async (k) => {
      const r = await api(k).post('/v1/batches', { commands: [{ command: 'capture', body: { reservation: await reservation(), to: bob }, client_key: freshKey()['client-key'] }] });
      return r.status !== 200 && r.status !== 202 ? (refusalOf(r).error as Outcome) : batchItemOutcome(k, r.body.items[0]);
    },
    expect: { none: anonymous, owner: 'ok', operator: 'ok', rest: 'ERR-UnknownOperation' },
  },
  {
    route: 'POST /v1/reservations (payer alice; 500 beyond the holder bound)',
    call: async (k) => commandOutcome(k, await api(k).post('/v1/reservations', { payer: alice, asset: 'USD', amount: k === 'beyond' ? '500' : '1' }, undefined, freshKey())),
    expect: { none: anonymous, owner: 'ok', holder: 'ok', beyond: 'ERR-BoundExceeded', revoked: 'ERR-AuthorityRevoked', operator: 'ok', rest: no },
  },
  {
    route: 'POST /v1/withdrawals (from alice; 500 beyond the holder bound)',
    call: async (k) => commandOutcome(k, await api(k).post('/v1/withdrawals', { account: alice, asset: 'USD', amount: k === 'beyond' ? '500' : '1', destination: { account: 'cd'.repeat(32) } }, undefined, freshKey())),
    // The holders' grants name transfer and reserve, not withdraw (USD is bound in beforeAll).
    expect: { none: anonymous, owner: 'ok', revoked: 'ERR-AuthorityRevoked', operator: 'ok', rest: no },
  },
  {
    route: 'POST /v1/reservations/{operation_reference}/capture (alice holds it)',
    call: async (k) => commandOutcome(k, await api(k).post(`/v1/reservations/${await reservation()}/capture`, { to: bob }, undefined, freshKey())),
    expect: { none: anonymous, owner: 'ok', operator: 'ok', rest: 'ERR-UnknownOperation' },
  },
  {
    route: 'POST /v1/reservations/{operation_reference}/release (alice holds it)',
    call: async (k) => commandOutcome(k, await api(k).post(`/v1/reservations/${await reservation()}/release`, {}, undefined, freshKey())),
    expect: { none: anonymous, owner: 'ok', operator: 'ok', rest: 'ERR-UnknownOperation' },
  },
  {
    route: 'POST /v1/accounts (owner alice)',
    call: async (k) => commandOutcome(k, await api(k).post('/v1/accounts', { owner: id('alice'), kind: 'customer', custody: 'delegated' }, undefined, freshKey())),
    // The holders' grants are over alice's account, not {identity}: they open nothing.
    expect: { none: anonymous, owner: 'ok', scoped: 'ok', revoked: 'ERR-AuthorityRevoked', identities: 'ok', operator: 'ok', rest: no },
  },
  {
    route: 'GET /v1/accounts/{account} (alice)',
    call: async (k) => readOutcome(await api(k).get(`/v1/accounts/${alice}`)),
    expect: { none: anonymous, owner: 'ok', holder: 'ok', beyond: 'ok', identities: 'ok', operator: 'ok', rest: no },
  },
  {
    route: 'GET /v1/accounts/{account}/custody (alice)',
    call: async (k) => readOutcome(await api(k).get(`/v1/accounts/${alice}/custody`)),
    expect: { none: anonymous, owner: 'ok', holder: 'ok', beyond: 'ok', identities: 'ok', operator: 'ok', rest: no },
  },
  {
    route: 'GET /v1/accounts/{account}/balances (alice)',
    call: async (k) => readOutcome(await api(k).get(`/v1/accounts/${alice}/balances`)),
    expect: { none: anonymous, owner: 'ok', holder: 'ok', beyond: 'ok', identities: 'ok', operator: 'ok', rest: no },
  },
  {
    route: 'GET /v1/accounts/{account}/balances (alice second account)',
    call: async (k) => readOutcome(await api(k).get(`/v1/accounts/${aliceSecond}/balances`)),
    // CONTRACT 11: the holders' grants name alice's first account, so they read only the account view of her second.
    expect: { none: anonymous, owner: 'ok', scoped: 'ok', identities: 'ok', operator: 'ok', rest: no },
  },
  {
    route: 'GET /v1/accounts (owner alice)',
    call: async (k) => readOutcome(await api(k).get(`/v1/accounts?owner=${id('alice')}&limit=10`)),
    // A scoped credential of alice lists the accounts in its scope; a holder of a grant over her lists none.
    expect: { none: anonymous, owner: 'ok', scoped: 'ok', identities: 'ok', operator: 'ok', rest: no },
  },
  {
    route: 'GET /v1/accounts/{account}/grants (alice)',
    call: async (k) => readOutcome(await api(k).get(`/v1/accounts/${alice}/grants`)),
    expect: { none: anonymous, owner: 'ok', operator: 'ok', rest: no },
  },
  {
    route: 'GET /v1/identities/{identity}/grants (alice)',
    call: async (k) => readOutcome(await api(k).get(`/v1/identities/${id('alice')}/grants`)),
    expect: { none: anonymous, owner: 'ok', scoped: 'ok', holder: 'ok', beyond: 'ok', revoked: 'ok', identities: 'ok', operator: 'ok', rest: no },
  },
  {
    route: 'GET /v1/statements (alice)',
    call: async (k) => readOutcome(await api(k).get(`/v1/statements?account=${alice}&asset=USD&from=0&to=${Date.now()}`)),
    expect: { none: anonymous, owner: 'ok', identities: 'ok', operator: 'ok', rest: no },
  },
  {
    route: 'GET /v1/movements (alice)',
    call: async (k) => readOutcome(await api(k).get(`/v1/movements?account=${alice}&limit=5`)),
    expect: { none: anonymous, owner: 'ok', identities: 'ok', operator: 'ok', rest: no },
  },
  {
    route: 'GET /v1/movements (every account of alice the caller reaches)',
    call: async (k) => readOutcome(await api(k).get(`/v1/movements?identity=${id('alice')}&limit=5`)),
    expect: { none: anonymous, owner: 'ok', scoped: 'ok', identities: 'ok', operator: 'ok', rest: no },
  },
  { route: 'GET /v1/trial-balance', call: async (k) => readOutcome(await api(k).get('/v1/trial-balance')), expect: { none: anonymous, operator: 'ok', rest: no } },
  { route: 'GET /v1/assets', call: async (k) => readOutcome(await api(k).get('/v1/assets')), expect: { none: anonymous, rest: 'ok' } },
  {
    route: 'GET /v1/aliases (the USD treasury)',
    call: async (k) => readOutcome(await api(k).get('/v1/aliases?source=ledger&name=treasury:USD')),
    expect: { none: anonymous, identities: 'ok', operator: 'ok', rest: 'ERR-UnknownAccount' },
  },
  {
    route: 'GET /v1/operations/{operation_reference} (a transfer alice submitted)',
    call: async (k) => readOutcome(await api(k).get(`/v1/operations/${aliceTransfer}`)),
    // The scoped credential reaches only alice's second account: it could not have submitted a transfer out of her first.
    expect: { none: anonymous, owner: 'ok', operator: 'ok', rest: 'ERR-UnknownOperation' },
  },
  { route: 'GET /v1/events', call: streamOutcome, expect: { none: anonymous, rest: 'ok' } },
  {
    route: 'POST /v1/credentials (api-key, on behalf of alice)',
    call: async (k) => commandOutcome(k, await api(k).post('/v1/credentials', { marker: 'ordinary', scheme: 'api-key' }, undefined, { ...freshKey(), 'on-behalf-of': id('alice') })),
    // dave's only grant over alice was revoked: naming her is the use of a revoked grant (CONTRACT 5).
    expect: { none: anonymous, owner: 'ok', scoped: 'ok', identities: 'ok', revoked: 'ERR-AuthorityRevoked', rest: no },
  },
  {
    route: 'POST /v1/credentials (api-key, own set)',
    call: async (k) => commandOutcome(k, await api(k).post('/v1/credentials', { marker: 'ordinary', scheme: 'api-key' }, undefined, freshKey())),
    // The operator's credentials are members, added by POST /v1/ops/members only (CONTRACT 13).
    expect: { none: anonymous, operator: no, rest: 'ok' },
  },
  {
    route: 'POST /v1/credentials (scoped to alice first account)',
    call: async (k) => commandOutcome(k, await api(k).post('/v1/credentials', { marker: 'ordinary', scheme: 'api-key', scope: [alice] }, undefined, freshKey())),
    // Only alice's own unscoped credential covers that account; others' sets do not hold it.
    expect: { none: anonymous, owner: 'ok', rest: no },
  },
  {
    route: 'POST /v1/identities (api-key)',
    call: async (k) => commandOutcome(k, await api(k).post('/v1/identities', { scheme: 'api-key' }, undefined, freshKey())),
    expect: { none: anonymous, identities: 'ok', rest: no },
  },
  {
    route: 'POST /v1/grants (alice account to bob)',
    call: async (k) => commandOutcome(k, await api(k).post('/v1/grants', aliceGrant('bob'), undefined, freshKey())),
    expect: { none: anonymous, owner: 'ok', rest: no },
  },
  {
    route: 'POST /v1/grants/{grant}/revoke (a grant alice gave carol)',
    call: async (k) => {
      const grant = (await decidedAs('owner', '/v1/grants', aliceGrant('carol'))).view.result.grant as string;
      return commandOutcome(k, await api(k).post(`/v1/grants/${grant}/revoke`, {}, undefined, freshKey()));
    },
    // The scoped credential reaches only alice's second account: a grant over her first is outside its scope.
    expect: { none: anonymous, owner: 'ok', holder: 'ok', beyond: 'ok', operator: 'ok', rest: no },
  },
  {
    route: 'POST /v1/ops/issuance-grants',
    call: async (k) =>
      commandOutcome(
        k,
        await api(k).post('/v1/ops/issuance-grants', { grant: { kind: 'issuance', principal: id('operator'), subject: { account: treasury }, ops: ['transfer'] }, justification: 'matrix' }, undefined, freshKey()),
      ),
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
  { route: 'GET /v1/ops/integrating-parties', call: async (k) => readOutcome(await api(k).get('/v1/ops/integrating-parties')), expect: { none: anonymous, operator: 'ok', rest: no } },
  { route: 'GET /v1/ops/backup', call: async (k) => readOutcome(await api(k).get(`/v1/ops/backup?recipient=${backupRecipient}`)), expect: { none: anonymous, operator: 'ok', admin: 'ok', member: no, auditor: no, rest: no } },
  { route: 'GET /v1/ops/audit', call: async (k) => readOutcome(await api(k).get('/v1/ops/audit?limit=5')), expect: { none: anonymous, operator: 'ok', auditor: 'ok', rest: no } },
  { route: 'GET /v1/ops/check', call: async (k) => readOutcome(await api(k).get('/v1/ops/check')), expect: { none: anonymous, operator: 'ok', auditor: 'ok', rest: no } },
  {
    route: 'POST /v1/ops/check (then followed to its end, so the next kind starts its own)',
    call: async (k) => {
      const r = await api(k).post('/v1/ops/check', {});
      if (r.status !== 202) return refusalOf(r).error as Outcome;
      while ((await api('operator').get('/v1/ops/check')).body.state === 'running') await new Promise((res) => setTimeout(res, 20));
      return 'ok';
    },
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
  { route: 'GET /v1/ops/members', call: async (k) => readOutcome(await api(k).get('/v1/ops/members')), expect: { none: anonymous, operator: 'ok', auditor: 'ok', rest: no } },
  ...['identities', 'accounts', 'operations', 'reservations', 'grants'].map(
    (listing): Row => ({ route: `GET /v1/ops/${listing}`, call: async (k) => readOutcome(await api(k).get(`/v1/ops/${listing}?limit=5`)), expect: { none: anonymous, operator: 'ok', auditor: 'ok', rest: no } }),
  ),
  { route: 'GET /v1/ops/proposals', call: async (k) => readOutcome(await api(k).get('/v1/ops/proposals?limit=5')), expect: { none: anonymous, operator: 'ok', auditor: 'ok', rest: no } },
  {
    route: 'GET /v1/ops/proposals/{proposal} (a fresh one)',
    call: async (k) => readOutcome(await api(k).get(`/v1/ops/proposals/${await freshProposal()}`)),
    expect: { none: anonymous, operator: 'ok', auditor: 'ok', rest: no },
  },
  {
    route: 'POST /v1/ops/proposals (a transfer)',
    call: async (k) => commandOutcome(k, await api(k).post('/v1/ops/proposals', { request: proposedTransfer, justification: 'matrix' }, undefined, freshKey())),
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
  {
    route: "POST /v1/ops/proposals/{proposal}/approve (member's, a transfer)",
    call: async (k) => commandOutcome(k, await api(k).post(`/v1/ops/proposals/${await freshProposal()}/approve`, {}, undefined, freshKey())),
    // Its proposer approves it never (CONTRACT 13).
    expect: { none: anonymous, operator: 'ok', member: no, rest: no },
  },
  {
    route: "POST /v1/ops/proposals/{proposal}/reject (member's)",
    call: async (k) => commandOutcome(k, await api(k).post(`/v1/ops/proposals/${await freshProposal()}/reject`, { reason: 'matrix' }, undefined, freshKey())),
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
  { route: 'GET /v1/ops/approvals/policy', call: async (k) => readOutcome(await api(k).get('/v1/ops/approvals/policy')), expect: { none: anonymous, operator: 'ok', auditor: 'ok', rest: no } },
  {
    route: 'POST /v1/ops/approvals/policy (sent directly)',
    call: async (k) => commandOutcome(k, await api(k).post('/v1/ops/approvals/policy', { rules: [] }, undefined, freshKey())),
    // Root and the admin each have the other to approve it: by a proposal only.
    expect: { none: anonymous, operator: 'ERR-ApprovalRequired', admin: 'ERR-ApprovalRequired', member: no, rest: no },
  },
  {
    route: 'POST /v1/ops/members (a fresh api-key member)',
    call: async (k) => commandOutcome(k, await api(k).post('/v1/ops/members', { name: `matrix-${++memberCounter}`, role: 'auditor', scheme: 'api-key' }, undefined, freshKey())),
    expect: { none: anonymous, operator: 'ok', admin: 'ok', member: no, rest: no },
  },
  {
    route: 'POST /v1/ops/members/{credential}/role (a fresh member, to operator)',
    call: async (k) => commandOutcome(k, await api(k).post(`/v1/ops/members/${await freshMember()}/role`, { role: 'operator' }, undefined, freshKey())),
    expect: { none: anonymous, operator: 'ok', admin: 'ok', member: no, rest: no },
  },
  {
    route: 'POST /v1/ops/members/{credential}/remove (a fresh member)',
    call: async (k) => commandOutcome(k, await api(k).post(`/v1/ops/members/${await freshMember()}/remove`, {}, undefined, freshKey())),
    expect: { none: anonymous, operator: 'ok', admin: 'ok', member: no, rest: no },
  },
  {
    route: 'POST /v1/ops/integrating-parties',
    call: async (k) => commandOutcome(k, await api(k).post('/v1/ops/integrating-parties', { principals: [id('bob')] }, undefined, freshKey())),
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
  {
    route: 'POST /v1/ops/layer/blocks',
    call: async (k) => readOutcome(await api(k).post('/v1/ops/layer/blocks', { count: 1 }, undefined, freshKey())),
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
  {
    route: 'POST /v1/ops/checkpoints',
    call: async (k) => readOutcome(await api(k).post('/v1/ops/checkpoints', {}, undefined, freshKey())),
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
  { route: 'GET /v1/checkpoints', call: async (k) => readOutcome(await api(k).get('/v1/checkpoints')), expect: { none: anonymous, rest: 'ok' } },
  { route: 'GET /v1/checkpoints/{number} (1)', call: async (k) => readOutcome(await api(k).get('/v1/checkpoints/1')), expect: { none: anonymous, rest: 'ok' } },
  {
    route: 'GET /v1/accounts/{account}/liabilities (alice, checkpoint 1, USD)',
    call: async (k) => readOutcome(await api(k).get(`/v1/accounts/${alice}/liabilities?checkpoint=1&asset=USD`)),
    // CONTRACT 12.4: the owner within its credential's scope and the operator; grant holders and the identities principal not.
    expect: { none: anonymous, owner: 'ok', operator: 'ok', rest: 'ERR-NotAuthorised' },
  },
  { route: 'GET /v1/checkpoints/{number}/consistency (1 from 1)', call: async (k) => readOutcome(await api(k).get('/v1/checkpoints/1/consistency?from=1')), expect: { none: anonymous, rest: 'ok' } },
  { route: 'GET /v1/clerk', call: async (k) => readOutcome(await api(k).get('/v1/clerk')), expect: { none: anonymous, rest: 'ok' } },
  {
    route: 'POST /v1/disclosures (about alice first account)',
    call: async (k) =>
      readOutcome(await api(k).post('/v1/disclosures', { subject: alice, assertion: { shape: 'holds_at_least', amount: '1', asset: 'USD', kind: 'available' }, recipient_reference: 'ab'.repeat(32) }, undefined, freshKey())),
    // The operator needs a legal obligation for an account it does not own; the scoped credential reaches only her second account.
    expect: { none: anonymous, owner: 'ok', operator: 'ERR-JustificationRequired', rest: no },
  },
  {
    route: 'GET /v1/disclosures/verify (a disclosure alice made)',
    call: async (k) => readOutcome(await api(k).get(`/v1/disclosures/verify?disclosure=${aliceDisclosure}`)),
    expect: { none: anonymous, rest: 'ok' },
  },
  {
    route: 'POST /v1/disclosures/verify (a disclosure alice made)',
    call: async (k) => readOutcome(await api(k).post('/v1/disclosures/verify', { disclosure: aliceDisclosure })),
    // A query by POST (its body is too large for a query string): every member's, auditors' too.
    expect: { none: anonymous, auditor: 'ok', rest: 'ok' },
  },
  {
    route: 'GET /v1/identities/{identity}/recovery-terms (alice)',
    call: async (k) => readOutcome(await api(k).get(`/v1/identities/${id('alice')}/recovery-terms`)),
    expect: { none: anonymous, owner: 'ok', scoped: 'ok', identities: 'ok', operator: 'ok', rest: no },
  },
  {
    route: 'GET /v1/accounts/{account}/recovery-mechanisms (alice)',
    call: async (k) => readOutcome(await api(k).get(`/v1/accounts/${alice}/recovery-mechanisms`)),
    expect: { none: anonymous, owner: 'ok', identities: 'ok', operator: 'ok', rest: no },
  },
  {
    route: 'POST /v1/accounts/{account}/custody/reclaim (a fresh account of alice, her key proving)',
    call: async (k) => {
      const account = await aliceAccount();
      const acknowledged = (await api('owner').get(`/v1/accounts/${account}/recovery-mechanisms`)).body.digest;
      const signature = Buffer.from(ed.sign(new TextEncoder().encode(`ledger-reclaim:v1:${account}:0`), aliceSecret)).toString('hex');
      return commandOutcome(k, await api(k).post(`/v1/accounts/${account}/custody/reclaim`, { proof_credential: aliceKey, acknowledged, signature }, undefined, freshKey()));
    },
    expect: { none: anonymous, owner: 'ok', rest: no },
  },
  {
    route: 'POST /v1/accounts/{account}/custody/changes (succession of a fresh account of alice)',
    call: async (k) => commandOutcome(k, await api(k).post(`/v1/accounts/${await aliceAccount()}/custody/changes`, { kind: 'succession', new_owner: id('bob') }, undefined, freshKey())),
    expect: { none: anonymous, owner: 'ok', rest: no },
  },
  {
    route: 'POST /v1/accounts/{account}/custody/changes (recovery of a fresh account of alice into bob\'s)',
    call: async (k) => commandOutcome(k, await api(k).post(`/v1/accounts/${await aliceAccount()}/custody/changes`, { kind: 'recovery', new_owner: id('bob'), to: bob }, undefined, freshKey())),
    expect: { none: anonymous, identities: 'ok', rest: no },
  },
  {
    route: 'POST /v1/accounts/{account}/custody/changes/{pending}/cancel (a succession alice opened)',
    call: async (k) => {
      const { account, pending } = await aliceSuccession();
      return commandOutcome(k, await api(k).post(`/v1/accounts/${account}/custody/changes/${pending}/cancel`, {}, undefined, freshKey()));
    },
    expect: { none: anonymous, owner: 'ok', rest: no },
  },
  {
    route: 'POST /v1/accounts/{account}/custody/changes/{pending}/complete (a succession alice opened to bob, before its delay)',
    call: async (k) => {
      const { account, pending } = await aliceSuccession();
      return commandOutcome(k, await api(k).post(`/v1/accounts/${account}/custody/changes/${pending}/complete`, {}, undefined, freshKey()));
    },
    // The new owner accepts a succession by completing it (CONTRACT 8); whoever opened it may not.
    expect: { none: anonymous, other: 'ERR-RecoveryNotElapsed', rest: no },
  },
  {
    route: 'POST /v1/accounts/{account}/freeze (a fresh account of alice)',
    call: async (k) => commandOutcome(k, await api(k).post(`/v1/accounts/${await aliceAccount()}/freeze`, { justification: 'matrix' }, undefined, freshKey())),
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
  {
    route: 'POST /v1/accounts/{account}/unfreeze (a fresh account of alice, frozen)',
    call: async (k) => {
      const account = await aliceAccount();
      await decidedAs('operator', `/v1/accounts/${account}/freeze`, { justification: 'matrix' });
      return commandOutcome(k, await api(k).post(`/v1/accounts/${account}/unfreeze`, { justification: 'matrix' }, undefined, freshKey()));
    },
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
  {
    route: 'POST /v1/accounts/{account}/close (a fresh, empty account of alice)',
    call: async (k) => commandOutcome(k, await api(k).post(`/v1/accounts/${await aliceAccount()}/close`, {}, undefined, freshKey())),
    expect: { none: anonymous, owner: 'ok', operator: 'ok', rest: no },
  },
  {
    route: 'POST /v1/ops/identities/{identity}/restrict (a fresh identity)',
    call: async (k) => commandOutcome(k, await api(k).post(`/v1/ops/identities/${await freshIdentity()}/restrict`, { justification: 'matrix' }, undefined, freshKey())),
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
  {
    route: 'POST /v1/ops/identities/{identity}/unrestrict (a fresh identity, restricted)',
    call: async (k) => {
      const identity = await freshIdentity();
      await decidedAs('operator', `/v1/ops/identities/${identity}/restrict`, { justification: 'matrix' });
      return commandOutcome(k, await api(k).post(`/v1/ops/identities/${identity}/unrestrict`, { justification: 'matrix' }, undefined, freshKey()));
    },
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
  // Settlement (docs/settlement.md): USD is bound in beforeAll.
  { route: 'POST /v1/ops/assets', call: async (k) => commandOutcome(k, await api(k).post('/v1/ops/assets', { id: newSymbol(), kind: 'other', precision: 0 }, undefined, freshKey())), expect: { none: anonymous, operator: 'ok', rest: no } },
  {
    route: 'POST /v1/ops/assets/{asset}/binding (a new asset)',
    call: async (k) => commandOutcome(k, await api(k).post(`/v1/ops/assets/${await registered()}/binding`, { location: newLocation() }, undefined, freshKey())),
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
  {
    route: 'POST /v1/ops/assets/{asset}/deprecate (a new asset)',
    call: async (k) => commandOutcome(k, await api(k).post(`/v1/ops/assets/${await registered()}/deprecate`, {}, undefined, freshKey())),
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
  { route: 'POST /v1/ops/settlement/sync', call: async (k) => commandOutcome(k, await api(k).post('/v1/ops/settlement/sync', {}, undefined, freshKey())), expect: { none: anonymous, operator: 'ok', rest: no } },
  {
    route: 'POST /v1/ops/settlement/observations (a deposit for no account)',
    call: async (k) => commandOutcome(k, await api(k).post('/v1/ops/settlement/observations', { coordinate: strayDeposit }, undefined, freshKey())),
    expect: { none: anonymous, operator: 'ERR-ObservationUnassociated', rest: no },
  },
  { route: 'POST /v1/ops/settlement/rescans', call: async (k) => readOutcome(await api(k).post('/v1/ops/settlement/rescans', { from: 1, to: 10 })), expect: { none: anonymous, operator: 'ok', rest: no } },
  { route: 'POST /v1/ops/settlement/comparisons', call: async (k) => readOutcome(await api(k).post('/v1/ops/settlement/comparisons', {})), expect: { none: anonymous, operator: 'ok', auditor: 'ok', rest: no } },
  { route: 'GET /v1/ops/settlement/status', call: async (k) => readOutcome(await api(k).get('/v1/ops/settlement/status')), expect: { none: anonymous, operator: 'ok', rest: no } },
  { route: 'GET /v1/ops/store', call: async (k) => readOutcome(await api(k).get('/v1/ops/store')), expect: { none: anonymous, operator: 'ok', rest: no } },
  {
    route: 'POST /v1/ops/layer/deposits',
    call: async (k) => readOutcome(await api(k).post('/v1/ops/layer/deposits', { asset: 'USD', amount: '1', account_ref: 'ee'.repeat(32) })),
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
  { route: 'POST /v1/ops/layer/status', call: async (k) => readOutcome(await api(k).post('/v1/ops/layer/status', { serving: true })), expect: { none: anonymous, operator: 'ok', rest: no } },
  {
    route: 'POST /v1/ops/layer/locations',
    call: async (k) => readOutcome(await api(k).post('/v1/ops/layer/locations', { location: newLocation(), symbol: 'X', decimals: 0, status: 'active' })),
    expect: { none: anonymous, operator: 'ok', rest: no },
  },
];

let memberCounter = 0;
/** A member root added just now (an auditor): its credential. */
const freshMember = async () => (await decidedAs('operator', '/v1/ops/members', { name: `matrix-${++memberCounter}`, role: 'auditor', scheme: 'api-key' })).view.result.credential as string;
/** Adds a member as root and answers its API key. */
const memberKey = async (name: string, role: string) => (await decidedAs('operator', '/v1/ops/members', { name, role, scheme: 'api-key' })).reply.api_key as string;

/** What proposals in the matrix carry: an operator's transfer, repeatable. */
const proposedTransfer = { method: 'POST', path: '/v1/transfers', body: { legs: [{ from: acct('alice'), to: acct('bob'), asset: 'USD', amount: '1' }] } };
/** A proposal `member` (an operator member) made just now. */
const freshProposal = async () => (await decidedAs('member', '/v1/ops/proposals', { request: proposedTransfer, justification: 'matrix' })).view.result.proposal as string;

let symbolCounter = 0;
const newSymbol = () => `MX${++symbolCounter}`;
let locationCounter = 0;
const newLocation = () => (++locationCounter).toString(16).padStart(64, '0');
/** An asset the operator registered just now (book_only). */
const registered = async () => {
  const symbol = newSymbol();
  await decidedAs('operator', '/v1/ops/assets', { id: symbol, kind: 'other', precision: 0 });
  return symbol;
};
let strayDeposit: Record<string, unknown> = {};

beforeAll(async () => {
  const { keys } = shared;
  Object.assign(tokens, {
    none: null,
    owner: keys.customers.alice,
    other: keys.customers.bob,
    holder: keys.customers.carol,
    beyond: keys.customers.carol,
    revoked: keys.customers.dave,
    party: keys.customers.erin,
    identities: keys.identities,
    operator: keys.operator,
  });
  tokens.admin = await memberKey('matrix-admin', 'admin');
  tokens.member = await memberKey('matrix-operator', 'operator');
  tokens.auditor = await memberKey('matrix-auditor', 'auditor');
  tokens.removed = await memberKey('matrix-removed', 'operator');
  const removed = (await api('removed').get('/v1/whoami')).body.credential;
  await decidedAs('operator', `/v1/ops/members/${removed}/remove`, {});
  aliceSecond = (await decidedAs('owner', '/v1/accounts', { owner: id('alice'), kind: 'customer', custody: 'delegated' })).view.result.account;
  tokens.scoped = (await decidedAs('owner', '/v1/credentials', { marker: 'ordinary', scheme: 'api-key', scope: [aliceSecond] })).reply.api_key;
  expect(tokens.scoped).toMatch(/^ledger_ak_/);
  await decidedAs('owner', '/v1/grants', aliceGrant('carol'));
  const revoked = (await decidedAs('owner', '/v1/grants', aliceGrant('dave'))).view.result.grant;
  await decidedAs('owner', `/v1/grants/${revoked}/revoke`, {});
  await decidedAs('operator', '/v1/ops/integrating-parties', { principals: [id('erin')] });
  const verifier = Buffer.from(ed.getPublicKey(aliceSecret)).toString('hex');
  aliceKey = (await decidedAs('owner', '/v1/credentials', { marker: 'ordinary', scheme: 'key', verifier })).view.result.credential;
  // USD bound to the embedded layer, for withdrawals and deposits.
  await decidedAs('operator', '/v1/ops/assets/USD/binding', { location: 'ab'.repeat(32) });
  for (let i = 0; i < 50 && ((await api('operator').get('/v1/assets')).body as { id: string; binding: string }[]).find((a) => a.id === 'USD')!.binding !== 'bound'; i++) {
    await api('operator').post('/v1/ops/layer/blocks', { count: 1 });
    await new Promise((r) => setTimeout(r, 20));
  }
  strayDeposit = (await api('operator').post('/v1/ops/layer/deposits', { asset: 'USD', amount: '1', account_ref: '00'.repeat(32) })).body.result.settlement.coordinate;
  aliceTransfer = (await decidedAs('owner', '/v1/transfers', { legs: [{ from: alice, to: bob, asset: 'USD', amount: '1' }] })).view.operation_reference;
  // A final checkpoint to disclose on, and a disclosure to verify.
  expect((await api('operator').post('/v1/ops/checkpoints', {}, undefined, freshKey())).status).toBe(200);
  expect((await api('operator').post('/v1/ops/layer/blocks', { count: 3 }, undefined, freshKey())).status).toBe(200);
  const disclosure = await api('owner').post('/v1/disclosures', { subject: alice, assertion: { shape: 'operation_occurred', operation: aliceTransfer }, recipient_reference: 'cd'.repeat(32) }, undefined, freshKey());
  aliceDisclosure = disclosure.body.result.disclosure;
  const clerk = (await api('owner').get('/v1/clerk')).body;
  independentlyVerify(aliceDisclosure, { clerk: clerk.public_key, instance: clerk.instance, checkpoints: (await api('owner').get('/v1/checkpoints')).body.items.reverse() });
});

/** What a member kind gets where a row does not name it (see `kinds`). */
function memberDefault(row: Row, kind: Kind): Outcome | undefined {
  const operator = row.expect.operator ?? row.expect.rest;
  const none = row.expect.none ?? row.expect.rest;
  if (kind === 'admin' || kind === 'member') return operator;
  if (kind === 'removed') return none;
  // A route that answers everyone alike (the public ones) takes no role.
  if (kind === 'auditor') return none === row.expect.rest ? row.expect.rest : row.route.startsWith('GET ') ? operator : no;
  return undefined;
}

describe('authorization matrix', () => {
  it('has a row for every route the daemon serves', async () => {
    const { paths } = (await api('operator').get('/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const served = Object.entries(paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    const covered = new Set(rows.map((r) => r.route.split(' (')[0]!));
    expect([...new Set(served)].sort()).toEqual([...covered].sort());
  });

  for (const row of rows) {
    it(row.route, async () => {
      const got: Partial<Record<Kind, Outcome>> = {};
      const want: Partial<Record<Kind, Outcome>> = {};
      for (const kind of kinds) {
        got[kind] = await row.call(kind);
        want[kind] = row.expect[kind] ?? memberDefault(row, kind) ?? row.expect.rest;
      }
      expect(got).toEqual(want);
    });
  }
});

describe('what a refusal tells', () => {
  it('answers an unknown account and an unreachable one alike, naming no existence', async () => {
    // erin (the party's principal) holds no grant; bob holds one from the matrix by now.
    const unknown = await api('party').get(`/v1/accounts/${acct('nobody')}`);
    const unreachable = await api('party').get(`/v1/accounts/${alice}`);
    expect(refusalOf(unknown)).toEqual(refusalOf(unreachable));
    expect(unknown.body.description.replace(acct('nobody'), 'X')).toBe(unreachable.body.description.replace(alice, 'X'));
    expect(unreachable.body.description).toMatch(/^the initiating principal holds no authority that covers account /);
    const byTransfer = await commandOutcome('party', await api('party').post('/v1/transfers', { legs: [{ from: acct('nobody'), to: bob, asset: 'USD', amount: '1' }] }, undefined, freshKey()));
    expect(byTransfer).toBe(no);
    // Only the operator learns that an account does not exist.
    expect(refusalOf(await api('operator').get(`/v1/accounts/${acct('nobody')}`))).toEqual({ status: 404, error: 'ERR-UnknownAccount' });
  });

  it('describes ERR-NotAuthorised as authority the principal does not hold', async () => {
    for (const r of [await api('other').get('/v1/trial-balance'), await api('scoped').get(`/v1/statements?account=${alice}&asset=USD&from=0&to=1`), await api('holder').get(`/v1/accounts/${alice}/grants`)]) {
      expect(refusalOf(r)).toEqual({ status: 403, error: no });
      expect(r.body.description).toMatch(/^the initiating principal holds no authority that covers /);
    }
  });

  it('lists grants in identifier order, live and revoked, with the listing envelope', async () => {
    const listing = (await api('owner').get(`/v1/identities/${id('alice')}/grants`)).body;
    expect(listing.identity).toBe(id('alice'));
    const ids = listing.items.map((g: { grant: string }) => g.grant);
    expect(ids).toEqual([...ids].sort());
    expect(listing.items.some((g: { revoked: number | null }) => g.revoked !== null)).toBe(true);
    expect(listing.items.some((g: { revoked: number | null }) => g.revoked === null)).toBe(true);
    expect(listing.items[0]).toMatchObject({ grantor: id('alice'), terms: { kind: 'delegated', subject: { account: alice }, per_operation: '100' } });
    // A holder sees only its own; the account listing names the account.
    const carols = (await api('holder').get(`/v1/identities/${id('alice')}/grants`)).body.items;
    expect(carols.length).toBeGreaterThan(0);
    expect(carols.every((g: { terms: { principal: string } }) => g.terms.principal === id('carol'))).toBe(true);
    expect((await api('owner').get(`/v1/accounts/${alice}/grants`)).body.account).toBe(alice);
    expect((await api('owner').get(`/v1/accounts/${aliceSecond}/grants`)).body.items).toEqual([]);
  });

  it('lets a holder act on behalf of the identity it holds a grant over, and no other', async () => {
    const onBehalf = (kind: Kind, identity: string) =>
      api(kind).post('/v1/transfers', { legs: [{ from: alice, to: bob, asset: 'USD', amount: '2' }] }, undefined, { ...freshKey(), 'on-behalf-of': id(identity) });
    const r = await onBehalf('holder', 'alice');
    expect(await commandOutcome('holder', r)).toBe('ok');
    const { movements } = (await api('owner').get(`/v1/movements?account=${alice}&limit=1000`)).body;
    const moved = movements.find((m: { operation: string }) => m.operation === r.body.operation_reference);
    expect(moved.authorities[0]).toMatchObject({ kind: 'delegated', principal: id('carol'), on_behalf_of: id('alice'), grant: expect.stringMatching(/^did:ledger:grant:/) });
    expect(refusalOf(await onBehalf('holder', 'bob'))).toEqual({ status: 403, error: no });
    expect(refusalOf(await onBehalf('party', 'alice'))).toEqual({ status: 403, error: no });
    // dave's only grant over alice was revoked: its use, named through the header, is told as such (CONTRACT 5).
    expect(refusalOf(await onBehalf('revoked', 'alice'))).toEqual({ status: 403, error: 'ERR-AuthorityRevoked' });
  });

  it('lists integrating parties with their principals', async () => {
    const { items } = (await api('operator').get('/v1/ops/integrating-parties')).body;
    expect(items.find((p: { principals: { principal: string }[] }) => p.principals[0]!.principal === id('erin'))).toMatchObject({
      party: expect.stringMatching(/^did:ledger:party:/),
      registered_at: expect.any(Number),
      principals: [{ principal: id('erin'), tied_at: expect.any(Number) }],
    });
  });
});
