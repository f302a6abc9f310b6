import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AssertionFailure } from '../../src/assert.js';
import type { Refusal } from '../../src/errors.js';
import type { AccountId, IdentityId } from '../../src/values.js';
import {
  type ChallengePurpose,
  type ChallengeRecord,
  challengeExpiryKey,
  challengeKey,
  challengeView,
  consumeChallenge,
  isChallengeText,
  issueChallenge,
  reclaimMessage,
} from '../../src/auth/challenges.js';
import { expiryHash, expiryScanEnd } from '../../src/auth/expiry.js';
import { challengeValidityMs, challengesOutstandingMax } from '../../src/auth/constants.js';
import { defaultRelyingParty as rp, verifyPasskeyRegistration, ceremonyChallenge } from '../../src/auth/webauthn.js';
import { SoftwareAuthenticator } from '../support/authenticator.js';

const alice = 'did:ledger:id:alice' as IdentityId;
const bob = 'did:ledger:id:bob' as IdentityId;
const nowMs = 1_700_000_000_000;
const isRefusal = (v: object): v is Refusal => 'error' in v;

function issued(purpose: ChallengePurpose, identity: IdentityId | null = null) {
  const result = issueChallenge({ purpose, identity, randomBytes: randomBytes(32), nowMs, outstanding: 0 });
  if (isRefusal(result)) throw new Error(result.description);
  return result;
}

describe('challenge issuance', () => {
  it('gives base64url text of the random bytes, expiring after the validity bound', () => {
    const bytes = randomBytes(32);
    const result = issueChallenge({ purpose: 'authenticate', identity: null, randomBytes: bytes, nowMs, outstanding: 0 });
    expect(result).toEqual({ challenge: bytes.toString('base64url'), record: { purpose: 'authenticate', identity: null, expiresAtMs: nowMs + challengeValidityMs, used: false } });
    if (isRefusal(result)) return;
    expect(isChallengeText(result.challenge)).toBe(true);
    expect(challengeView(result.challenge, result.record)).toEqual({ challenge: result.challenge, expires_at: nowMs + challengeValidityMs });
  });

  it('asserts at least 32 random bytes', () => {
    expect(() => issueChallenge({ purpose: 'register', identity: null, randomBytes: randomBytes(31), nowMs, outstanding: 0 })).toThrow(AssertionFailure);
  });

  it('refuses an identity on an authenticate challenge, and issuance beyond the outstanding bound', () => {
    expect(issueChallenge({ purpose: 'authenticate', identity: alice, randomBytes: randomBytes(32), nowMs, outstanding: 0 })).toMatchObject({ error: 'ERR-MalformedCommand' });
    expect(issueChallenge({ purpose: 'register', identity: null, randomBytes: randomBytes(32), nowMs, outstanding: challengesOutstandingMax })).toMatchObject({ error: 'ERR-DecisionUnavailable' });
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
  it('is the UTF-8 of ledger-reclaim:v1:<account>:<epoch>:<challenge>', () => {
    const message = reclaimMessage('did:ledger:acct:a1' as AccountId, 3, 'abc_-');
    expect(new TextDecoder().decode(message)).toBe('ledger-reclaim:v1:did:ledger:acct:a1:3:abc_-');
    expect(() => reclaimMessage('did:ledger:acct:a1' as AccountId, -1, 'x')).toThrow(AssertionFailure);
  });
});
