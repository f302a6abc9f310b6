/**
 * Fuzzing the real daemon: 10,000 generated malformed requests across every route.
 * Each request starts from a valid one and takes at least one change that makes it
 * malformed (unknown member or parameter, a value that does not parse, a wrong type,
 * a missing member, a body that is not a JSON object, a wrong content type, an
 * oversized header, a bad bearer, an unknown route or method). Every reply must be
 * a well-formed refusal with its CONTRACT 6 status, never a 500; the daemon must stay
 * up, and the book must be unchanged.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { httpStatus } from '../../daemon/http/status.js';
import { isErrorCode } from '../../src/errors.js';
import { type Reply, useDaemon } from './support.js';

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const shared = useDaemon({ alice: 1_000n, bob: 1_000n });
const api = shared.as('alice');

interface Req {
  method: string;
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  body: string | undefined;
}

type Json = Record<string, unknown>;

/** Valid requests, one per route: the starting points of every mutation. */
const commandRoutes: { path: string; body: Json; strings: string[] }[] = [
  { path: '/v1/transfers', body: { legs: [{ amount: '1', asset: 'USD', from: alice, to: bob }], reference: 'r' }, strings: [] },
  { path: '/v1/reservations', body: { amount: '1', asset: 'USD', payer: alice }, strings: ['amount', 'asset', 'payer'] },
  { path: '/v1/reservations/op_0000000000000001/capture', body: { to: bob, amount: '1' }, strings: ['to', 'amount'] },
  { path: '/v1/reservations/op_0000000000000001/release', body: {}, strings: [] },
  { path: '/v1/accounts', body: { custody: 'delegated', kind: 'customer', owner: 'did:ledger:id:alice' }, strings: ['custody', 'kind', 'owner'] },
  { path: '/v1/ops/members', body: { name: 'fuzz', role: 'auditor', scheme: 'api-key' }, strings: ['name', 'role', 'scheme'] },
  { path: '/v1/ops/members/did:ledger:cred:operator/role', body: { role: 'operator' }, strings: ['role'] },
  { path: '/v1/ops/members/did:ledger:cred:operator/remove', body: {}, strings: [] },
  { path: '/v1/ops/check', body: {}, strings: [] },
  { path: '/v1/ops/proposals', body: { request: { method: 'POST', path: '/v1/transfers', body: { legs: [{ amount: '1', asset: 'USD', from: alice, to: bob }] } }, justification: 'fuzz' }, strings: ['justification'] },
  { path: '/v1/ops/proposals/did:ledger:proposal:00/approve', body: {}, strings: [] },
  { path: '/v1/ops/proposals/did:ledger:proposal:00/reject', body: { reason: 'fuzz' }, strings: ['reason'] },
  { path: '/v1/ops/approvals/policy', body: { rules: ['policy'], ttlMs: 60000 }, strings: [] },
  { path: '/v1/batches', body: { commands: [{ command: 'transfer', body: { legs: [{ amount: '1', asset: 'USD', from: alice, to: bob }] } }] }, strings: ['commands'] },
];
const queryRoutes: { path: string; query: Record<string, string>; known: string[]; required: string[]; parsed: string[] }[] = [
  { path: '/v1/statements', query: { account: alice, asset: 'USD', from: '0', to: '1' }, known: ['account', 'asset', 'from', 'to', 'as_of'], required: ['account', 'asset', 'from', 'to'], parsed: ['account', 'asset', 'from', 'to', 'as_of'] },
  { path: '/v1/movements', query: { account: alice, limit: '10' }, known: ['account', 'identity', 'limit', 'from', 'to', 'asset', 'direction', 'cursor'], required: ['limit'], parsed: ['account', 'identity', 'limit', 'from', 'to', 'asset', 'direction', 'cursor'] },
  { path: '/v1/trial-balance', query: {}, known: ['asset', 'amount'], required: [], parsed: ['asset'] },
  { path: `/v1/accounts/${alice}`, query: {}, known: [], required: [], parsed: [] },
  { path: '/v1/assets', query: {}, known: [], required: [], parsed: [] },
  { path: '/v1/aliases', query: { source: 'ledger', name: 'treasury:USD' }, known: ['source', 'name'], required: [], parsed: [] },
  { path: '/v1/operations/op_0000000000000001', query: {}, known: [], required: [], parsed: [] },
  { path: '/v1/events', query: {}, known: ['after'], required: [], parsed: ['after'] },
  { path: '/v1/ops/members', query: {}, known: [], required: [], parsed: [] },
  ...(
    [
      ['identities', ['status']],
      ['accounts', ['kind', 'status', 'custody', 'asset', 'owner']],
      ['operations', ['state', 'command', 'principal', 'from', 'to']],
      ['reservations', []],
      ['grants', ['grantor', 'holder', 'state']],
    ] as const
  ).map(([listing, filters]) => {
    const known = ['limit', 'cursor', ...filters];
    return { path: `/v1/ops/${listing}`, query: { limit: '10' }, known, required: [], parsed: known };
  }),
  { path: '/v1/ops/check', query: {}, known: [], required: [], parsed: [] },
  { path: '/v1/ops/proposals', query: { limit: '10', state: 'open' }, known: ['state', 'limit', 'cursor'], required: [], parsed: ['state', 'limit', 'cursor'] },
  { path: '/v1/ops/proposals/did:ledger:proposal:00', query: {}, known: [], required: [], parsed: [] },
  { path: '/v1/ops/approvals/policy', query: {}, known: [], required: [], parsed: [] },
  { path: '/v1/health', query: {}, known: [], required: [], parsed: [] },
  { path: '/v1/openapi.json', query: {}, known: [], required: [], parsed: [] },
];

