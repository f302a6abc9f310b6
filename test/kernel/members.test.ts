/**
 * Members of the operator as the kernel decides them (CONTRACT 13): a book without
 * members adopts its operator credential as `root` when opened; an operator command is
 * decided only for a live member of the role it needs, so a removal or demotion decided
 * while a command is in flight (acknowledged, not decided) refuses it.
 */
import { describe, expect, it } from 'vitest';
import type { Actor } from '../../src/auth/authority.js';
import { rootCredential } from '../../src/auth/members.js';
import { auditEntryItems } from '../../src/auth/audit.js';
import { Kernel } from '../../src/book/kernel.js';
import { memberKey } from '../../src/model/keys.js';
import { sequentialIds } from '../../src/model/ids.js';
import type { Command, Role } from '../../src/model/model.js';
import type { CredentialId } from '../../src/model/values.js';
import { actorOf, customersGenesis, openBook, operator, submission, testChallengeKey, transfer } from '../support/book.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';

async function book() {
  const b = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }) });
  const decided = async (actor: Actor, command: Command) => {
    const ack = await b.kernel.submit(submission(actor, command));
    await b.kernel.idle();
    return (await b.kernel.operation(ack.operation.ref))!;
  };
  /** Adds an api-key member as root: the actor it acts as. */
  const member = async (name: string, role: Role): Promise<Actor> => {
    const credential = { scheme: 'api-key' as const, verifier: null, tokenHash: 'ab'.repeat(32), challenge: null, webauthnId: null, counter: 0 };
    const op = await decided(operator, { type: 'register_credential', identity: operator.principal, credential, scope: null, member: { name, role } });
    expect(op.state, JSON.stringify(op.error)).toBe('Completed');
    return { ...operator, credential: op.result!.credential! };
  };
  return { ...b, decided, member };
}

/** A memory store that keeps every batch written, to see what went together. */
class RecordingStore extends MemoryStore {
  readonly batches: (readonly BatchOp[])[] = [];
  override async write(ops: readonly BatchOp[]): Promise<void> {
    this.batches.push(ops);
    return super.write(ops);
  }
}

