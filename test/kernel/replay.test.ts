/**
 * Replay: the same command sequence, with the same clock and ids passed in, decided
 * twice into two fresh stores gives byte-identical stores — every key and every value,
 * read back as raw bytes from LevelDB. The sequence touches every kind of record the
 * kernel writes: genesis, identities, credentials (API key and passkey), accounts,
 * parties, grants given, used and revoked, transfers (decided, refused, expired),
 * reservations captured, released and expired, a passkey sign-in with its session,
 * pruning of expired challenges and sessions, and a restart in the middle.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { afterAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/auth/authority.js';
import { builtInPrincipals } from '../../src/auth/authority.js';
import { drawApiKey, drawSession } from '../../src/auth/keys.js';
import { importGenesis } from '../../src/book/genesis.js';
import { Kernel } from '../../src/book/kernel.js';
import { keyedIds } from '../../src/model/ids.js';
import type { Command, GrantTerms, NewCredential } from '../../src/model/model.js';
import type { AccountId, CredentialId, GrantId, IdentityId } from '../../src/model/values.js';
import { LevelStore } from '../../src/store/level.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { Store } from '../../src/store/port.js';
import { TestClock, actorOf, customersGenesis, issuanceGrant, operator, submission, sym, testChallengeKey, transfer } from '../support/book.js';

const idKey = new Uint8Array(32).fill(3);
const ids = keyedIds(idKey);
const alice = 'did:ledger:id:alice' as IdentityId;
const bob = 'did:ledger:id:bob' as IdentityId;
const aliceAccount = 'did:ledger:acct:alice';
const bobAccount = 'did:ledger:acct:bob';
const carolAccount = 'did:ledger:acct:carol';
const identities: Actor = { principal: builtInPrincipals.identities, credential: 'did:ledger:cred:identities' as CredentialId, onBehalfOf: null };
/** Random bytes drawn by the edge, fixed here: the replay passes in the same ones. */
const drawn = (n: number) => new Uint8Array(32).fill(n);

const delegated = (over: Partial<GrantTerms>): Command => ({
  type: 'issue_grant',
  justification: 'replay',
  terms: { kind: 'delegated', principal: bob, subject: { account: aliceAccount as AccountId }, ops: ['transfer'], assets: null, counterparties: null, expiresAtMs: null, parent: null, perOperationMinor: 500n, perWindow: { lengthMs: 60_000, limitMinor: 2_000n }, ...over },
});

