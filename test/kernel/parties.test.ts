/**
 * Integrating parties and the read side of grants, as the kernel decides and reads
 * them: the operator registers parties over identities of the book; grant listings and
 * the account view's reach for holders come from the grant indexes of one snapshot.
 */
import { describe, expect, it } from 'vitest';
import { Refused } from '../../src/errors.js';
import type { Actor } from '../../src/auth/authority.js';
import type { Command } from '../../src/model/model.js';
import type { BookView } from '../../src/queries/queries.js';
import type { AccountId, IdentityId } from '../../src/model/values.js';
import { actorOf, customersGenesis, openBook, operator, submission } from '../support/book.js';

const alice = 'did:ledger:id:alice' as IdentityId;
const bob = 'did:ledger:id:bob' as IdentityId;
const aliceAccount = 'did:ledger:acct:alice' as AccountId;

async function book() {
  const b = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n, carol: 0n }) });
  const decided = async (actor: Actor, command: Command) => {
    const ack = await b.kernel.submit(submission(actor, command));
    await b.kernel.idle();
    return (await b.kernel.operation(ack.operation.ref))!;
  };
  const read = async <T>(f: (view: BookView) => Promise<T>): Promise<T> => {
    const view = await b.kernel.openView();
    try {
      return await f(view);
    } finally {
      await view.close();
    }
  };
  return { ...b, decided, read };
}

async function codeOf(p: Promise<unknown>) {
  try {
    await p;
    return 'ok';
  } catch (e) {
    if (e instanceof Refused) return e.refusal.error;
    throw e;
  }
}

const grantToBob = (over: Partial<Extract<Command, { type: 'issue_grant' }>['terms']> = {}): Command => ({
  type: 'issue_grant',
  justification: null,
  terms: { kind: 'delegated', principal: bob, subject: { account: aliceAccount }, ops: ['transfer'], assets: null, counterparties: null, expiresAtMs: null, parent: null, perOperationMinor: 10n, perWindow: null, ...over },
});

describe('integrating parties', () => {
  it('are registered by the operator over identities of the book, and listed in identifier order', async () => {
    const b = await book();
    expect(await codeOf(b.kernel.submit(submission(actorOf(alice), { type: 'register_party', principals: [alice] })))).toBe('ERR-NotAuthorised');
    const unknown = await b.decided(operator, { type: 'register_party', principals: ['did:ledger:id:nobody' as IdentityId] });
    expect(unknown.error?.error).toBe('ERR-NotAuthorised');
    const first = await b.decided(operator, { type: 'register_party', principals: [alice, bob] });
    const second = await b.decided(operator, { type: 'register_party', principals: [bob] });
    expect(first.state).toBe('Completed');
    const parties = await b.read((v) => v.parties());
    expect(parties.map((p) => p.id)).toEqual([first.result!.party, second.result!.party]);
    expect(parties[0]).toMatchObject({ registeredAtMs: first.decidedAtMs, principals: [{ principal: alice, tiedAtMs: first.decidedAtMs }, { principal: bob }] });
    await b.kernel.close();
  });
});

const page = { limit: 1000, cursor: null };

describe('grant reads', () => {
  it('lists grants over an identity to it in full, and to a holder its own only', async () => {
    const b = await book();
    const g1 = (await b.decided(actorOf(alice), grantToBob())).result!.grant!;
    const g2 = (await b.decided(actorOf(alice), grantToBob({ principal: 'did:ledger:id:carol' as IdentityId }))).result!.grant!;
    await b.decided(actorOf(alice), { type: 'revoke_grant', grant: g2 });
    const all = (await b.read((v) => v.identityGrants(actorOf(alice), alice, page))).grants;
    expect(all.map((g) => g.id)).toEqual([g1, g2]);
    expect(all[1]!.revokedAtMs).not.toBeNull();
    expect((await b.read((v) => v.identityGrants(actorOf(bob), alice, page))).grants.map((g) => g.id)).toEqual([g1]);
    expect((await b.read((v) => v.identityGrants({ ...actorOf(alice), scope: ['did:ledger:acct:other' as AccountId] }, alice, page))).grants).toEqual([]);
    expect(await codeOf(b.read((v) => v.identityGrants(actorOf('did:ledger:id:mallory'), alice, page)))).toBe('ERR-NotAuthorised');
    expect((await b.read((v) => v.accountGrants(actorOf(alice), aliceAccount, page))).grants.map((g) => g.id)).toEqual([g1, g2]);
    expect(await codeOf(b.read((v) => v.accountGrants(actorOf(bob), aliceAccount, page)))).toBe('ERR-NotAuthorised');
    await b.kernel.close();
  });

  it('lets a holder of a live grant over the owner view the account, and no one once it is revoked or expired', async () => {
    const b = await book();
    const carol = actorOf('did:ledger:id:carol');
    expect(await codeOf(b.read((v) => v.viewableAccount(actorOf(bob), aliceAccount)))).toBe('ERR-NotAuthorised');
    const grant = (await b.decided(actorOf(alice), grantToBob())).result!.grant!;
    expect((await b.read((v) => v.viewableAccount(actorOf(bob), aliceAccount))).id).toBe(aliceAccount);
    // Holding a grant over alice reaches the account view only, not her statements.
    expect(await codeOf(b.read((v) => v.reachableAccount(actorOf(bob), aliceAccount)))).toBe('ERR-NotAuthorised');
    await b.decided(actorOf(alice), { type: 'revoke_grant', grant });
    expect(await codeOf(b.read((v) => v.viewableAccount(actorOf(bob), aliceAccount)))).toBe('ERR-NotAuthorised');
    await b.decided(actorOf(alice), grantToBob({ principal: carol.principal, expiresAtMs: b.clock.nowMs + 1000 }));
    expect((await b.read((v) => v.viewableAccount(carol, aliceAccount))).id).toBe(aliceAccount);
    b.clock.advance(2000);
    expect(await codeOf(b.read((v) => v.viewableAccount(carol, aliceAccount)))).toBe('ERR-NotAuthorised');
    await b.kernel.close();
  });
});
