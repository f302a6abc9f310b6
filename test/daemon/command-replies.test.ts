/**
 * Every command endpoint answers the command reply of spec 2.1 (CONTRACT 4): each POST
 * route of the OpenAPI document is called, and its reply checked against the schema the
 * document gives for that status; a command's reply is `client_key`, `client_key_derived`,
 * `operation_reference`, `terminal` (202 while not terminal, 200 once it is) with its
 * result under `result`, and a repeat under the same client key answers the same
 * operation, never a second effect.
 */
import * as ed from '@noble/ed25519';
import Ajv2020Module from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import '../../src/auth/keys.js';
import { type Client, type Reply, client, decided, useDaemon } from './support.js';

const shared = useDaemon({ alice: 100_000n, bob: 0n }, { recovery: { delayMs: 0 } });
const id = (name: string) => `did:ledger:id:${name}`;
const acct = (name: string) => `did:ledger:acct:${name}`;
let keyCounter = 0;
const freshKey = () => `replies-${Date.now()}-${++keyCounter}`;

/**
 * POST routes that are not commands, by path: the two sign-in ceremonies (spec 4), the
 * embedded layer's controls, which drive the test layer itself (CONTRACT 9: blocks, serving,
 * locations; not decided by the book, and a repeat makes more blocks by design), and the
 * POST form of endpoint 21 (CONTRACT 12.7: a query), batches, whose items are command replies,
 * and the online check, which reads one snapshot and changes nothing of the book.
 */
const notCommands: Record<string, string> = {
  '/v1/auth/challenge': 'spec 4: not a command endpoint',
  '/v1/auth/passkey': 'spec 4: not a command endpoint',
  '/v1/ops/layer/blocks': 'an embedded layer control: each call makes blocks',
  '/v1/ops/layer/status': 'an embedded layer control',
  '/v1/ops/layer/locations': 'an embedded layer control',
  '/v1/disclosures/verify': 'CONTRACT 12.7: a query, not a command',
  '/v1/batches': 'CONTRACT 4: `{items}`, each item the command reply its own route gives',
  '/v1/ops/check': 'a read of the whole book in the background, followed by GET; it changes nothing',
};

interface Sample {
  readonly who: string;
  readonly path: string;
  readonly body: unknown;
}

async function decidedAs(who: string, path: string, body: unknown): Promise<any> {
  const r = await shared.as(who).post(path, body, undefined, { 'client-key': freshKey() });
  expect([200, 202], r.text).toContain(r.status);
  const view = (await decided(shared.as(who), r.body.operation_reference)).body;
  expect(view.error, JSON.stringify(view)).toBeUndefined();
  return view;
}

const freshAccount = async () => (await decidedAs('alice', '/v1/accounts', { owner: id('alice'), kind: 'customer', custody: 'delegated' })).result.account as string;
const reservation = async () => (await decidedAs('alice', '/v1/reservations', { payer: acct('alice'), amount: '1', asset: 'USD' })).operation_reference as string;
const aliceGrant = { kind: 'delegated', principal: id('bob'), subject: { account: acct('alice') }, ops: ['transfer'], per_operation: '100' };
let symbols = 0;
const newSymbol = () => `RPL${++symbols}`;
const registered = async () => {
  const symbol = newSymbol();
  await decidedAs('operator', '/v1/ops/assets', { id: symbol, kind: 'other', precision: 0 });
  return symbol;
};
const aliceSecret = ed.utils.randomSecretKey();
let aliceKey = '';
let stray: unknown = null;

