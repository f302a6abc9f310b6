/**
 * Commands that touch the same records in one round decide exactly as they would one
 * after another: random rounds of grants given, narrowed and revoked, transfers,
 * reservations and their captures and releases, accounts opened and debited,
 * credentials scoped to them, over a few shared records (commands may name grants,
 * reservations and accounts made earlier in the same round), decided once as
 * one round and once a command per round. Same outcomes, same book, and no decision
 * ever trips an assertion.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeHead, encodeOperation, encodeOperationJson } from '../../src/model/codec.js';
import { journalLeaves } from '../../src/queries/journal.js';
import { readDecided } from '../../src/queries/operation-records.js';
import type { GrantOp, GrantTerms } from '../../src/model/model.js';
import { sequentialIds } from '../../src/model/ids.js';
import { Kernel } from '../../src/book/kernel.js';
import type { Command, Operation } from '../../src/model/model.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { AccountId, CredentialId, GrantId, IdentityId } from '../../src/model/values.js';
import { TestClock, actorOf, customersGenesis, openBook, submission, sym } from '../support/book.js';
import { keys } from '../../src/model/keys.js';

const names = ['alice', 'bob', 'carol'] as const;
const identity = (i: number) => `did:ledger:id:${names[i]}` as IdentityId;
const account = (i: number) => `did:ledger:acct:${names[i]}` as AccountId;

/** A reference to a grant or reservation: one made before the round (`setup`), or by the command at `at` in the round. */
type Ref = { setup: number } | { at: number };

type Spec =
  | { t: 'issue'; by: number; to: number; parent: Ref | null; subject: number; ops: GrantOp[]; perOp: bigint; window: bigint | null }
  | { t: 'revoke'; by: number; grant: Ref }
  | { t: 'transfer'; by: number; legs: { from: number; to: number; amount: bigint }[]; opened: Ref | null }
  | { t: 'open'; by: number; owner: number }
  | { t: 'credential'; by: number; scope: 'all' | 'own' | Ref }
  | { t: 'reserve'; by: number; payer: number; amount: bigint }
  | { t: 'capture'; by: number; reservation: Ref; to: number; amount: bigint | null }
  | { t: 'release'; by: number; reservation: Ref };

const who = fc.integer({ min: 0, max: names.length - 1 });
const amount = fc.bigInt({ min: 1n, max: 300n });
const ref = (setups: number) => fc.oneof(fc.record({ setup: fc.integer({ min: 0, max: setups - 1 }) }), fc.record({ at: fc.nat(11) }));
const spec: fc.Arbitrary<Spec> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('issue' as const),
      by: who,
      to: who,
      parent: fc.option(ref(2), { nil: null }),
      // Mostly the grantor's own account (a root) or alice's (the setup grants' subject, for narrowings).
      subject: fc.oneof(fc.constant(-1), fc.constant(0), who),
      ops: fc.subarray(['transfer', 'reserve', 'capture', 'release'] as GrantOp[], { minLength: 1 }),
      perOp: amount,
      window: fc.option(fc.bigInt({ min: 1n, max: 600n }), { nil: null }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('revoke' as const), by: who, grant: ref(2) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('transfer' as const),
      by: who,
      // -1: the submitter's own account; alice's is the one the setup grants cover.
      legs: fc.array(fc.record({ from: fc.oneof(fc.constant(-1), fc.constant(0), who), to: who, amount }), { minLength: 1, maxLength: 3 }),
      // A first leg out of an account opened earlier in the round, if any.
      opened: fc.option(fc.record({ at: fc.nat(11) }), { nil: null }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('open' as const), by: who, owner: who }) },
  // Scoped to an account opened earlier in the round, whose owner's set it must be in.
  { weight: 1, arbitrary: fc.record({ t: fc.constant('credential' as const), by: who, scope: fc.oneof(fc.constant('all' as const), fc.constant('own' as const), fc.record({ at: fc.nat(11) })) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('reserve' as const), by: who, payer: who, amount }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('capture' as const), by: who, reservation: ref(1), to: who, amount: fc.option(amount, { nil: null }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('release' as const), by: who, reservation: ref(1) }) },
);

