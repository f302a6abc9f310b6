import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AssertionFailure } from '../../src/assert.js';
import type { Refusal } from '../../src/errors.js';
import type { AccountId, IdentityId } from '../../src/model/values.js';
import {
  type ChallengePurpose,
  type ChallengeRecord,
  challengeExpiryKey,
  challengeKey,
  challengeView,
  consumeChallenge,
  isChallengeText,
  issueChallenge,
  openChallenge,
  reclaimMessage,
} from '../../src/auth/challenges.js';
import { expiryHash } from '../../src/auth/expiry.js';
import { challengeValidityMs } from '../../src/auth/constants.js';
import { defaultRelyingParty as rp, verifyPasskeyRegistration, ceremonyChallenge } from '../../src/auth/webauthn.js';
import { SoftwareAuthenticator } from '../support/authenticator.js';
import { expiryScanEnd } from '../../src/model/keys.js';

const alice = 'did:ledger:id:alice' as IdentityId;
const bob = 'did:ledger:id:bob' as IdentityId;
const nowMs = 1_700_000_000_000;
const isRefusal = (v: object): v is Refusal => 'error' in v;
const macKey = randomBytes(32);

function issued(purpose: ChallengePurpose, identity: IdentityId | null = null) {
  const result = issueChallenge({ macKey, purpose, identity, randomBytes: randomBytes(32), nowMs });
  if (isRefusal(result)) throw new Error(result.description);
  return result;
}

describe('challenge issuance', () => {
  it('gives base64url text carrying its terms and the random bytes, MAC\'d, expiring after the validity bound', () => {
    const bytes = randomBytes(32);
    const result = issueChallenge({ macKey, purpose: 'authenticate', identity: null, randomBytes: bytes, nowMs });
    if (isRefusal(result)) throw new Error(result.description);
    expect(result.record).toEqual({ purpose: 'authenticate', identity: null, expiresAtMs: nowMs + challengeValidityMs, used: false });
    expect(Buffer.from(result.challenge, 'base64url').includes(bytes)).toBe(true);
    expect(isChallengeText(result.challenge)).toBe(true);
    expect(challengeView(result.challenge, result.record)).toEqual({ challenge: result.challenge, expires_at: nowMs + challengeValidityMs });
    expect(openChallenge(macKey, result.challenge, null)).toEqual(result.record);
  });

  it('asserts 32 random bytes', () => {
    expect(() => issueChallenge({ macKey, purpose: 'register', identity: null, randomBytes: randomBytes(31), nowMs })).toThrow(AssertionFailure);
  });

  it('refuses an identity on an authenticate challenge', () => {
    expect(issueChallenge({ macKey, purpose: 'authenticate', identity: alice, randomBytes: randomBytes(32), nowMs })).toMatchObject({ error: 'ERR-MalformedCommand' });
  });

  it('opens only what the key issued: another key, a flipped bit, other terms or another bound identity do not verify', () => {
    const { challenge, record } = issued('register', alice);
    expect(openChallenge(macKey, challenge, alice)).toEqual(record);
    expect(openChallenge(randomBytes(32), challenge, alice)).toMatchObject({ error: 'ERR-CredentialInvalid' });
    expect(openChallenge(macKey, challenge, bob)).toMatchObject({ error: 'ERR-CredentialInvalid', description: expect.stringContaining('another identity') });
    expect(openChallenge(macKey, challenge, null)).toMatchObject({ error: 'ERR-CredentialInvalid' });
    const bytes = Buffer.from(challenge, 'base64url');
    for (const at of [1, 2, 5, 20, bytes.length - 1]) {
      const tampered = Buffer.from(bytes);
      tampered[at]! ^= 1;
      expect(openChallenge(macKey, tampered.toString('base64url'), alice), `byte ${at}`).toMatchObject({ error: 'ERR-CredentialInvalid' });
    }
    expect(openChallenge(macKey, randomBytes(32).toString('base64url'), null)).toMatchObject({ error: 'ERR-CredentialInvalid' });
    // An unbound register challenge serves any set.
    expect(openChallenge(macKey, issued('register').challenge, bob)).toMatchObject({ purpose: 'register', identity: null });
  });

  it('keys records by a hash of the challenge, and indexes expiry in time order', () => {
    const { challenge } = issued('register');
    expect(challengeKey(challenge)).toMatch(/^chal\/[0-9a-f]{64}$/);
    const early = challengeExpiryKey(challenge, 5);
    const late = challengeExpiryKey(challenge, 300);
    expect(early < late).toBe(true);
    expect(early < expiryScanEnd('chalx', 5)).toBe(true);
    expect(late < expiryScanEnd('chalx', 5)).toBe(false);
    expect(`chal/${expiryHash(late)}`).toBe(challengeKey(challenge));
  });

  it('tells challenge text worth a lookup from junk', () => {
    expect(isChallengeText('short')).toBe(false);
    expect(isChallengeText('a'.repeat(43) + '=')).toBe(false);
    expect(isChallengeText('a'.repeat(500))).toBe(false);
  });
});