/** A request each command route takes, by operationId: what a caller of that route would send. */
const samples: Record<string, () => Promise<Sample>> = {
  openAccount: async () => ({ who: 'alice', path: '/v1/accounts', body: { owner: id('alice'), kind: 'customer', custody: 'delegated' } }),
  createTransfer: async () => ({ who: 'alice', path: '/v1/transfers', body: { legs: [{ from: acct('alice'), to: acct('bob'), asset: 'USD', amount: '1' }] } }),
  createReservation: async () => ({ who: 'alice', path: '/v1/reservations', body: { payer: acct('alice'), amount: '1', asset: 'USD' } }),
  captureReservation: async () => ({ who: 'alice', path: `/v1/reservations/${await reservation()}/capture`, body: { to: acct('bob') } }),
  releaseReservation: async () => ({ who: 'alice', path: `/v1/reservations/${await reservation()}/release`, body: {} }),
  registerCredential: async () => ({ who: 'alice', path: '/v1/credentials', body: { marker: 'ordinary', scheme: 'api-key' } }),
  createIdentity: async () => ({ who: 'identities', path: '/v1/identities', body: { scheme: 'api-key' } }),
  issueGrant: async () => ({ who: 'alice', path: '/v1/grants', body: aliceGrant }),
  revokeGrant: async () => ({ who: 'alice', path: `/v1/grants/${(await decidedAs('alice', '/v1/grants', aliceGrant)).result.grant}/revoke`, body: {} }),
  issueIssuanceGrant: async () => ({
    who: 'operator',
    path: '/v1/ops/issuance-grants',
    body: { grant: { kind: 'issuance', principal: id('operator'), subject: { account: 'did:ledger:acct:treasury-USD' }, ops: ['transfer'] }, justification: 'replies' },
  }),
  registerIntegratingParty: async () => ({ who: 'operator', path: '/v1/ops/integrating-parties', body: { principals: [id('bob')] } }),
  createCheckpoint: async () => ({ who: 'operator', path: '/v1/ops/checkpoints', body: {} }),
  createDisclosure: async () => ({ who: 'alice', path: '/v1/disclosures', body: { subject: acct('alice'), assertion: { shape: 'holds_at_least', amount: '1', asset: 'USD', kind: 'available' }, recipient_reference: 'ab'.repeat(32) } }),
  reclaimCustody: async () => {
    const account = await freshAccount();
    const acknowledged = (await shared.as('alice').get(`/v1/accounts/${account}/recovery-mechanisms`)).body.digest;
    const signature = Buffer.from(ed.sign(new TextEncoder().encode(`ledger-reclaim:v1:${account}:0`), aliceSecret)).toString('hex');
    return { who: 'alice', path: `/v1/accounts/${account}/custody/reclaim`, body: { proof_credential: aliceKey, acknowledged, signature } };
  },
  openCustodyChange: async () => ({ who: 'alice', path: `/v1/accounts/${await freshAccount()}/custody/changes`, body: { kind: 'succession', new_owner: id('bob') } }),
  cancelCustodyChange: async () => {
    const account = await freshAccount();
    const { pending } = (await decidedAs('alice', `/v1/accounts/${account}/custody/changes`, { kind: 'succession', new_owner: id('bob') })).result;
    return { who: 'alice', path: `/v1/accounts/${account}/custody/changes/${pending}/cancel`, body: {} };
  },
  // A recovery (its opener completes it), so the sample holds whoever completes a succession.
  completeCustodyChange: async () => {
    const account = await freshAccount();
    const { pending } = (await decidedAs('identities', `/v1/accounts/${account}/custody/changes`, { kind: 'recovery', new_owner: id('bob'), to: acct('bob') })).result;
    return { who: 'identities', path: `/v1/accounts/${account}/custody/changes/${pending}/complete`, body: {} };
  },
  freezeAccount: async () => ({ who: 'operator', path: `/v1/accounts/${await freshAccount()}/freeze`, body: { justification: 'replies' } }),
  unfreezeAccount: async () => {
    const account = await freshAccount();
    await decidedAs('operator', `/v1/accounts/${account}/freeze`, { justification: 'replies' });
    return { who: 'operator', path: `/v1/accounts/${account}/unfreeze`, body: { justification: 'replies' } };
  },
  closeAccount: async () => ({ who: 'alice', path: `/v1/accounts/${await freshAccount()}/close`, body: {} }),
  restrictIdentity: async () => ({ who: 'operator', path: `/v1/ops/identities/${(await decidedAs('identities', '/v1/identities', { scheme: 'api-key' })).result.identity}/restrict`, body: { justification: 'replies' } }),
  unrestrictIdentity: async () => {
    const identity = (await decidedAs('identities', '/v1/identities', { scheme: 'api-key' })).result.identity;
    await decidedAs('operator', `/v1/ops/identities/${identity}/restrict`, { justification: 'replies' });
    return { who: 'operator', path: `/v1/ops/identities/${identity}/unrestrict`, body: { justification: 'replies' } };
  },
  registerAsset: async () => ({ who: 'operator', path: '/v1/ops/assets', body: { id: newSymbol(), kind: 'other', precision: 0 } }),
  bindAsset: async () => ({ who: 'operator', path: `/v1/ops/assets/${await registered()}/binding`, body: { location: (++symbols).toString(16).padStart(64, '0') } }),
  deprecateAsset: async () => ({ who: 'operator', path: `/v1/ops/assets/${await registered()}/deprecate`, body: {} }),
  createWithdrawal: async () => ({ who: 'alice', path: '/v1/withdrawals', body: { account: acct('alice'), amount: '1', asset: 'USD', destination: { account: 'cd'.repeat(32) } } }),
  syncSettlement: async () => ({ who: 'operator', path: '/v1/ops/settlement/sync', body: {} }),
  observeDeposit: async () => ({ who: 'operator', path: '/v1/ops/settlement/observations', body: { coordinate: stray } }),
  rescanInbox: async () => ({ who: 'operator', path: '/v1/ops/settlement/rescans', body: { from: 1, to: 10 } }),
  compareSettlement: async () => ({ who: 'operator', path: '/v1/ops/settlement/comparisons', body: {} }),
  placeLayerDeposit: async () => ({ who: 'operator', path: '/v1/ops/layer/deposits', body: { asset: 'USD', amount: '1', account_ref: 'ee'.repeat(32) } }),
  addMember: async () => ({ who: 'operator', path: '/v1/ops/members', body: newMember() }),
  setMemberRole: async () => ({ who: 'operator', path: `/v1/ops/members/${await freshMember()}/role`, body: { role: 'operator' } }),
  removeMember: async () => ({ who: 'operator', path: `/v1/ops/members/${await freshMember()}/remove`, body: {} }),
  createProposal: async () => ({ who: 'operator', path: '/v1/ops/proposals', body: { request: proposed, justification: 'replies' } }),
  // Root approves the proposal of another member (an operator added for it).
  approveProposal: async () => ({ who: 'operator', path: `/v1/ops/proposals/${await proposalBy(await proposer())}/approve`, body: {} }),
  rejectProposal: async () => ({ who: 'operator', path: `/v1/ops/proposals/${await proposalBy(shared.as('operator'))}/reject`, body: { reason: 'replies' } }),
  // Root is the only admin: nobody could approve it, so it is taken directly.
  setApprovalPolicy: async () => ({ who: 'operator', path: '/v1/ops/approvals/policy', body: { rules: ['members', 'policy', 'backup', 'legal_disclosure'] } }),
};