interface Setup {
  readonly store: MemoryStore;
  readonly clock: TestClock;
  readonly grants: GrantId[];
  readonly reservations: string[];
  readonly nextCseq: number;
}

/** alice gives bob a grant over her account, bob narrows it to carol, alice holds a reservation. */
async function setup(): Promise<Setup> {
  const store = new MemoryStore();
  const { kernel, clock } = await openBook({ store, genesis: customersGenesis({ alice: 1_000n, bob: 1_000n, carol: 1_000n }) });
  const decided = async (by: number, command: Command) => {
    const ack = await kernel.submit(submission(actorOf(identity(by)), command));
    await kernel.idle();
    const op = (await kernel.operation(ack.operation.ref))!;
    expect(op.error, JSON.stringify(op.error)).toBeNull();
    return op;
  };
  const root = (await decided(0, { type: 'issue_grant', justification: null, terms: terms(1, 0, null, ['transfer', 'reserve', 'capture', 'release'], 500n, 900n) })).result!.grant!;
  const child = (await decided(1, { type: 'issue_grant', justification: null, terms: terms(2, 0, root, ['transfer', 'capture'], 300n, 600n) })).result!.grant!;
  const held = (await decided(0, { type: 'reserve', payer: account(0), asset: sym('USD'), amountMinor: 100n, deadlineMs: Number.MAX_SAFE_INTEGER })).ref;
  await kernel.close();
  return { store, clock, grants: [root, child], reservations: [held], nextCseq: Number(await store.get(keys.cseq)) + 1 };
}

function terms(to: number, subject: number, parent: GrantId | null, ops: GrantOp[], perOp: bigint, window: bigint | null): GrantTerms {
  return {
    kind: 'delegated',
    principal: identity(to),
    subject: { account: account(subject) },
    ops,
    assets: null,
    counterparties: null,
    expiresAtMs: null,
    parent,
    perOperationMinor: perOp,
    perWindow: window === null ? null : { lengthMs: 60_000, limitMinor: window },
  };
}

/**
 * Command `i` of the round. A grant may be named before it is given (both ways refuse
 * it alike); a reservation only after it was submitted, since one acknowledged but not
 * yet decided is "not decided yet", not unknown, and the one-at-a-time run below
 * acknowledges each command only when it decides it.
 */
function command(s: Spec, i: number, base: Setup): Command {
  const grant = (r: Ref) => ('setup' in r ? base.grants[r.setup]! : sequentialIds.grantId(base.nextCseq + r.at));
  const reservation = (r: Ref) => ('setup' in r || i === 0 ? base.reservations[0]! : sequentialIds.operationRef(base.nextCseq + (r.at % i)));
  switch (s.t) {
    case 'issue':
      return { type: 'issue_grant', justification: null, terms: terms(s.to, s.subject === -1 ? s.by : s.subject, s.parent === null ? null : grant(s.parent), s.ops, s.perOp, s.window) };
    case 'revoke':
      return { type: 'revoke_grant', grant: grant(s.grant) };
    case 'transfer': {
      const legs = s.legs.map((l) => ({ from: account(l.from === -1 ? s.by : l.from), to: account(l.to), asset: sym('USD'), amountMinor: l.amount }));
      if (s.opened !== null && 'at' in s.opened && i > 0) legs[0] = { ...legs[0]!, from: sequentialIds.accountId(base.nextCseq + (s.opened.at % i)) };
      return { type: 'transfer', legs, deadlineMs: Number.MAX_SAFE_INTEGER };
    }
    case 'open':
      return { type: 'open_account', owner: identity(s.owner), kind: 'customer', custody: 'delegated', treasuryLimits: {} };
    case 'credential': {
      const scope = s.scope === 'all' ? null : s.scope === 'own' || 'setup' in s.scope || i === 0 ? [account(s.by)] : [sequentialIds.accountId(base.nextCseq + (s.scope.at % i))];
      const tokenHash = (base.nextCseq + i).toString(16).padStart(64, '0');
      return { type: 'register_credential', identity: identity(s.by), scope, credential: { scheme: 'api-key', verifier: null, tokenHash, challenge: null, webauthnId: null, counter: 0 } };
    }
    case 'reserve':
      return { type: 'reserve', payer: account(s.payer), asset: sym('USD'), amountMinor: s.amount, deadlineMs: Number.MAX_SAFE_INTEGER };
    case 'capture':
      return { type: 'capture', reservation: reservation(s.reservation), to: account(s.to), amountMinor: s.amount };
    case 'release':
      return { type: 'release', reservation: reservation(s.reservation) };
  }
}

