/**
 * Grants as the kernel applies them: issuance out of treasuries only under an
 * issuance grant; delegated grants bounded per operation and per window, never wider
 * than their parent, revoked with everything narrowed from them; and the authority of
 * each use recorded on its postings.
 */
import { submittedWith } from '../support/refusals.js';
import { describe, expect, it } from 'vitest';
import type { GrantTerms } from '../../src/model/model.js';
import type { Command } from '../../src/model/model.js';
import type { AccountId, GrantId, IdentityId } from '../../src/model/values.js';
import { grantsHeldMax, grantsPerGrantorHolderMax } from '../../src/auth/constants.js';
import { acct, actorOf, customersGenesis, issuanceGrant, openBook, operator, submission, sym, transfer } from '../support/book.js';
import { heldGrantKey } from '../../src/model/keys.js';

const alice = 'did:ledger:id:alice' as IdentityId;
const bob = 'did:ledger:id:bob' as IdentityId;
const aliceAccount = 'did:ledger:acct:alice';
const bobAccount = 'did:ledger:acct:bob';

const delegated = (terms: Partial<GrantTerms>): Command => ({
  type: 'issue_grant',
  justification: null,
  terms: {
    kind: 'delegated',
    principal: bob,
    subject: { account: aliceAccount as AccountId },
    ops: ['transfer'],
    assets: null,
    counterparties: null,
    expiresAtMs: null,
    parent: null,
    perOperationMinor: 100n,
    perWindow: null,
    ...terms,
  },
});


async function book() {
  const b = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n, carol: 0n }) });
  const decided = async (actor: ReturnType<typeof actorOf>, command: Command) => {
    const ack = await b.kernel.submit(submission(actor, command));
    await b.kernel.idle();
    return (await b.kernel.operation(ack.operation.ref))!;
  };
  const available = async (account: string) => {
    const view = await b.kernel.openView();
    try {
      return (await view.balance(acct(account), sym('USD'))).available;
    } finally {
      await view.close();
    }
  };
  return { ...b, decided, available };
}

describe('issuance', () => {
  it('moves value out of a treasury only under an issuance grant, recorded as issuance', async () => {
    const b = await book();
    const treasury = 'did:ledger:acct:treasury-USD';
    expect(await submittedWith(b.kernel.submit(submission(operator, transfer(treasury, aliceAccount, 5n))))).toBe('ERR-NotAuthorised');
    expect(await submittedWith(b.kernel.submit(submission(actorOf(alice), issuanceGrant(treasury, alice))))).toBe('ERR-NotAuthorised');
    const grant = await b.decided(operator, issuanceGrant(treasury));
    expect(grant.result?.grant).toMatch(/^did:ledger:grant:/);
    const issued = await b.decided(operator, transfer(treasury, aliceAccount, 5n));
    expect(issued.state).toBe('Completed');
    const view = await b.kernel.openView();
    const page = await view.movements(operator, { account: acct(treasury), identity: null, limit: 10, fromMs: null, toMs: null, asset: null, direction: null, cursor: null });
    const issuance = page.movements.find((m) => m.operation === issued.ref)!;
    expect(issuance.authorities[0]).toMatchObject({ kind: 'issuance', grant: grant.result!.grant, principal: 'did:ledger:id:operator' });
    await view.close();
    await b.kernel.close();
  });
});