/** What the proposals of the samples carry: an operator's transfer. */
const proposed = { method: 'POST', path: '/v1/transfers', body: { legs: [{ from: acct('alice'), to: acct('bob'), asset: 'USD', amount: '1' }] } };
/** An operator member's client, added once. */
let proposerApi: Client | null = null;
async function proposer(): Promise<Client> {
  if (proposerApi === null) {
    const added = await shared.as('operator').post('/v1/ops/members', { name: 'replies-proposer', role: 'operator', scheme: 'api-key' }, undefined, { 'client-key': freshKey() });
    proposerApi = client(() => shared.daemon.url, added.body.api_key as string);
  }
  return proposerApi;
}
async function proposalBy(api: Client): Promise<string> {
  const r = await api.post('/v1/ops/proposals', { request: proposed, justification: 'replies' }, undefined, { 'client-key': freshKey() });
  return (await decided(api, r.body.operation_reference)).body.result.proposal as string;
}

/** A member of the operator for one sample: an auditor with an API key. */
const newMember = () => ({ name: `replies-${++symbols}`, role: 'auditor', scheme: 'api-key' });
const freshMember = async () => (await decidedAs('operator', '/v1/ops/members', newMember())).result.credential as string;

interface Operation {
  readonly operationId: string;
  readonly responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}
let doc: { paths: Record<string, Record<string, Operation>> } & Record<string, unknown>;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as new (options: object) => {
  addSchema(schema: object, key: string): void;
  compile(schema: object): ((data: unknown) => boolean) & { errors?: unknown };
};
let ajv: InstanceType<typeof Ajv2020>;

/** Checks `r` against the document's schema for its status on `path` (JSON pointer escaped), naming what differs. */
function conforms(path: string, r: Reply, where: string): void {
  const pointer = `doc#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/post/responses/${r.status}/content/application~1json/schema`;
  const documented = (doc.paths[path]!.post!.responses[String(r.status)] ?? {}).content?.['application/json'];
  expect(documented, `${where}: status ${r.status} is documented (${r.text.slice(0, 200)})`).toBeDefined();
  const validate = ajv.compile({ $ref: pointer });
  expect(validate(r.body), `${where}: ${r.status} ${r.text.slice(0, 300)}\n${JSON.stringify(validate.errors)}`).toBe(true);
}