/** The Received operation an acknowledgement would have stored for command `cseq`. */
function received(cseq: number, by: number, cmd: Command, atMs: number, scope: readonly AccountId[] | null): Operation {
  const actor = actorOf(identity(by));
  return {
    ref: sequentialIds.operationRef(cseq),
    cseq,
    command: cmd,
    actor: { principal: actor.principal, credential: actor.credential as CredentialId, onBehalfOf: null, grant: null, kind: 'owner' },
    scope,
    state: 'Received',
    submittedAtMs: atMs,
    decidedAtMs: null,
    clientKey: `round-${cseq}`,
    clientKeyDerived: false,
    reference: null,
    result: null,
    error: null,
    hold: null,
  };
}

async function copyOf(store: MemoryStore): Promise<MemoryStore> {
  const copy = new MemoryStore();
  const ops = [];
  for await (const [key, value] of store.entries({ gte: '', limit: Number.MAX_SAFE_INTEGER })) ops.push({ type: 'put' as const, key, value });
  await copy.write(ops);
  return copy;
}

/** Acknowledged commands, decided by a kernel opened over the store: all of them in its first round. */
async function decideBacklog(store: MemoryStore, clock: TestClock, ops: readonly Operation[]): Promise<void> {
  await store.write([...ops.map((op) => ({ type: 'put' as const, key: keys.command(op.cseq), value: encodeOperationJson(op) })), { type: 'put', key: keys.cseq, value: String(ops[ops.length - 1]!.cseq) }]);
  const kernel = await Kernel.open({ store, clock: clock.read, ids: sequentialIds });
  await kernel.idle();
  expect(kernel.fatalError).toBeNull();
  await kernel.close();
}

/**
 * The book as stored, but for what is grouped by round: event chunks and where each decided
 * operation is in them (the operations are compared as read), and journal chunks with their
 * time index (the journal's entries are compared one by one, as leaves).
 */
async function bookOf(store: MemoryStore): Promise<[string, string][]> {
  const grouped = [keys.eventPrefix, keys.journalPrefix, keys.journalTimePrefix];
  const out: [string, string][] = [];
  for await (const [key, value] of store.entries({ gte: '', limit: Number.MAX_SAFE_INTEGER })) {
    if (grouped.some((prefix) => key.startsWith(prefix))) continue;
    const ref = key.startsWith(keys.operation('')) ? key.slice(keys.operation('').length) : null;
    out.push([key, ref === null ? value : encodeOperation((await readDecided(store, [ref]))[0]!)]);
  }
  const head = decodeHead((await store.get(keys.head))!);
  for await (const leaf of journalLeaves(store, 1, head.postingSeq)) out.push(['journal', leaf]);
  return out;
}

describe('one round decides as one command after another', () => {
  it('gives the same outcomes and the same book for random rounds over shared grants, holds and accounts', async () => {
    const base = await setup();
    await fc.assert(
      // Some commands come from a credential scoped to the submitter's own account.
      fc.asyncProperty(fc.array(fc.tuple(spec, fc.boolean()), { minLength: 2, maxLength: 12 }), async (round) => {
        const atMs = base.clock.nowMs;
        const ops = round.map(([s, scoped], i) => received(base.nextCseq + i, s.by, command(s, i, base), atMs, scoped ? [account(s.by)] : null));

        const together = await copyOf(base.store);
        await decideBacklog(together, base.clock, ops);
        const apart = await copyOf(base.store);
        for (const op of ops) await decideBacklog(apart, base.clock, [op]);

        expect(await bookOf(together)).toEqual(await bookOf(apart));
      }),
      { numRuns: 200 },
    );
  }, 120_000);
});