describe('delegated grants', () => {
  it('lets the holder act within its terms, records the authority, and refuses beyond its bound', async () => {
    const b = await book();
    expect(await submittedWith(b.kernel.submit(submission(actorOf(bob), transfer(aliceAccount, bobAccount, 50n))))).toBe('ERR-NotAuthorised');
    const grant = await b.decided(actorOf(alice), delegated({}));
    expect(grant.state).toBe('Completed');
    const used = await b.decided(actorOf(bob), transfer(aliceAccount, bobAccount, 50n));
    expect(used.state).toBe('Completed');
    const view = await b.kernel.openView();
    const page = await view.movements(operator, { account: acct(bobAccount), identity: null, limit: 10, fromMs: null, toMs: null, asset: null, direction: null, cursor: null });
    expect(page.movements[0]!.authorities[0]).toMatchObject({ kind: 'delegated', grant: grant.result!.grant, principal: bob, onBehalfOf: alice });
    await view.close();
    expect(await submittedWith(b.kernel.submit(submission(actorOf(bob), transfer(aliceAccount, bobAccount, 101n))))).toBe('ERR-BoundExceeded');
    // Another account of alice's is not the grant's subject.
    expect(await submittedWith(b.kernel.submit(submission(actorOf(bob), transfer('did:ledger:acct:carol', bobAccount, 1n))))).toBe('ERR-NotAuthorised');
    await b.kernel.close();
  });

  it('keeps a rolling window within its limit, even when uses share a round', async () => {
    const b = await book();
    await b.decided(actorOf(alice), delegated({ perOperationMinor: null, perWindow: { lengthMs: 60_000, limitMinor: 100n } }));
    const acks = await Promise.all([1, 2, 3].map(() => b.kernel.submit(submission(actorOf(bob), transfer(aliceAccount, bobAccount, 40n)))));
    await b.kernel.idle();
    const states = await Promise.all(acks.map(async (a) => (await b.kernel.operation(a.operation.ref))!));
    expect(states.map((s) => s.state).sort()).toEqual(['Completed', 'Completed', 'Rejected']);
    expect(states.find((s) => s.state === 'Rejected')?.error?.error).toBe('ERR-BoundExceeded');
    expect(await b.available(bobAccount)).toBe(80n);
    // A window later, room again.
    b.clock.advance(60_001);
    expect((await b.decided(actorOf(bob), transfer(aliceAccount, bobAccount, 40n))).state).toBe('Completed');
    await b.kernel.close();
  });

  it('refuses unbounded grants and narrowings that widen their parent', async () => {
    const b = await book();
    expect(await submittedWith(b.kernel.submit(submission(actorOf(alice), delegated({ perOperationMinor: null }))))).toBe('ERR-UnboundedGrant');
    const parent = (await b.decided(actorOf(alice), delegated({ perOperationMinor: 100n }))).result!.grant!;
    const carol = 'did:ledger:id:carol' as IdentityId;
    const wider = delegated({ principal: carol, parent, perOperationMinor: 500n });
    expect(await submittedWith(b.kernel.submit(submission(actorOf(bob), wider)))).toBe('ERR-UnboundedGrant');
    const narrower = await b.decided(actorOf(bob), delegated({ principal: carol, parent, perOperationMinor: 10n }));
    expect(narrower.state).toBe('Completed');
    expect((await b.decided(actorOf(carol), transfer(aliceAccount, bobAccount, 10n))).state).toBe('Completed');
    await b.kernel.close();
  });

  it('revokes a grant and every grant narrowed from it', async () => {
    const b = await book();
    const carol = 'did:ledger:id:carol' as IdentityId;
    const parent = (await b.decided(actorOf(alice), delegated({}))).result!.grant! as GrantId;
    await b.decided(actorOf(bob), delegated({ principal: carol, parent, perOperationMinor: 10n }));
    expect(await submittedWith(b.kernel.submit(submission(actorOf(carol), { type: 'revoke_grant', grant: parent })))).toBe('ERR-NotAuthorised');
    expect((await b.decided(actorOf(alice), { type: 'revoke_grant', grant: parent })).state).toBe('Completed');
    expect(await submittedWith(b.kernel.submit(submission(actorOf(carol), transfer(aliceAccount, bobAccount, 5n))))).toBe('ERR-AuthorityRevoked');
    expect(await submittedWith(b.kernel.submit(submission(actorOf(bob), transfer(aliceAccount, bobAccount, 5n))))).toBe('ERR-AuthorityRevoked');
    await b.kernel.close();
  });

  it('decides a narrowing and a revocation of the same grant in one round as one after the other', async () => {
    for (const revoker of [bob, alice]) {
      const b = await book();
      const carol = 'did:ledger:id:carol' as IdentityId;
      // bob's own grant (revoked by bob), or alice's grant to bob (revoked by alice while bob narrows it).
      const own = revoker === bob ? await b.decided(actorOf(bob), delegated({ principal: bob, subject: { account: bobAccount as AccountId } })) : await b.decided(actorOf(alice), delegated({}));
      const parent = own.result!.grant! as GrantId;
      const subject = revoker === bob ? { account: bobAccount as AccountId } : { account: aliceAccount as AccountId };
      const [narrowing, revocation] = await Promise.all([
        b.kernel.submit(submission(actorOf(bob), delegated({ principal: carol, subject, parent, perOperationMinor: 10n }))),
        b.kernel.submit(submission(actorOf(revoker), { type: 'revoke_grant', grant: parent })),
      ]);
      await b.kernel.idle();
      expect(b.kernel.fatalError).toBeNull();
      const narrowed = (await b.kernel.operation(narrowing.operation.ref))!;
      expect(narrowed.state).toBe('Completed');
      expect((await b.kernel.operation(revocation.operation.ref))!.state).toBe('Completed');
      // The narrowing came first, so the revocation reached it.
      const child = JSON.parse((await b.store.get(`grant/${narrowed.result!.grant}`))!);
      expect(child.revokedAtMs).not.toBeNull();
      await b.kernel.close();
    }
  });

  it('bounds the grants one grantor gives one holder, counting live ones only', async () => {
    const b = await book();
    const expiring = (await b.decided(actorOf(alice), delegated({ expiresAtMs: b.clock.nowMs + 1_000 }))).result!.grant! as GrantId;
    for (let i = 1; i < grantsPerGrantorHolderMax; i++) expect((await b.decided(actorOf(alice), delegated({}))).state).toBe('Completed');
    expect(await submittedWith(b.kernel.submit(submission(actorOf(alice), delegated({}))))).toBe('ERR-UnboundedGrant');
    // An expired grant leaves the space at the next issuance that reads it.
    b.clock.advance(1_000);
    const next = await b.decided(actorOf(alice), delegated({}));
    expect(next.state).toBe('Completed');
    expect(await b.store.get(heldGrantKey(bob, alice, expiring))).toBeUndefined();
    expect(await submittedWith(b.kernel.submit(submission(actorOf(alice), delegated({}))))).toBe('ERR-UnboundedGrant');
    // So does a revoked one, at once; its use is still refused as revoked.
    await b.decided(actorOf(bob), { type: 'revoke_grant', grant: next.result!.grant! });
    expect(await b.store.get(heldGrantKey(bob, alice, next.result!.grant!))).toBeUndefined();
    expect((await b.decided(actorOf(alice), delegated({}))).state).toBe('Completed');
    await b.kernel.close();
  });

  it('refuses to decide from a held list longer than its bound rather than read part of it', async () => {
    const b = await book();
    const genuine = (await b.decided(actorOf(alice), delegated({}))).result!.grant! as GrantId;
    // A book from before the bound: more held index entries than a holder may have.
    await b.store.write(Array.from({ length: grantsHeldMax }, (_, i) => ({ type: 'put' as const, key: heldGrantKey(bob, alice, `${genuine}-${String(i).padStart(3, '0')}` as GrantId), value: '' })), true);
    expect(await submittedWith(b.kernel.submit(submission(actorOf(bob), transfer(aliceAccount, bobAccount, 5n))))).toBe('ERR-UnboundedGrant');
    await b.kernel.close();
  });

  it('lets a holder of an {identity} grant open accounts that identity will own', async () => {
    const b = await book();
    expect(await submittedWith(b.kernel.submit(submission(actorOf(bob), { type: 'open_account', owner: alice, kind: 'customer', custody: 'delegated', treasuryLimits: {} })))).toBe('ERR-NotAuthorised');
    await b.decided(actorOf(alice), delegated({ subject: { identity: alice }, ops: ['open_account'] }));
    const opened = await b.decided(actorOf(bob), { type: 'open_account', owner: alice, kind: 'customer', custody: 'delegated', treasuryLimits: {} });
    expect(opened.state).toBe('Completed');
    const view = await b.kernel.openView();
    expect((await view.account(opened.result!.account!))?.owner).toBe(alice);
    await view.close();
    await b.kernel.close();
  });
});