beforeAll(async () => {
  doc = (await shared.as('operator').get('/v1/openapi.json')).body;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(doc, 'doc');
  const verifier = Buffer.from(ed.getPublicKey(aliceSecret)).toString('hex');
  aliceKey = (await decidedAs('alice', '/v1/credentials', { marker: 'ordinary', scheme: 'key', verifier })).result.credential;
  // USD bound to the embedded layer (withdrawals, deposits), a stray deposit to observe, a final checkpoint to disclose on.
  const operator = shared.as('operator');
  await decidedAs('operator', '/v1/ops/assets/USD/binding', { location: 'ab'.repeat(32) });
  for (let i = 0; i < 50 && ((await operator.get('/v1/assets')).body as { id: string; binding: string }[]).find((a) => a.id === 'USD')!.binding !== 'bound'; i++) {
    await operator.post('/v1/ops/layer/blocks', { count: 1 });
  }
  stray = (await operator.post('/v1/ops/layer/deposits', { asset: 'USD', amount: '1', account_ref: '00'.repeat(32) }, undefined, { 'client-key': freshKey() })).body.result.settlement.coordinate;
  expect((await operator.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': freshKey() })).status).toBe(200);
  expect((await operator.post('/v1/ops/layer/blocks', { count: 3 })).status).toBe(200);
});

describe('command replies', () => {
  it('answers every command route with the command reply, 202 or 200 by terminal, the same again under its client key', async () => {
    const posts = Object.entries(doc.paths).flatMap(([path, methods]) => (methods.post ? [{ path, operationId: methods.post.operationId, operation: methods.post }] : []));
    expect(posts.length).toBeGreaterThanOrEqual(30);
    const commandReply = { $ref: '#/components/schemas/CommandReply' };
    // Every sample names a route the document has (a renamed operationId would leave its sample unused).
    expect(Object.keys(samples).filter((name) => !posts.some((p) => p.operationId === name))).toEqual([]);
    for (const { path, operationId, operation } of posts) {
      if (path in notCommands) continue;
      // The document promises the command reply, and only it, for every success.
      const successes = Object.entries(operation.responses).filter(([status]) => status.startsWith('2'));
      expect(successes.length, operationId).toBeGreaterThan(0);
      for (const [status, response] of successes) {
        expect(['200', '202'], `${operationId} ${status}`).toContain(status);
        expect(response.content?.['application/json']?.schema, `${operationId} ${status}`).toEqual(commandReply);
      }
      const make = samples[operationId];
      // A route added without a sample is still called, as the operator with an empty body: its reply must conform.
      const sample: Sample = make === undefined ? { who: 'operator', path: path.replace(/\{[^}]+\}/g, 'x'), body: {} } : await make();
      const api: Client = shared.as(sample.who);
      const key = freshKey();
      const first = await api.post(sample.path, sample.body, undefined, { 'client-key': key });
      conforms(path, first, operationId);
      if (make === undefined) continue;
      expect([200, 202], `${operationId}: ${first.text}`).toContain(first.status);
      expect(first.status === 200, `${operationId}: 200 exactly when terminal`).toBe(first.body.terminal);
      expect(first.body).toMatchObject({ client_key: key, client_key_derived: false });
      const repeat = await api.post(sample.path, sample.body, undefined, { 'client-key': key });
      conforms(path, repeat, `${operationId} repeated`);
      expect(repeat.body.operation_reference, operationId).toBe(first.body.operation_reference);
      if (first.body.terminal) expect(repeat.body.result, operationId).toEqual(first.body.result);
    }
  }, 120_000);

  it('takes a command decided at once under a derived key when none is sent, and answers a repeat from it', async () => {
    const operator = shared.as('operator');
    const body = { asset: 'USD', amount: '3', account_ref: 'dd'.repeat(32) };
    const first = await operator.post('/v1/ops/layer/deposits', body);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ client_key_derived: true, terminal: true, state: 'Completed', result: { settlement: { coordinate: { instance: 1 } } } });
    const again = await operator.post('/v1/ops/layer/deposits', body);
    expect(again.body).toEqual(first.body);
    // The same key with another request is refused, and places nothing.
    const reused = await operator.post('/v1/ops/layer/deposits', { ...body, amount: '4' }, undefined, { 'client-key': first.body.client_key });
    expect(reused.status).toBe(409);
    expect(reused.body.error).toBe('ERR-ClientKeyReused');
  });
});
