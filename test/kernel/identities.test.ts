/**
 * Identities, credentials, challenges and sessions as the kernel decides them: the
 * identities principal creates identities; credentials join the set they were meant
 * for, within the presenting credential's scope; a challenge serves one ceremony; a
 * sign counter only moves forward; tokens are kept as hashes and expire.
 */
import { randomBytes } from 'node:crypto';
import { submittedWith } from '../support/refusals.js';
import { describe, expect, it } from 'vitest';
import { challengeKey } from '../../src/auth/challenges.js';
import { drawApiKey, drawSession } from '../../src/auth/keys.js';
import type { Actor } from '../../src/auth/authority.js';
import { builtInPrincipals } from '../../src/auth/authority.js';
import type { Command, NewCredential } from '../../src/model/model.js';
import type { AccountId, CredentialId, IdentityId } from '../../src/model/values.js';
import { actorOf, customersGenesis, openBook, submission, transfer } from '../support/book.js';

const identities: Actor = { principal: builtInPrincipals.identities, credential: 'did:ledger:cred:identities' as CredentialId, onBehalfOf: null };
const alice = 'did:ledger:id:alice' as IdentityId;

const apiKeyCredential = () => {
  const key = drawApiKey(randomBytes(32));
  const credential: NewCredential = { scheme: 'api-key', verifier: null, tokenHash: key.hash, challenge: null, webauthnId: null, counter: 0 };
  return { key: key.token, credential };
};
const passkeyCredential = (challenge: string, counter = 0): NewCredential => ({
  scheme: 'webauthn-es256',
  verifier: 'pQECAyYgASFYIA',
  tokenHash: null,
  challenge,
  webauthnId: 'raw-id-1',
  counter,
});


async function decided(book: Awaited<ReturnType<typeof openBook>>, actor: Actor, command: Command) {
  const ack = await book.kernel.submit(submission(actor, command));
  await book.kernel.idle();
  return (await book.kernel.operation(ack.operation.ref))!;
}

async function challenge(book: Awaited<ReturnType<typeof openBook>>, purpose: 'authenticate' | 'register', identity: IdentityId | null = null) {
  const issued = book.kernel.issueChallenge({ purpose, identity, randomBytes: randomBytes(32), nowMs: book.clock.nowMs });
  if ('error' in issued) throw new Error(issued.description);
  return issued.challenge;
}

describe('identities and credentials', () => {
  it('lets the identities principal create an identity whose API key then authenticates it', async () => {
    const book = await openBook({ genesis: customersGenesis({ alice: 0n }) });
    const { key, credential } = apiKeyCredential();
    const op = await decided(book, identities, { type: 'create_identity', credential });
    expect(op.state).toBe('Completed');
    const caller = await book.kernel.authenticate(key);
    expect(caller).toMatchObject({ principal: op.result!.identity, credential: op.result!.credential, scheme: 'api-key', expiresAtMs: null });
    expect(await submittedWith(book.kernel.submit(submission(actorOf(alice), { type: 'create_identity', credential })))).toBe('ERR-NotAuthorised');
    await book.kernel.close();
  });

  it('registers into the caller own set, and by the identities principal on behalf of another', async () => {
    const book = await openBook({ genesis: customersGenesis({ alice: 0n }) });
    const own = apiKeyCredential();
    const mine = await decided(book, actorOf(alice), { type: 'register_credential', identity: alice, credential: own.credential, scope: null });
    expect(mine.state).toBe('Completed');
    expect((await book.kernel.authenticate(own.key))?.principal).toBe(alice);
    const forAlice = apiKeyCredential();
    const onBehalf = await decided(book, { ...identities, onBehalfOf: alice }, { type: 'register_credential', identity: alice, credential: forAlice.credential, scope: null });
    expect(onBehalf.state).toBe('Completed');
    const stranger = actorOf('did:ledger:id:mallory');
    expect(await submittedWith(book.kernel.submit(submission(stranger, { type: 'register_credential', identity: alice, credential: apiKeyCredential().credential, scope: null })))).toBe('ERR-NotAuthorised');
    await book.kernel.close();
  });

  it('keeps a scoped credential to its accounts, and a new credential within the presenting one', async () => {
    const book = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }) });
    const aliceAccount = 'did:ledger:acct:alice' as AccountId;
    const second = await decided(book, actorOf(alice), { type: 'open_account', owner: alice, kind: 'customer', custody: 'delegated', treasuryLimits: {} });
    const other = second.result!.account!;
    const scoped = apiKeyCredential();
    await decided(book, actorOf(alice), { type: 'register_credential', identity: alice, credential: scoped.credential, scope: [other] });
    const caller = (await book.kernel.authenticate(scoped.key))!;
    expect(caller.scope).toEqual([other]);
    // Outside its scope the credential holds no authority, even over its owner's account.
    expect(await submittedWith(book.kernel.submit(submission(caller, transfer(aliceAccount, 'did:ledger:acct:bob', 1n))))).toBe('ERR-NotAuthorised');
    // A credential it presents cannot widen its scope.
    expect(await submittedWith(book.kernel.submit(submission(caller, { type: 'register_credential', identity: alice, credential: apiKeyCredential().credential, scope: [aliceAccount] })))).toBe('ERR-NotAuthorised');
    const inherits = apiKeyCredential();
    const op = await decided(book, caller, { type: 'register_credential', identity: alice, credential: inherits.credential, scope: null });
    expect(op.state).toBe('Completed');
    expect((await book.kernel.authenticate(inherits.key))?.scope).toEqual([other]);
    await book.kernel.close();
  });

  it('takes a register challenge once, and only for the set it is bound to', async () => {
    const book = await openBook({ genesis: customersGenesis({ alice: 0n, bob: 0n }) });
    const bound = await challenge(book, 'register', alice);
    const bob = 'did:ledger:id:bob' as IdentityId;
    const wrongSet = await decided(book, actorOf(bob), { type: 'register_credential', identity: bob, credential: passkeyCredential(bound), scope: null });
    expect(wrongSet.error?.error).toBe('ERR-CredentialInvalid');
    const right = await decided(book, actorOf(alice), { type: 'register_credential', identity: alice, credential: passkeyCredential(bound), scope: null });
    expect(right.state).toBe('Completed');
    const again = await decided(book, actorOf(alice), { type: 'register_credential', identity: alice, credential: passkeyCredential(bound), scope: null });
    expect(again.error?.error).toBe('ERR-CredentialInvalid');
    const forSignIn = await challenge(book, 'authenticate');
    const wrongPurpose = await decided(book, actorOf(alice), { type: 'register_credential', identity: alice, credential: passkeyCredential(forSignIn), scope: null });
    expect(wrongPurpose.error?.error).toBe('ERR-CredentialInvalid');
    await book.kernel.close();
  });
});