const base = (method: string, path: string, query: [string, string][], body?: Json): Req => ({
  method,
  path,
  query,
  headers: body === undefined ? {} : { 'content-type': 'application/json' },
  body: body === undefined ? undefined : JSON.stringify(body),
});

const name = fc.string({ minLength: 1, maxLength: 12 });
/** A text that no parser of a query value accepts: '!' starts no id, symbol, number, direction or hex. */
const garbage = fc.string({ maxLength: 20 }).map((s) => `!${s}`);
const notString = fc.oneof(fc.integer(), fc.boolean(), fc.array(fc.integer(), { maxLength: 2 }), fc.dictionary(name, fc.integer(), { maxKeys: 2 }));
/** Printable ASCII without spaces (what a header value may carry). */
const visible = (s: string) => s.replace(/[^\x21-\x7e]/g, 'x');
// Built once: building arbitraries (jsonValue above all) inside `chain` per value is slow.
const anyJson = fc.jsonValue({ maxDepth: 3 });
const nonObjectJson = anyJson.filter((v) => typeof v !== 'object' || v === null || Array.isArray(v));
const notJsonText = fc.string({ maxLength: 40 }).filter((t) => {
  try {
    JSON.parse(t);
    return false;
  } catch {
    return true;
  }
});
const contentTypes = fc.constantFrom('text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data', 'application/jsonx');
const longClientKey = fc.string({ maxLength: 40 }).map((s) => `${'k'.repeat(257)}${visible(s)}`);
const wellFormedRef = fc.oneof(fc.stringMatching(/^op_[0-9a-f]{0,40}$/), fc.stringMatching(/^[A-Za-z0-9_.-]{1,128}$/));
const wellFormedAccount = fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/).filter((id) => id !== 'alice').map((id) => `did:ledger:acct:${id}`);
const badIdentity = fc.stringMatching(/^[a-z!]{1,12}$/).map((who) => `!${who}`);

const commandRequest: fc.Arbitrary<Req> = fc.constantFrom(...commandRoutes).chain((route) => {
  const req = (body: Json | undefined, patch: Partial<Req> = {}): Req => ({ ...base('POST', route.path, [], body), ...patch });
  const mutations: fc.Arbitrary<Req>[] = [
    fc.tuple(name, anyJson)
      .filter(([n]) => !(n in route.body) && !['reference', 'deadline', 'acknowledged', 'treasury_limits'].includes(n))
      .map(([n, v]) => req({ ...route.body, [n]: v })),
    notJsonText.map((t) => req(undefined, { headers: { 'content-type': 'application/json' }, body: t })),
    nonObjectJson.map((v) => req(undefined, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(v) })),
    contentTypes.map((type) => req(route.body, { headers: { 'content-type': type } })),
    longClientKey.map((k) => req(route.body, { headers: { 'content-type': 'application/json', 'client-key': k } })),
    badIdentity.map((who) => req(route.body, { headers: { 'content-type': 'application/json', 'on-behalf-of': who } })),
    fc.tuple(name, garbage).map(([k, v]) => ({ ...req(route.body), query: [[k, v]] as [string, string][] })),
  ];
  if (route.strings.length > 0) {
    mutations.push(fc.tuple(fc.constantFrom(...route.strings), notString).map(([k, v]) => req({ ...route.body, [k]: v })));
    mutations.push(fc.constantFrom(...route.strings).map((k) => req(Object.fromEntries(Object.entries(route.body).filter(([m]) => m !== k)))));
  }
  if (route.path === '/v1/transfers') {
    mutations.push(fc.tuple(fc.constantFrom('amount', 'asset', 'from', 'to'), fc.oneof(notString, garbage)).map(([k, v]) => req({ legs: [{ ...(route.body.legs as Json[])[0], [k]: v }] })));
  }
  return fc.oneof(...mutations);
});

