/**
 * Defects of the edge found by attacking the running daemon (issue 9), each through a
 * real ledgerd: client keys bound to who acts; refusals the framework or Node make
 * before a route runs; identifiers that reveal neither each other nor the book's size;
 * challenges that cost nothing until used, so no anonymous flood locks sign-in out.
 */
import { readdirSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpStatus } from '../../daemon/http/status.js';
import type { ErrorCode } from '../../src/errors.js';
import { SoftwareAuthenticator } from '../support/authenticator.js';
import { type Client, type Reply, client, decided, refusalOf, startDaemon, useDaemon } from './support.js';

const requestTimeoutMs = 1_000;
const shared = useDaemon({ alice: 1_000n, bob: 1_000n }, { requestTimeoutMs });
const identities = shared.as('identities');
const asAlice = shared.as('alice');
const alice = 'did:ledger:id:alice';
const bob = 'did:ledger:id:bob';
let keyCounter = 0;
const bearing = (token: string) => client(() => shared.daemon.url, token);
const freshKey = () => `edge-${Date.now()}-${++keyCounter}`;
const apiKeyBody = { marker: 'ordinary', scheme: 'api-key' };

describe('client keys are bound to the identity acted for, and to the scope', () => {
  it('refuses the same client key and body with another on-behalf-of (ERR-ClientKeyReused), never answering with the first operation', async () => {
    const key = freshKey();
    const forAlice = await identities.post('/v1/credentials', apiKeyBody, undefined, { 'client-key': key, 'on-behalf-of': alice });
    expect([200, 202]).toContain(forAlice.status);
    const forBob = await identities.post('/v1/credentials', apiKeyBody, undefined, { 'client-key': key, 'on-behalf-of': bob });
    expect(refusalOf(forBob), forBob.text).toEqual({ status: 409, error: 'ERR-ClientKeyReused' });
    // Acting for itself is the same as omitting the header: that, too, is another request.
    expect(refusalOf(await identities.post('/v1/credentials', apiKeyBody, undefined, { 'client-key': key }))).toEqual({ status: 409, error: 'ERR-ClientKeyReused' });
    // The first request repeated is still answered with its own operation.
    const again = await identities.post('/v1/credentials', apiKeyBody, undefined, { 'client-key': key, 'on-behalf-of': alice });
    expect(again.body.operation_reference).toBe(forAlice.body.operation_reference);
    expect(again.body.api_key).toBeNull();
  });

  it('derives different keys for different on-behalf-of: each gets its own operation and its own API key', async () => {
    const forAlice = await identities.post('/v1/credentials', apiKeyBody, undefined, { 'on-behalf-of': alice });
    const forBob = await identities.post('/v1/credentials', apiKeyBody, undefined, { 'on-behalf-of': bob });
    expect(forBob.body.operation_reference).not.toBe(forAlice.body.operation_reference);
    expect(forBob.body.client_key).not.toBe(forAlice.body.client_key);
    const views = [await decided(identities, forAlice.body.operation_reference), await decided(identities, forBob.body.operation_reference)];
    expect(views.map((v) => v.body.state)).toEqual(['Completed', 'Completed']);
    // Each API key signs in as the identity it was made for.
    for (const [r, who] of [[forAlice, alice], [forBob, bob]] as const) {
      expect(typeof r.body.api_key).toBe('string');
      const whoami = await bearing(r.body.api_key).get('/v1/whoami');
      expect(whoami.body.principal).toBe(who);
    }
  });

  it('refuses a client key reused by a credential of the same principal with another scope', async () => {
    const scoped = await asAlice.post('/v1/credentials', { ...apiKeyBody, scope: ['did:ledger:acct:alice'] }, undefined, { 'client-key': freshKey() });
    expect(typeof scoped.body.api_key).toBe('string');
    const asScoped = bearing(scoped.body.api_key);
    const key = freshKey();
    const first = await asAlice.post('/v1/credentials', apiKeyBody, undefined, { 'client-key': key });
    expect([200, 202]).toContain(first.status);
    expect(refusalOf(await asScoped.post('/v1/credentials', apiKeyBody, undefined, { 'client-key': key }))).toEqual({ status: 409, error: 'ERR-ClientKeyReused' });
  });
});