/** The scripted sequence; `reopen` closes and reopens the kernel over the same store. */
async function run(store: Store): Promise<void> {
  const clock = new TestClock();
  await importGenesis(store, customersGenesis({ alice: 5_000n, bob: 1_000n, carol: 0n }), clock.nowMs);
  const open = () => Kernel.open({ store, clock: clock.read, ids, challengeMacKey: testChallengeKey, sync: false });
  let kernel = await open();
  let keyNo = 0;
  /** Submits a group in one turn (one intake round), waits for every answer, then for every decision. */
  const step = async (...group: [Actor, Command][]) => {
    const answers = await Promise.allSettled(group.map(([actor, command]) => kernel.submit(submission(actor, command, { clientKey: `replay-${++keyNo}` }))));
    await kernel.idle();
    return answers.map((a) => (a.status === 'fulfilled' ? a.value.operation.ref : null));
  };
  const result = async (ref: string | null | undefined) => (ref == null ? undefined : (await kernel.operation(ref))?.result);

  const apiKey: NewCredential = { scheme: 'api-key', verifier: null, tokenHash: drawApiKey(drawn(1)).hash, challenge: null, webauthnId: null, counter: 0 };
  const issued = kernel.issueChallenge({ purpose: 'register', identity: alice, randomBytes: drawn(2), nowMs: clock.nowMs });
  if ('error' in issued) throw new Error(issued.description);
  const passkey: NewCredential = { scheme: 'webauthn-es256', verifier: 'pQECAyYgASFYIA', tokenHash: null, challenge: issued.challenge, webauthnId: 'raw-id-1', counter: 0 };
  const [created, registered, issuance, party] = await step(
    [identities, { type: 'create_identity', credential: apiKey }],
    [actorOf(alice), { type: 'register_credential', identity: alice, credential: passkey, scope: null }],
    [operator, issuanceGrant('did:ledger:acct:treasury-USD')],
    [operator, { type: 'register_party', principals: [alice, bob] }],
  );
  expect(issuance).not.toBeNull();
  expect(party).not.toBeNull();
  const newcomer = (await result(created))!.identity! as IdentityId;
  const passkeyId = (await result(registered))!.credential! as CredentialId;
  const [opened] = await step([identities, { type: 'open_account', owner: newcomer, kind: 'customer', custody: 'delegated', treasuryLimits: {} }]);
  const newAccount = (await result(opened))!.account!;

  clock.advance(1_000);
  await step(
    [operator, transfer('did:ledger:acct:treasury-USD', newAccount, 700n)],
    [actorOf(alice), transfer(aliceAccount, bobAccount, 300n)],
    [actorOf(bob), transfer(bobAccount, carolAccount, 9_999n)], // refused: not enough
    [actorOf(alice), transfer(aliceAccount, carolAccount, 10n, clock.nowMs - 1)], // expired before its decision
    [actorOf(alice), { type: 'transfer', legs: [{ from: aliceAccount as AccountId, to: bobAccount as AccountId, asset: sym('USD'), amountMinor: 5n }, { from: aliceAccount as AccountId, to: carolAccount as AccountId, asset: sym('USD'), amountMinor: 7n }], deadlineMs: Number.MAX_SAFE_INTEGER }],
  );
  const [grant] = await step([actorOf(alice), delegated({})]);
  const grantId = (await result(grant))!.grant! as GrantId;
  clock.advance(250);
  await step([actorOf(bob), transfer(aliceAccount, carolAccount, 400n)], [actorOf(bob), transfer(aliceAccount, carolAccount, 600n)]);

  const [held, toRelease, toExpire] = await step(
    [actorOf(alice), { type: 'reserve', payer: aliceAccount as AccountId, asset: sym('USD'), amountMinor: 200n, deadlineMs: clock.nowMs + 60_000 }],
    [actorOf(alice), { type: 'reserve', payer: aliceAccount as AccountId, asset: sym('USD'), amountMinor: 100n, deadlineMs: clock.nowMs + 60_000 }],
    [actorOf(alice), { type: 'reserve', payer: aliceAccount as AccountId, asset: sym('USD'), amountMinor: 50n, deadlineMs: clock.nowMs + 5_000 }],
  );
  expect(toExpire).not.toBeNull();
  await step([actorOf(alice), { type: 'capture', reservation: held!, to: bobAccount as AccountId, amountMinor: 150n }], [actorOf(alice), { type: 'release', reservation: toRelease! }]);

  // A restart in the middle: the replay restarts at the same point.
  await kernel.close();
  await store.recover(); // reopens the closed LevelDB
  kernel = await open();

  clock.advance(6_000);
  await kernel.poke(); // the third reservation expires
  const signIn = kernel.issueChallenge({ purpose: 'authenticate', identity: null, randomBytes: drawn(4), nowMs: clock.nowMs });
  if ('error' in signIn) throw new Error(signIn.description);
  const [revoked] = await step([actorOf(alice), { type: 'revoke_grant', grant: grantId }]);
  expect((await kernel.operation(revoked!))?.state).toBe('Completed');
  const session = drawSession({ randomBytes: drawn(5), credential: passkeyId, principal: alice, scheme: 'webauthn-es256', nowMs: clock.nowMs });
  expect(await kernel.decideDirect({ type: 'sign_in', credential: passkeyId, challenge: signIn.challenge, counter: 1, session: session.grant })).toBeNull();
  // Past every challenge's and the session's expiry: the next round prunes them.
  clock.advance(13 * 3600 * 1000);
  await step([actorOf(bob), transfer(bobAccount, carolAccount, 1n)]);
  await kernel.close();
}

/** Every key and value of a closed LevelDB book, as raw bytes. */
async function levelBytes(dir: string): Promise<[string, string][]> {
  const db = new Level<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer', createIfMissing: false });
  await db.open();
  const out: [string, string][] = [];
  for await (const [k, v] of db.iterator()) out.push([k.toString('hex'), v.toString('hex')]);
  await db.close();
  return out;
}

async function memoryBytes(store: MemoryStore): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for await (const [k, v] of store.entries({ gte: '', limit: Number.MAX_SAFE_INTEGER })) out.push([Buffer.from(k).toString('hex'), Buffer.from(v).toString('hex')]);
  return out;
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function levelRun(): Promise<[string, string][]> {
  const dir = await mkdtemp(join(tmpdir(), 'ledger-replay-'));
  dirs.push(dir);
  await run(await LevelStore.open(dir));
  return levelBytes(dir);
}

describe('replay', () => {
  it('decides the same sequence twice into byte-identical LevelDB books', async () => {
    const first = await levelRun();
    const second = await levelRun();
    expect(first.length).toBeGreaterThan(100);
    expect(second).toEqual(first);
    console.log([...new Set(first.map(([k]) => Buffer.from(k, "hex").toString().split("/")[0]))].join(" "));
  });

  it('writes the same bytes whichever store holds the book', async () => {
    const memory = new MemoryStore();
    await run(memory);
    expect(await memoryBytes(memory)).toEqual(await levelRun());
  });
});