const queryRequest: fc.Arbitrary<Req> = fc.constantFrom(...queryRoutes).chain((route) => {
  const entries = Object.entries(route.query);
  const req = (query: [string, string][], path = route.path): Req => base('GET', path, query);
  const mutations: fc.Arbitrary<Req>[] = [
    fc.tuple(name.filter((n) => !route.known.includes(n)), fc.string({ maxLength: 10 })).map(([k, v]) => req([...entries, [k, v]])),
    fc.string({ minLength: 1, maxLength: 20 }).map((extra) => req(entries, `${route.path}/${encodeURIComponent(extra)}`)),
  ];
  if (route.parsed.length > 0) {
    mutations.push(fc.tuple(fc.constantFrom(...route.parsed), garbage).map(([k, v]) => req([...entries.filter(([e]) => e !== k), [k, v]])));
  }
  const known = route.known.filter((k) => k !== 'amount');
  if (known.length > 0) mutations.push(fc.constantFrom(...known).map((k) => req([...entries, [k, 'x'], [k, 'y']])));
  if (route.required.length > 0) mutations.push(fc.constantFrom(...route.required).map((k) => req(entries.filter(([e]) => e !== k))));
  if (route.path.startsWith('/v1/accounts/') || route.path.startsWith('/v1/operations/')) {
    const prefix = route.path.slice(0, route.path.lastIndexOf('/') + 1);
    mutations.push(garbage.map((g) => req([], prefix + encodeURIComponent(g))));
    // Well-formed but unknown: refused too (unknown, or not the caller's), never a 500.
    const unknownId = route.path.startsWith('/v1/accounts/') ? wellFormedAccount : wellFormedRef;
    mutations.push(unknownId.map((id) => req([], prefix + encodeURIComponent(id))));
  }
  return fc.oneof(...mutations);
});

const strayRequest: fc.Arbitrary<Req> = fc.oneof(
  fc.string({ minLength: 1, maxLength: 30 }).map((p) => base('GET', `/v1/${encodeURIComponent(p)}x`, [])),
  fc.tuple(fc.constantFrom('PUT', 'PATCH', 'DELETE', 'OPTIONS'), fc.constantFrom(...commandRoutes.map((r) => r.path), ...queryRoutes.map((r) => r.path))).map(([m, p]) => base(m, p, [], {})),
  fc.constantFrom(...queryRoutes.map((r) => r.path)).map((p) => base('POST', p, [], {})),
);

/** A malformed request, sometimes also with a bad bearer (which alone is a refusal). */
const malformedRequest = fc.tuple(fc.oneof({ weight: 4, arbitrary: commandRequest }, { weight: 4, arbitrary: queryRequest }, { weight: 1, arbitrary: strayRequest }), fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 40 }).map(visible) })).map(
  ([req, badToken]) => ({ ...req, headers: { authorization: `Bearer ${badToken ?? shared.keys.customers.alice}`, ...req.headers } }),
);

async function send(req: Req) {
  const qs = req.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  return api.raw(req.method, qs ? `${req.path}?${qs}` : req.path, { body: req.body, headers: req.headers });
}

function isWellFormedRefusal(r: Reply): boolean {
  const body = r.body as Record<string, unknown> | undefined;
  if (typeof body !== 'object' || body === null || Object.keys(body).sort().join() !== 'description,error') return false;
  if (typeof body.description !== 'string' || typeof body.error !== 'string' || !isErrorCode(body.error)) return false;
  if (r.status !== httpStatus(body.error) || r.status === 500) return false;
  return r.status !== 503 || /^[0-9]+$/.test(String(r.headers['retry-after']));
}

async function bookState(): Promise<string> {
  const operator = shared.as('operator');
  const parts = await Promise.all([
    operator.get('/v1/trial-balance'),
    operator.get(`/v1/movements?account=${alice}&limit=1000`),
    operator.get(`/v1/movements?account=${bob}&limit=1000`),
    operator.get('/v1/movements?account=did:ledger:acct:treasury-USD&limit=1000'),
  ]);
  for (const p of parts) expect(p.status).toBe(200);
  return parts.map((p) => p.text).join('\n');
}