describe('passkey sign-in', () => {
  async function withPasskey() {
    const book = await openBook({ genesis: customersGenesis({ alice: 0n }) });
    const reg = await challenge(book, 'register', alice);
    const op = await decided(book, actorOf(alice), { type: 'register_credential', identity: alice, credential: passkeyCredential(reg, 0), scope: null });
    return { book, credential: op.result!.credential! };
  }
  const session = (book: Awaited<ReturnType<typeof openBook>>, credential: CredentialId) =>
    drawSession({ randomBytes: randomBytes(32), credential, principal: alice, scheme: 'webauthn-es256', nowMs: book.clock.nowMs });

  it('opens a session on a fresh challenge, moves the counter, and refuses replays', async () => {
    const { book, credential } = await withPasskey();
    const c1 = await challenge(book, 'authenticate');
    const s1 = session(book, credential);
    expect(await book.kernel.decideDirect({ type: 'sign_in', credential, challenge: c1, counter: 1, session: s1.grant })).toBeNull();
    expect(await book.kernel.authenticate(s1.token)).toMatchObject({ principal: alice, credential, scheme: 'webauthn-es256' });
    expect((await book.kernel.credential(credential))?.counter).toBe(1);
    // The same challenge again: a replay.
    const replay = await book.kernel.decideDirect({ type: 'sign_in', credential, challenge: c1, counter: 2, session: session(book, credential).grant });
    expect(replay?.error).toBe('ERR-CredentialInvalid');
    // A fresh challenge but a counter that did not move: a cloned authenticator.
    const c2 = await challenge(book, 'authenticate');
    const cloned = await book.kernel.decideDirect({ type: 'sign_in', credential, challenge: c2, counter: 1, session: session(book, credential).grant });
    expect(cloned?.error).toBe('ERR-CredentialInvalid');
    await book.kernel.close();
  });

  it('refuses expired challenges, expires sessions, and prunes both', async () => {
    const { book, credential } = await withPasskey();
    const stale = await challenge(book, 'authenticate');
    book.clock.advance(6 * 60 * 1000);
    const late = await book.kernel.decideDirect({ type: 'sign_in', credential, challenge: stale, counter: 1, session: session(book, credential).grant });
    expect(late?.error).toBe('ERR-CredentialInvalid');
    expect(await book.kernel.storeForChecks.get(challengeKey(stale))).toBeUndefined();
    const fresh = await challenge(book, 'authenticate');
    const s = session(book, credential);
    expect(await book.kernel.decideDirect({ type: 'sign_in', credential, challenge: fresh, counter: 1, session: s.grant })).toBeNull();
    book.clock.advance(12 * 3600 * 1000);
    expect(await book.kernel.authenticate(s.token)).toBeNull();
    await book.kernel.close();
  });
});