describe('challenge consumption', () => {
  const use = (purpose: ChallengePurpose, identity: IdentityId | null = null, at = nowMs) => ({ purpose, identity, nowMs: at });

  it('consumes once: the record comes back used, and a second use is refused', () => {
    const { record } = issued('authenticate');
    const used = consumeChallenge(record, use('authenticate'));
    expect(used).toEqual({ ...record, used: true });
    expect(consumeChallenge(used as ChallengeRecord, use('authenticate'))).toMatchObject({ error: 'ERR-CredentialInvalid', description: expect.stringContaining('already used') });
  });

  it('refuses unknown, expired and wrong-purpose challenges', () => {
    const { record } = issued('authenticate');
    expect(consumeChallenge(undefined, use('authenticate'))).toMatchObject({ error: 'ERR-CredentialInvalid' });
    expect(consumeChallenge(record, use('authenticate', null, record.expiresAtMs))).toMatchObject({ error: 'ERR-CredentialInvalid', description: expect.stringContaining('expired') });
    expect(consumeChallenge(record, use('authenticate', null, record.expiresAtMs - 1))).toMatchObject({ used: true });
    expect(consumeChallenge(record, use('register', alice))).toMatchObject({ error: 'ERR-CredentialInvalid' });
  });

  it("serves a bound register challenge only for that identity's set; an unbound one for any", () => {
    const bound = issued('register', alice).record;
    expect(consumeChallenge(bound, use('register', alice))).toMatchObject({ used: true });
    expect(consumeChallenge(bound, use('register', bob))).toMatchObject({ error: 'ERR-CredentialInvalid', description: expect.stringContaining('another identity') });
    expect(consumeChallenge(issued('register').record, use('register', bob))).toMatchObject({ used: true });
  });

  it('drives a whole registration: challenge from client data, record consumed, ceremony verified', async () => {
    const { challenge, record } = issued('register', alice);
    const store = new Map<string, ChallengeRecord>([[challengeKey(challenge), record]]);
    const auth = new SoftwareAuthenticator();
    const body = auth.register(challenge, { format: 'packed' });
    const named = ceremonyChallenge(body.client_data_json);
    expect(named).toBe(challenge);
    const taken = consumeChallenge(store.get(challengeKey(named as string)), use('register', alice));
    expect(isRefusal(taken)).toBe(false);
    store.set(challengeKey(challenge), taken as ChallengeRecord);
    expect(await verifyPasskeyRegistration(body, { challenge, rp })).toMatchObject({ rawId: auth.rawId });
    // The same ceremony presented again finds its challenge used.
    expect(consumeChallenge(store.get(challengeKey(challenge)), use('register', alice))).toMatchObject({ error: 'ERR-CredentialInvalid' });
  });
});

describe('reclaim message', () => {
  it('is the UTF-8 of ledger-reclaim:v1:<account>:<epoch>, with no challenge (CONTRACT 5)', () => {
    const message = reclaimMessage('did:ledger:acct:a1' as AccountId, 3);
    expect(new TextDecoder().decode(message)).toBe('ledger-reclaim:v1:did:ledger:acct:a1:3');
    expect(() => reclaimMessage('did:ledger:acct:a1' as AccountId, -1)).toThrow(AssertionFailure);
  });
});
