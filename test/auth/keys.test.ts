import { randomBytes } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { describe, expect, it } from 'vitest';
import { AssertionFailure } from '../../src/assert.js';
import { reclaimMessage } from '../../src/auth/challenges.js';
import { sessionLifetimeDefaultMs } from '../../src/auth/constants.js';
import { expiryHash } from '../../src/auth/expiry.js';
import { drawApiKey, drawSession, parseKeyVerifier, sessionView, sessionWrites, verifyKeySignature } from '../../src/auth/keys.js';
import { credentialWrites, hashToken, resolveToken, type Credential } from '../../src/auth/credentials.js';
import type { ReadView } from '../../src/store/port.js';
import type { AccountId, CredentialId, IdentityId } from '../../src/model/values.js';
import { refusedWith } from '../support/refusals.js';
import { tokenKey } from '../../src/model/keys.js';

const alice = 'did:ledger:id:alice' as IdentityId;
const cred = 'did:ledger:cred:alice-1' as CredentialId;
const nowMs = 1_700_000_000_000;

/** A read view over a map, enough for resolveToken. */
function viewOf(ops: { key: string; value?: string }[]): ReadView {
  const map = new Map(ops.map((o) => [o.key, o.value ?? '']));
  return { get: async (key: string) => map.get(key) } as unknown as ReadView;
}

describe('scheme key', () => {
  const secret = ed.utils.randomSecretKey();
  const publicHex = Buffer.from(ed.getPublicKey(secret)).toString('hex');

  it('parses a 32-byte public key hex, lowercased', () => {
    expect(parseKeyVerifier(publicHex.toUpperCase())).toBe(publicHex);
  });

  it.each([
    ['not a string', 7],
    ['31 bytes', publicHex.slice(2)],
    ['not hex', 'z'.repeat(64)],
    ['not a curve point', '02' + '00'.repeat(31)],
    ['the identity (small order)', '01' + '00'.repeat(31)],
  ])('refuses a verifier that is %s as ERR-MalformedCommand', (_name, value) => {
    expect(refusedWith(() => parseKeyVerifier(value))).toBe('ERR-MalformedCommand');
  });

  it('verifies a reclaim proof signed over the CONTRACT 5 message, and nothing else', () => {
    const account = 'did:ledger:acct:a1' as AccountId;
    const message = reclaimMessage(account, 2);
    const signature = Buffer.from(ed.sign(message, secret)).toString('hex');
    expect(verifyKeySignature(publicHex, signature, message)).toBeNull();
    expect(verifyKeySignature(publicHex, signature.toUpperCase(), message)).toBeNull();
    // A proof for another epoch or account does not carry over.
    expect(verifyKeySignature(publicHex, signature, reclaimMessage(account, 3))).toMatchObject({ error: 'ERR-CredentialInvalid' });
    expect(verifyKeySignature(publicHex, signature, reclaimMessage('did:ledger:acct:a2' as AccountId, 2))).toMatchObject({ error: 'ERR-CredentialInvalid' });
    const other = Buffer.from(ed.getPublicKey(ed.utils.randomSecretKey())).toString('hex');
    expect(verifyKeySignature(other, signature, message)).toMatchObject({ error: 'ERR-CredentialInvalid' });
  });

  it('refuses malformed and tampered signatures as ERR-CredentialInvalid', () => {
    const message = new TextEncoder().encode('m');
    const signature = Buffer.from(ed.sign(message, secret));
    const tampered = Buffer.from(signature);
    tampered[10]! ^= 1;
    expect(verifyKeySignature(publicHex, tampered.toString('hex'), message)).toMatchObject({ error: 'ERR-CredentialInvalid' });
    expect(verifyKeySignature(publicHex, signature.toString('hex').slice(2), message)).toMatchObject({ error: 'ERR-CredentialInvalid' });
    expect(verifyKeySignature(publicHex, null, message)).toMatchObject({ error: 'ERR-CredentialInvalid' });
    // S at or above the group order is not a signature under RFC 8032.
    const highS = Buffer.concat([signature.subarray(0, 32), Buffer.alloc(32, 0xff)]);
    expect(verifyKeySignature(publicHex, highS.toString('hex'), message)).toMatchObject({ error: 'ERR-CredentialInvalid' });
  });
});

describe('scheme api-key', () => {
  it('draws a tagged token of the random bytes and keeps only its hash', async () => {
    const bytes = randomBytes(32);
    const drawn = drawApiKey(bytes);
    expect(drawn.token).toBe(`ledger_ak_${bytes.toString('base64url')}`);
    expect(drawn.hash).toBe(hashToken(drawn.token));
    const credential: Credential = { id: cred, identity: alice, scheme: 'api-key', verifier: null, scope: null, createdAtMs: nowMs, webauthnId: null, counter: 0 };
    const writes = credentialWrites(credential, drawn.token);
    expect(writes.some((w) => w.type === 'put' && w.value.includes(drawn.token))).toBe(false);
    const view = viewOf(writes.map((w) => ({ key: w.key, value: w.type === 'put' ? w.value : undefined })));
    expect(await resolveToken(view, drawn.token, nowMs)).toMatchObject({ principal: alice, credential: cred, scheme: 'api-key', expiresAtMs: null });
  });

  it('asserts at least 32 random bytes', () => {
    expect(() => drawApiKey(randomBytes(31))).toThrow(AssertionFailure);
  });
});

describe('sessions', () => {
  const draw = (lifetimeMs?: number) =>
    drawSession({ randomBytes: randomBytes(32), credential: cred, principal: alice, scheme: 'webauthn-es256', nowMs, ...(lifetimeMs === undefined ? {} : { lifetimeMs }) });

  it('last 12 h by default, resolve until then and not after', async () => {
    const { token, grant } = draw();
    expect(token.startsWith('ledger_st_')).toBe(true);
    expect(grant).toEqual({ credential: cred, principal: alice, scheme: 'webauthn-es256', expiresAtMs: nowMs + sessionLifetimeDefaultMs, hash: hashToken(token) });
    expect(sessionView(token, grant)).toEqual({ session: token, expires_at: nowMs + 12 * 3600 * 1000, principal: alice, credential: cred });
    const writes = sessionWrites(grant);
    expect(writes.map((w) => w.key)).toEqual([tokenKey(grant.hash), expect.stringMatching(/^tokx\/[0-9a-f]{16}\//)]);
    expect(expiryHash(writes[1]!.key)).toBe(grant.hash);
    expect(JSON.stringify(writes)).not.toContain(token);
    const view = viewOf(writes.map((w) => ({ key: w.key, value: w.type === 'put' ? w.value : undefined })));
    expect(await resolveToken(view, token, grant.expiresAtMs! - 1)).toMatchObject({ principal: alice, expiresAtMs: grant.expiresAtMs });
    expect(await resolveToken(view, token, grant.expiresAtMs!)).toBeNull();
    expect(await resolveToken(view, token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'), nowMs)).toBeNull();
  });

  it('take a configured lifetime within bounds and are distinct per draw', () => {
    expect(draw(60_000).grant.expiresAtMs).toBe(nowMs + 60_000);
    expect(() => draw(0)).toThrow(AssertionFailure);
    expect(() => draw(365 * 24 * 3600 * 1000)).toThrow(AssertionFailure);
    expect(draw().token).not.toBe(draw().token);
  });
});
