/**
 * Defects of the edge found by attacking the running daemon (issue 9), each through a
 * real ledgerd: client keys bound to who acts.
 */
import { describe, expect, it } from 'vitest';
import { client, decided, refusalOf, useDaemon } from './support.js';

const shared = useDaemon({ alice: 1_000n, bob: 1_000n });
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