/** Writes `bytes` on a fresh connection (optionally pausing before `rest`) and resolves with all that comes back. */
function rawHttp(bytes: string, rest?: { afterMs: number; bytes: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(shared.daemon.port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
    socket.write(bytes);
    if (rest) setTimeout(() => socket.writable && socket.write(rest.bytes), rest.afterMs);
  });
}

/** The one refusal a raw response holds: its status line and `{error, description}` body. */
function rawRefusal(response: string): { status: number; error: string } {
  const head = /^HTTP\/1\.1 (\d{3}) /.exec(response);
  expect(head, response).not.toBeNull();
  const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['description', 'error']);
  expect(response.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  return { status: Number(head![1]), error: body.error as string };
}

/** A refusal in the spec's shape with the status CONTRACT 6 gives its code. */
function wellFormedRefusal(r: Reply, what: string): { status: number; error: string } {
  const got = refusalOf(r);
  expect(got.status, `${what}: ${r.text}`).toBe(httpStatus(got.error as ErrorCode));
  return got;
}

describe('refusals made before a route runs', () => {
  const malformed = { status: 400, error: 'ERR-MalformedCommand' };

  it('answers every route with a path parameter in the refusal shape, whatever the parameter: too long, badly encoded', async () => {
    const doc = (await shared.as('operator').get('/v1/openapi.json', null)).body as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(doc.paths).flatMap(([path, methods]) => (path.includes('{') ? Object.keys(methods).map((m) => [m.toUpperCase(), path] as const) : []));
    expect(routes.length).toBeGreaterThanOrEqual(6);
    const api = shared.as('operator');
    for (const [method, path] of routes) {
      const at = (value: string) => path.replace(/\{[^}]+\}/g, value);
      const send = (value: string) => api.raw(method, at(value), { body: method === 'POST' ? '{}' : undefined, headers: { authorization: `Bearer ${shared.keys.operator}`, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) } });
      for (const value of ['a'.repeat(101), 'a'.repeat(129), 'did:ledger:acct:' + 'x'.repeat(2000), '%zz', '%E0%A4%A', '%00']) {
        const r = await send(value);
        const got = wellFormedRefusal(r, `${method} ${path} with ${value.slice(0, 20)}… (${value.length})`);
        if (value.length > 128 || value.startsWith('%E0') || value === '%zz') expect(got, `${method} ${path}`).toEqual(malformed);
      }
      // Without a bearer too: the router's refusal comes first, in the same shape.
      expect(refusalOf(await api.raw(method, at('b'.repeat(300)), {}))).toEqual(malformed);
    }
  });

  it('answers a request not received whole within requestTimeoutMs with ERR-MalformedCommand, not a bare 408', async () => {
    const started = Date.now();
    const partial = `POST /v1/transfers HTTP/1.1\r\nHost: x\r\nauthorization: Bearer ${shared.keys.operator}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"legs"`;
    expect(rawRefusal(await rawHttp(partial))).toEqual(malformed);
    // Node checks once a second; the default headers timeout (60 s) no longer caps a shorter bound.
    expect(Date.now() - started).toBeLessThan(requestTimeoutMs + 3_000);
    const headersOnly = 'GET /v1/health HTTP/1.1\r\nHost: x\r\n';
    expect(rawRefusal(await rawHttp(headersOnly))).toEqual(malformed);
  });

  it('answers a refusal sent before the body arrived once, and closes the connection', async () => {
    const unauthenticated = 'POST /v1/transfers HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"legs"';
    const response = await rawHttp(unauthenticated, { afterMs: requestTimeoutMs + 1_500, bytes: 'x'.repeat(93) });
    expect(rawRefusal(response)).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
  });

  it('answers an Expect header it cannot meet with ERR-MalformedCommand, not a bare 417', async () => {
    const request = `POST /v1/transfers HTTP/1.1\r\nHost: x\r\nauthorization: Bearer ${shared.keys.operator}\r\ncontent-type: application/json\r\nexpect: the-unexpected\r\ncontent-length: 2\r\n\r\n{}`;
    expect(rawRefusal(await rawHttp(request))).toEqual(malformed);
  });

  it('answers bad encoding in the query, malformed JSON and a wrong content type in the refusal shape', async () => {
    const api = shared.as('operator');
    expect(refusalOf(await api.get('/v1/health?%zz=1', null))).toEqual(malformed);
    expect(refusalOf(await api.post('/v1/transfers', '{"legs":'))).toEqual(malformed);
    expect(refusalOf(await api.raw('POST', '/v1/transfers', { body: '{}', headers: { authorization: `Bearer ${shared.keys.operator}`, 'content-type': 'text/plain' } }))).toEqual(malformed);
    expect(refusalOf(await api.raw('PATCH', '/v1/operations/op_1', { headers: { authorization: `Bearer ${shared.keys.operator}` } }))).toEqual(malformed);
  });

  it('lists the refusals made before a route runs in the OpenAPI document, on every operation', async () => {
    type Ref = { $ref?: string };
    const doc = (await shared.as('operator').get('/v1/openapi.json', null)).body as {
      paths: Record<string, Record<string, { responses: Record<string, Ref>; parameters: { in: string; schema: Ref }[] }>>;
    };
    // Shared responses and schemas are `#/components/...` references.
    const resolve = <T>(value: Ref): T => (value.$ref === undefined ? value : resolve(value.$ref.slice(2).split('/').reduce((o: any, k) => o[k], doc))) as T;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        expect(resolve<{ description: string }>(operation.responses['400']!).description, `${method} ${path}`).toMatch(/path parameter over 128 characters.*percent-encoded.*requestTimeoutMs/);
        expect(operation.responses['503'], `${method} ${path}`).toBeDefined();
        for (const p of operation.parameters.filter((p) => p.in === 'path')) expect(resolve<{ maxLength: number }>(p.schema).maxLength).toBeLessThanOrEqual(128);
      }
    }
  });
});