describe('members in the kernel', () => {
  it('writes a member command\'s audit item in the batch of its decision, and none for others', async () => {
    const store = new RecordingStore();
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }), store });
    const ack = await kernel.submit(submission(operator, { type: 'freeze_account', account: 'did:ledger:acct:bob' as never, justification: 'audit me' }));
    const customer = await kernel.submit(submission(actorOf('did:ledger:id:alice'), transfer('did:ledger:acct:alice', 'did:ledger:acct:bob', 1n)));
    await kernel.idle();
    // The decision writes op/<ref> (where the decided operation is in its event chunk), once.
    const decision = store.batches.filter((b) => b.some((op) => op.type === 'put' && op.key === `op/${ack.operation.ref}`));
    expect(decision).toHaveLength(1);
    expect((await kernel.operation(ack.operation.ref))!.state).toBe('Completed');
    const items = decision[0]!.filter((op) => op.key.startsWith('au/'));
    expect(items).toHaveLength(1);
    expect(auditEntryItems(items[0]!.key, (items[0] as { value: string }).value)[0]).toMatchObject({ seq: 1, member: 'root', act: 'freeze_account', operation: ack.operation.ref, justification: 'audit me' });
    const all = store.batches.flat().filter((op) => op.key.startsWith('au/'));
    expect(all).toHaveLength(1);
    expect((await kernel.operation(customer.operation.ref))!.state).not.toBe('Received');
    expect(JSON.parse((await store.get('meta/head'))!).auditSeq).toBe(1);
    await kernel.close();
  });

  it('decides two admins removing each other in one round in order: the second is refused', async () => {
    const { kernel, member } = await book();
    const ada = await member('ada', 'admin');
    const first = await kernel.submit(submission(ada, { type: 'remove_member', member: rootCredential }));
    const second = await kernel.submit(submission(operator, { type: 'remove_member', member: ada.credential }));
    await kernel.idle();
    expect((await kernel.operation(first.operation.ref))!.state).toBe('Completed');
    expect((await kernel.operation(second.operation.ref))!.error?.error).toBe('ERR-CredentialInvalid');
    expect(await kernel.member(ada.credential)).toMatchObject({ removedAtMs: null, role: 'admin' });
    await kernel.close();
  });

  it('adopts the operator credential of a book without members as root, once', async () => {
    const { kernel, store, clock } = await book();
    expect(await kernel.member(rootCredential)).toMatchObject({ name: 'root', role: 'admin', scheme: 'api-key', addedBy: null, removedAtMs: null });
    await kernel.close();
    await store.write([{ type: 'del', key: memberKey(rootCredential) }], true);
    const reopened = await Kernel.open({ store, clock: clock.read, ids: sequentialIds, challengeMacKey: testChallengeKey });
    expect(await reopened.member(rootCredential)).toMatchObject({ name: 'root', role: 'admin' });
    await reopened.close();
  });

  it('refuses a command whose member was removed or demoted after it was acknowledged', async () => {
    const { kernel, decided, member } = await book();
    const ops = await member('ops', 'operator');
    const early = await kernel.submit(submission(ops, { type: 'freeze_account', account: 'did:ledger:acct:alice' as never, justification: 'before' }));
    const removal = await kernel.submit(submission(operator, { type: 'remove_member', member: ops.credential }));
    const late = await kernel.submit(submission(ops, { type: 'freeze_account', account: 'did:ledger:acct:bob' as never, justification: 'in flight' }));
    await kernel.idle();
    expect((await kernel.operation(early.operation.ref))!.state).toBe('Completed');
    expect((await kernel.operation(removal.operation.ref))!.state).toBe('Completed');
    expect((await kernel.operation(late.operation.ref))!).toMatchObject({ state: 'Rejected', error: { error: 'ERR-CredentialInvalid' } });

    const demoted = await member('demoted', 'admin');
    const demotion = await kernel.submit(submission(operator, { type: 'set_member_role', member: demoted.credential, role: 'auditor' }));
    const afterDemotion = await kernel.submit(submission(demoted, { type: 'remove_member', member: rootCredential }));
    await kernel.idle();
    expect((await kernel.operation(demotion.operation.ref))!.state).toBe('Completed');
    expect((await kernel.operation(afterDemotion.operation.ref))!).toMatchObject({ state: 'Rejected', error: { error: 'ERR-NotAuthorised' } });
    // An operator credential that is no member decides nothing.
    const stranger = await decided({ ...operator, credential: 'did:ledger:cred:nobody' as CredentialId }, { type: 'freeze_account', account: 'did:ledger:acct:bob' as never, justification: 'x' });
    expect(stranger.error?.error).toBe('ERR-CredentialInvalid');
    await kernel.close();
  });

  it('keeps the last live admin and one live name per member', async () => {
    const { kernel, decided, member } = await book();
    expect((await decided(operator, { type: 'remove_member', member: rootCredential })).error?.error).toBe('ERR-InvalidTransition');
    expect((await decided(operator, { type: 'set_member_role', member: rootCredential, role: 'operator' })).error?.error).toBe('ERR-InvalidTransition');
    const twin = await member('twin', 'auditor');
    const credential = { scheme: 'api-key' as const, verifier: null, tokenHash: 'cd'.repeat(32), challenge: null, webauthnId: null, counter: 0 };
    expect((await decided(operator, { type: 'register_credential', identity: operator.principal, credential, scope: null, member: { name: 'twin', role: 'auditor' } })).error?.error).toBe('ERR-InvalidTransition');
    // Two admins: either may go, not both.
    const second = await member('second', 'admin');
    expect((await decided(second, { type: 'remove_member', member: rootCredential })).state).toBe('Completed');
    expect((await decided(second, { type: 'remove_member', member: second.credential })).error?.error).toBe('ERR-InvalidTransition');
    expect((await decided(second, { type: 'remove_member', member: twin.credential })).state).toBe('Completed');
    await kernel.close();
  });
});