const requestsPerRun = 50;
const runs = Number(process.env.FUZZ_RUNS ?? 200);

it(`refuses ${requestsPerRun * runs} generated malformed requests across every route, stays up, and leaves the book unchanged`, async () => {
  const before = await bookState();
  let sent = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(malformedRequest, { minLength: requestsPerRun, maxLength: requestsPerRun }), async (batch) => {
      const replies = await Promise.all(batch.map(send));
      // One expectation per batch keeps the run fast; the message names the first bad reply.
      const bad = replies.findIndex((r) => !isWellFormedRefusal(r));
      const req = batch[bad];
      expect(bad, req && `${req.method} ${req.path} ${JSON.stringify(req.query)} ${JSON.stringify(req.headers)} ${req.body ?? ''} -> ${replies[bad]!.status} ${replies[bad]!.text}`).toBe(-1);
      sent += batch.length;
    }),
    { numRuns: runs },
  );
  expect(sent).toBeGreaterThanOrEqual(10_000);
  expect(shared.daemon.process.exitCode).toBeNull();
  expect((await api.get('/v1/health', null)).status).toBe(200);
  expect(await bookState()).toBe(before);
});

/** Well-formed commands with arbitrary values: accepted or refused, never a 500, and the book stays balanced. */
const someAccount = fc.constantFrom(alice, bob, 'did:ledger:acct:treasury-USD', 'did:ledger:acct:nobody');
const someAsset = fc.constantFrom('USD', 'EUR', 'BTC', 'XAU');
const someAmount = fc.oneof(fc.bigInt({ min: 0n, max: 2_000n }), fc.bigInt({ min: 0n, max: (1n << 129n) })).map(String);
const someDeadline = fc.option(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2 ** 31 }).map((d) => Date.now() + d)), { nil: undefined });
const wellFormedCommand: fc.Arbitrary<{ path: string; body: Json }> = fc.oneof(
  fc.tuple(fc.array(fc.record({ amount: someAmount, asset: someAsset, from: someAccount, to: someAccount }), { minLength: 1, maxLength: 4 }), someDeadline).map(([legs, deadline]) => ({ path: '/v1/transfers', body: { legs, ...(deadline === undefined ? {} : { deadline }) } })),
  fc.record({ amount: someAmount, asset: someAsset, payer: someAccount }).map((body) => ({ path: '/v1/reservations', body })),
  fc.record({ custody: fc.constantFrom('delegated', 'owned'), kind: fc.constantFrom('customer', 'treasury'), owner: fc.constantFrom('did:ledger:id:alice', 'did:ledger:id:bob', 'did:ledger:id:nobody') }).map((body) => ({ path: '/v1/accounts', body })),
);

it('answers 1,000 well-formed commands with arbitrary values, alone and in batches, by an acknowledgement or a refusal, never a 500, and stays balanced', async () => {
  const operator = shared.as('operator');
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(wellFormedCommand, fc.constantFrom('alice', 'operator')), { minLength: 20, maxLength: 20 }), async (batch) => {
      const replies = await Promise.all(batch.map(([cmd, who]) => shared.as(who).post(cmd.path, cmd.body)));
      const bad = replies.findIndex((r) => r.status !== 200 && r.status !== 202 && !isWellFormedRefusal(r));
      expect(bad, bad === -1 ? '' : `${JSON.stringify(batch[bad])} -> ${replies[bad]!.status} ${replies[bad]!.text}`).toBe(-1);
      // The same commands again as one batch (fresh values: the single routes' keys are not repeated): each item a reply or a refusal.
      const asBatch = batch.filter(([cmd]) => cmd.path !== '/v1/accounts').map(([cmd]) => ({ command: cmd.path === '/v1/transfers' ? 'transfer' : 'reservation', body: { ...cmd.body, reference: 'batch' } }));
      if (asBatch.length === 0) return;
      const r = await shared.as('alice').post('/v1/batches', { commands: asBatch });
      expect([200, 202], r.text).toContain(r.status);
      for (const item of r.body.items) {
        if (item.operation_reference === undefined) expect(isWellFormedRefusal({ ...r, status: httpStatus(item.error), body: item }), JSON.stringify(item)).toBe(true);
      }
    }),
    { numRuns: 50 },
  );
  const tb = await operator.get('/v1/trial-balance');
  expect(tb.status).toBe(200);
  expect(tb.body.unbalanced).toEqual([]);
  expect(tb.body.rows.every((r: { openings: string }) => r.openings === '0')).toBe(true);
  expect(shared.daemon.process.exitCode).toBeNull();
});