/** Submits and waits for the decision; the completed operation's view. */
async function completed(api: Client, path: string, body: unknown): Promise<{ ref: string; result: Record<string, string> }> {
  const r = await api.post(path, body, undefined, { 'client-key': freshKey() });
  expect([200, 202], r.text).toContain(r.status);
  const view = (await decided(api, r.body.operation_reference)).body;
  expect(view.state, JSON.stringify(view)).toBe('Completed');
  return { ref: r.body.operation_reference, result: view.result };
}

/** Longest run of characters two texts share. */
function longestCommonRun(a: string, b: string): number {
  let best = 0;
  for (let i = 0; i < a.length; i++) for (let j = 0; j < b.length; j++) {
    let k = 0;
    while (a[i + k] !== undefined && a[i + k] === b[j + k]) k++;
    best = Math.max(best, k);
  }
  return best;
}

/** Bytes the book's files hold on disk. */
const bookBytes = () => readdirSync(join(shared.dir, 'book')).reduce((sum, name) => sum + statSync(join(shared.dir, 'book', name)).size, 0);

describe('challenges cost nothing until used', () => {
  const anonymous = shared.as('operator');
  const challenge = async (purpose: 'authenticate' | 'register', identity: string | null = null): Promise<string> => {
    const r = await anonymous.post('/v1/auth/challenge', { purpose, identity }, null);
    expect(r.status, r.text).toBe(200);
    return r.body.challenge as string;
  };

  it('issues a flood of anonymous challenges without writing to the book, and sign-in and registration still work', async () => {
    const auth = new SoftwareAuthenticator();
    const before = await challenge('authenticate');
    const made = await completed(identities, '/v1/identities', { scheme: 'webauthn-es256', passkey: auth.register(await challenge('register')) });
    const credential = made.result.credential!;
    const bytesBefore = bookBytes();
    const flood = 4_000;
    for (let sent = 0; sent < flood; sent += 200) {
      const batch = await Promise.all(Array.from({ length: 200 }, (_, i) => anonymous.post('/v1/auth/challenge', { purpose: i % 2 === 0 ? 'authenticate' : 'register' }, null)));
      for (const r of batch) expect(r.status).toBe(200);
    }
    // Stored challenges took ~200 bytes each (record and expiry index); MAC'd ones take none.
    expect(bookBytes() - bytesBefore).toBeLessThan(flood * 10);
    // Issued before the flood or after it, a challenge serves its ceremony, once.
    const signIn = (over: string) => anonymous.post('/v1/auth/passkey', { assertion: auth.assert(over), credential }, null);
    expect((await signIn(before)).status).toBe(200);
    expect(refusalOf(await signIn(before))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect((await signIn(await challenge('authenticate'))).status).toBe(200);
    const second = new SoftwareAuthenticator();
    const bound = await challenge('register', made.result.identity!);
    const registered = await identities.post('/v1/credentials', { marker: 'ordinary', scheme: 'webauthn-es256', passkey: second.register(bound) }, undefined, { 'client-key': freshKey(), 'on-behalf-of': made.result.identity! });
    expect((await decided(identities, registered.body.operation_reference)).body.state).toBe('Completed');
  });

  it("refuses a challenge the daemon did not issue, one bound to another identity's set, and one of the other purpose", async () => {
    const auth = new SoftwareAuthenticator();
    const made = await completed(identities, '/v1/identities', { scheme: 'webauthn-es256', passkey: auth.register(await challenge('register')) });
    const credential = made.result.credential!;
    const forged = Buffer.from((await challenge('authenticate')), 'base64url');
    forged[forged.length - 1]! ^= 1;
    for (const over of [forged.toString('base64url'), await challenge('register')]) {
      expect(refusalOf(await anonymous.post('/v1/auth/passkey', { assertion: auth.assert(over), credential }, null))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    }
    const boundToAlice = await challenge('register', alice);
    const forBob = await identities.post('/v1/credentials', { marker: 'ordinary', scheme: 'webauthn-es256', passkey: new SoftwareAuthenticator().register(boundToAlice) }, undefined, { 'client-key': freshKey(), 'on-behalf-of': bob });
    expect(refusalOf(forBob)).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
  });
});

describe('identifiers reveal neither each other nor the book', () => {
  it('draws ids of every kind, and operation references, that share nothing a guess could start from', async () => {
    const operator = shared.as('operator');
    const drawn: string[] = [];
    for (let i = 0; i < 3; i++) {
      const made = await completed(identities, '/v1/identities', { scheme: 'api-key' });
      const account = await completed(operator, '/v1/accounts', { custody: 'delegated', kind: 'customer', owner: made.result.identity });
      drawn.push(made.ref, made.result.identity!, made.result.credential!, account.ref, account.result.account!);
    }
    const grant = await completed(asAlice, '/v1/grants', { kind: 'delegated', principal: bob, subject: { account: 'did:ledger:acct:alice' }, ops: ['transfer'], per_operation: '5' });
    const party = await completed(operator, '/v1/ops/integrating-parties', { principals: [bob] });
    drawn.push(grant.ref, grant.result.grant!, party.ref, party.result.party!);

    const bare = drawn.map((id) => id.replace(/^did:ledger:[a-z]+:/, '').replace(/^op_/, ''));
    for (const id of bare) expect(id).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
    for (const ref of drawn.filter((id) => id.startsWith('op_'))) expect(ref.length).toBeLessThanOrEqual(64);
    expect(new Set(bare).size).toBe(bare.length);
    // A counter shows as a shared run (leading zeros, a common salt); 32 enciphered hex digits share next to none.
    for (let i = 0; i < bare.length; i++) for (let j = i + 1; j < bare.length; j++) {
      expect(longestCommonRun(bare[i]!, bare[j]!), `${drawn[i]} / ${drawn[j]}`).toBeLessThan(8);
    }
    expect(statSync(join(shared.dir, 'daemon.key')).mode & 0o777).toBe(0o600);
  });

  it('keeps finding operations by reference, and drawing fresh ids, after a restart', async () => {
    const first = await completed(identities, '/v1/identities', { scheme: 'api-key' });
    await shared.daemon.stop();
    const again = await startDaemon({ dataDir: shared.dir });
    try {
      const api = client(again.url, shared.keys.identities);
      const view = await api.get(`/v1/operations/${first.ref}`);
      expect(view.status, view.text).toBe(200);
      expect(view.body.result.identity).toBe(first.result.identity);
      const r = await api.post('/v1/identities', { scheme: 'api-key' }, undefined, { 'client-key': freshKey() });
      const next = (await decided(api, r.body.operation_reference)).body;
      expect(next.state).toBe('Completed');
      expect(next.result.identity).not.toBe(first.result.identity);
      expect(longestCommonRun(next.operation_reference, first.ref)).toBeLessThan(12);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });
});
