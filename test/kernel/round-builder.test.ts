/**
 * The round builder (src/book/round-builder.ts) on hand-made overlays, without a store:
 * the exact batch a transfer, a refusal, a reservation's expiry and a mixed round make,
 * the same batch for the same inputs, and (through a kernel whose store refuses reads
 * while a round is being built) that building a round reads nothing.
 */
import { describe, expect, it } from 'vitest';
import { builtInPrincipals } from '../../src/auth/authority.js';
import { recoveryTerms } from '../../src/custody/terms.js';
import { Kernel, type RoundPart } from '../../src/book/kernel.js';
import { Overlay } from '../../src/book/overlay.js';
import { type RoundContext, type RoundInput, buildRound } from '../../src/book/round-builder.js';
import { eventChunkEventsMax } from '../../src/constants.js';
import { decodeBalanceText, decodeHead, decodeOperation } from '../../src/model/codec.js';
import { decodeOperationPointer, eventChunkLength, eventChunkText } from '../../src/model/event-chunk.js';
import { sequentialIds } from '../../src/model/ids.js';
import { keys, prefixEnd } from '../../src/model/keys.js';
import { type Account, type Asset, type Balance, type Head, type Operation, zeroBalance } from '../../src/model/model.js';
import type { AccountId, AssetSymbol, CredentialId, IdentityId } from '../../src/model/values.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { Range } from '../../src/store/port.js';
import { TestClock, actorOf, available, customersGenesis, openBook, receivedOperation, submission, transfer } from '../support/book.js';

const usd = 'USD' as AssetSymbol;
const aliceId = 'did:ledger:id:alice' as IdentityId;
const bobId = 'did:ledger:id:bob' as IdentityId;
const alice = 'did:ledger:acct:alice' as AccountId;
const bob = 'did:ledger:acct:bob' as AccountId;
const atMs = 1_700_000_000_000;

const asset: Asset = { id: usd, code: 1, kind: 'fiat', precision: 2, status: 'active', binding: 'book_only', location: null };
const account = (id: AccountId, owner: IdentityId): Account => ({ id, owner, kind: 'customer', custody: 'delegated', status: 'active', openedAtMs: 0, epoch: 0, treasuryLimits: {} });
const head: Head = { decidedCseq: 6, postingSeq: 40, eventSeq: 9, lastAtMs: atMs - 1, accounts: 2 };

const context: RoundContext = {
  principals: builtInPrincipals,
  recoveryTerms: recoveryTerms(builtInPrincipals.identities, 1000),
  ids: sequentialIds,
  challengeMacKey: null,
  challengesOutstanding: 0,
  settlement: { instance: 0, instructionExpiryBlocks: 0, layerHeight: 0 },
  beforeDecide: () => {},
};

const authority = { principal: aliceId, credential: 'did:ledger:cred:alice' as CredentialId, onBehalfOf: null, grant: null, kind: 'owner' as const };

const received = (cseq: number, command: Operation['command']): Operation => receivedOperation(cseq, command, authority, atMs - 10);

const pay = (cseq: number, amountMinor: bigint) => received(cseq, { type: 'transfer', legs: [{ from: alice, to: bob, asset: usd, amountMinor }], deadlineMs: atMs + 1000 });

/** A reservation of alice's, Reserved until `deadlineMs`, as stored after its decision at journal positions 39 and 40. */
function reservation(cseq: number, amountMinor: bigint, deadlineMs: number): Operation {
  const hold = { payer: alice, asset: usd, amountMinor, deadlineMs, authority: { ...authority, kind: 'owner' as const } };
  return { ...received(cseq, { type: 'reserve', payer: alice, asset: usd, amountMinor, deadlineMs }), state: 'Reserved', decidedAtMs: atMs - 100, hold, result: { postings: [39, 40] } };
}

/** The overlay a prefetch would make for these operations: both accounts, alice's identity, their USD balances. */
function overlayOf(ops: readonly Operation[], aliceBalance: Balance): Overlay {
  const overlay = new Overlay(new Map([[usd, asset]]));
  overlay.accounts.set(keys.account(alice), account(alice, aliceId));
  overlay.accounts.set(keys.account(bob), account(bob, bobId));
  overlay.identities.set(keys.identity(aliceId), { id: aliceId, createdAtMs: 0, accounts: [alice] });
  overlay.balances.set(keys.balance(alice, usd), aliceBalance);
  overlay.balances.set(keys.balance(bob, usd), zeroBalance);
  for (const op of ops) overlay.operations.set(op.ref, op);
  return overlay;
}

function input(batch: readonly Operation[], expiring: readonly Operation[], aliceBalance: Balance): RoundInput {
  return {
    atMs,
    batch,
    expiring,
    direct: [],
    head,
    totals: new Map([[usd, { available: 0n, reserved: 0n, encumbered: 0n }]]),
    reads: { overlay: overlayOf([...batch, ...expiring], aliceBalance), expiredAuth: null },
    poisonRef: null,
    // The batch's commands as one intake chunk, decided whole by the round.
    commandChunks: batch.length === 0 ? [] : [keys.command(batch[0]!.cseq)],
  };
}

const funded: Balance = { available: 100n, reserved: 0n, encumbered: 0n };
const writesOf = (round: ReturnType<typeof buildRound>) => round.writes.map((w) => `${w.type} ${w.key}`);
const valueAt = (round: ReturnType<typeof buildRound>, key: string) => {
  const op = round.writes.find((w) => w.key === key);
  return op?.type === 'put' ? op.value : undefined;
};

/** The operation as the round stores it: in its event chunk, where `op/<ref>` points. */
const decidedIn = (round: ReturnType<typeof buildRound>, ref: string) => {
  const pointer = decodeOperationPointer(valueAt(round, keys.operation(ref))!)!;
  return decodeOperation(eventChunkText(valueAt(round, keys.eventChunk(pointer.chunk))!, pointer.index));
};

describe('round builder', () => {
  it('builds a transfer: its postings, balances, operation, event and head, in one batch', () => {
    const op = pay(7, 30n);
    const round = buildRound(input([op], [], funded), context);
    expect(writesOf(round)).toEqual([
      `put ${keys.accountAsset(alice, usd, 41)}`,
      `put ${keys.accountAsset(bob, usd, 42)}`,
      `put ${keys.journal(41)}`,
      `put ${keys.journalTime(atMs, 41)}`,
      `put ${keys.balance(alice, usd)}`,
      `put ${keys.balance(bob, usd)}`,
      `del ${keys.command(7)}`,
      `put ${keys.eventChunk(10)}`,
      `put ${keys.operation(op.ref)}`,
      `put ${keys.head}`,
    ]);
    expect(decodeBalanceText(valueAt(round, keys.balance(alice, usd))!)).toEqual({ available: 70n, reserved: 0n, encumbered: 0n });
    expect(decodeBalanceText(valueAt(round, keys.balance(bob, usd))!)).toEqual({ available: 30n, reserved: 0n, encumbered: 0n });
    const decided = decidedIn(round, op.ref);
    expect(decided).toMatchObject({ state: 'Completed', decidedAtMs: atMs, result: { postings: [41, 42] }, error: null });
    expect(decodeHead(valueAt(round, keys.head)!)).toEqual({ decidedCseq: 7, postingSeq: 42, eventSeq: 10, lastAtMs: atMs, accounts: 2 });
    expect(round.events.map((e) => e.state)).toEqual(['Completed']);
    expect(round.eventStart).toBe(9);
    // A transfer moves no layer's total: no totals written.
    expect(round.totals.size).toBe(0);
  });

  it('builds a refusal: the command\'s intake chunk is deleted, decided Rejected, nothing moves', () => {
    const op = pay(7, 500n);
    const round = buildRound(input([op], [], funded), context);
    expect(writesOf(round)).toEqual([`del ${keys.command(7)}`, `put ${keys.eventChunk(10)}`, `put ${keys.operation(op.ref)}`, `put ${keys.head}`]);
    expect(decidedIn(round, op.ref)).toMatchObject({ state: 'Rejected', error: { error: 'ERR-InsufficientAvailable' } });
    expect(decodeHead(valueAt(round, keys.head)!)).toEqual({ ...head, decidedCseq: 7, eventSeq: 10, lastAtMs: atMs });
  });

  it('builds a reservation expiry: the hold goes back to available and its index entry is deleted', () => {
    const held = reservation(5, 40n, atMs - 1);
    const round = buildRound(input([], [held], { available: 60n, reserved: 40n, encumbered: 0n }), context);
    expect(writesOf(round)).toEqual([
      `put ${keys.accountAsset(alice, usd, 41)}`,
      `put ${keys.accountAsset(alice, usd, 42)}`,
      `del ${keys.expiry(atMs - 1, held.ref)}`,
      `put ${keys.journal(41)}`,
      `put ${keys.journalTime(atMs, 41)}`,
      `put ${keys.tb(usd)}`,
      `put ${keys.balance(alice, usd)}`,
      `put ${keys.eventChunk(10)}`,
      `put ${keys.operation(held.ref)}`,
      `put ${keys.head}`,
    ]);
    expect(decodeBalanceText(valueAt(round, keys.balance(alice, usd))!)).toEqual({ available: 100n, reserved: 0n, encumbered: 0n });
    expect(decidedIn(round, held.ref)).toMatchObject({ state: 'Expired', hold: null, result: { postings: [39, 40, 41, 42] } });
    // The reserved layer's total moves back to available: the totals are written, still zero in sum.
    expect(round.totals.get(usd)).toEqual({ available: 40n, reserved: -40n, encumbered: 0n });
    expect(decodeHead(valueAt(round, keys.head)!)).toEqual({ ...head, postingSeq: 42, eventSeq: 10, lastAtMs: atMs });
  });

  it('builds a round mixing them: expiry first, then each command in order, one event each', () => {
    const held = reservation(5, 40n, atMs - 1);
    const [first, refused, last] = [pay(7, 90n), pay(8, 20n), pay(9, 5n)];
    const round = buildRound(input([first!, refused!, last!], [held], { available: 60n, reserved: 40n, encumbered: 0n }), context);
    expect(round.events.map((e) => [e.ref, e.state])).toEqual([
      [held.ref, 'Expired'],
      [first!.ref, 'Completed'],
      [refused!.ref, 'Rejected'],
      [last!.ref, 'Completed'],
    ]);
    // The expiry's postings first (41, 42), then the two transfers'.
    expect(round.events[1]!.result).toMatchObject({ postings: [43, 44] });
    expect(round.events[3]!.result).toMatchObject({ postings: [45, 46] });
    expect(decodeBalanceText(valueAt(round, keys.balance(alice, usd))!)).toEqual({ available: 5n, reserved: 0n, encumbered: 0n });
    expect(decodeBalanceText(valueAt(round, keys.balance(bob, usd))!)).toEqual({ available: 95n, reserved: 0n, encumbered: 0n });
    expect(writesOf(round).filter((w) => w.startsWith('del'))).toEqual([`del ${keys.expiry(atMs - 1, held.ref)}`, `del ${keys.command(7)}`]);
    expect(decodeHead(valueAt(round, keys.head)!)).toEqual({ decidedCseq: 9, postingSeq: 46, eventSeq: 13, lastAtMs: atMs, accounts: 2 });
  });

  it('is deterministic: the same inputs build the same batch, byte for byte', () => {
    const build = () => {
      const held = reservation(5, 40n, atMs - 1);
      return buildRound(input([pay(7, 90n), pay(8, 20n), pay(9, 5n)], [held], { available: 60n, reserved: 40n, encumbered: 0n }), context).writes;
    };
    const once = build();
    expect(build()).toEqual(once);
    expect(JSON.stringify(build())).toBe(JSON.stringify(once));
  });

  it('reads only its overlay: a record missing from it is a failed assertion, never a read', () => {
    const op = pay(7, 30n);
    const built = input([op], [], funded);
    built.reads.overlay.accounts.delete(keys.account(bob));
    expect(() => buildRound(built, context)).toThrow(/prefetched/);
  });

  it('prunes the expired auth records the prefetch found, and keeps every event chunk', () => {
    const hash = 'a'.repeat(64);
    const built = input([pay(7, 30n)], [], funded);
    const past = { ...built, head: { ...head, eventSeq: 5_000_000 }, reads: { ...built.reads, expiredAuth: [`chalx/0000000000000001/${hash}`, `tokx/0000000000000001/${hash}`] } };
    const round = buildRound(past, context);
    expect(writesOf(round)).toEqual(expect.arrayContaining([`del chalx/0000000000000001/${hash}`, `del chal/${hash}`, `del tokx/0000000000000001/${hash}`, `del tok/${hash}`]));
    expect(round.challengesAdded).toBe(-1);
    // The chunks hold the decided operations themselves: none is ever deleted.
    expect(writesOf(round).filter((w) => w.startsWith(`del ${keys.eventPrefix}`))).toEqual([]);
  });

  it('writes a round of more events than a chunk holds in chunks of at most eventChunkEventsMax, each operation pointing at its own', () => {
    const many = Array.from({ length: 2 * eventChunkEventsMax + 3 }, (_, i) => pay(7 + i, 1n));
    const round = buildRound(input(many, [], funded), context);
    const chunkKeys = writesOf(round).filter((w) => w.startsWith(`put ${keys.eventPrefix}`));
    expect(chunkKeys).toEqual([10, 10 + eventChunkEventsMax, 10 + 2 * eventChunkEventsMax].map((first) => `put ${keys.eventChunk(first)}`));
    expect(chunkKeys.map((w) => eventChunkLength(valueAt(round, w.slice(4))!))).toEqual([eventChunkEventsMax, eventChunkEventsMax, 3]);
    for (const [i, op] of many.entries()) expect(decidedIn(round, op.ref)).toMatchObject({ ref: op.ref, cseq: 7 + i, state: 'Completed' });
  });

  it('refuses a command that would take a balance past 2^128 - 1, and asserts the ceiling on what it posts', () => {
    const max = (1n << 128n) - 1n;
    const full = input([pay(7, 30n)], [], funded);
    full.reads.overlay.balances.set(keys.balance(bob, usd), { available: max - 10n, reserved: 0n, encumbered: 0n });
    const round = buildRound(full, context);
    expect(round.events[0]).toMatchObject({ state: 'Rejected', error: { error: 'ERR-PrecisionExceeded' } });
    expect(round.writes.some((w) => w.key === keys.balance(bob, usd))).toBe(false);
    // A reservation expiring back to available is no one's to refuse: a book past the ceiling is a bug the round trips on.
    const over = reservation(3, 20n, atMs - 1);
    expect(() => buildRound(input([], [over], { available: max, reserved: 20n, encumbered: 0n }), context)).toThrow(/within the amount ceiling/);
  });
});

/** A memory store whose reads throw while `refusing`. */
class ReadRefusingStore extends MemoryStore {
  refusing = false;
  reads: string[] = [];
  private refuse(what: string): void {
    if (!this.refusing) return;
    this.reads.push(what);
    throw new Error(`read while building a round: ${what}`);
  }
  override async get(key: string) {
    this.refuse(key);
    return super.get(key);
  }
  override async getMany(keys: readonly string[]) {
    this.refuse(keys.join(','));
    return super.getMany(keys);
  }
  override entries(range: Range) {
    this.refuse(`entries ${range.gte ?? range.gt}`);
    return super.entries(range);
  }
  override async write(...args: Parameters<MemoryStore['write']>) {
    // The round is built: the write ends it.
    this.refusing = false;
    return super.write(...args);
  }
}

describe('a kernel building its rounds', () => {
  it('reads nothing between the first decision of a round and its write', async () => {
    const store = new ReadRefusingStore();
    const clock = new TestClock();
    await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }), store, clock }).then(({ kernel }) => kernel.close());
    // From the round's first decision to its write, any read throws (and fails the round).
    const kernel = await Kernel.open({ store, clock: clock.read, ids: sequentialIds, beforeDecide: (part: RoundPart) => { if (part.kind !== 'precheck') store.refusing = true; } });
    const ack = await kernel.submit(submission(actorOf('did:ledger:id:alice'), transfer('did:ledger:acct:alice', 'did:ledger:acct:bob', 25n)));
    await kernel.poke();
    expect(store.reads).toEqual([]);
    expect(kernel.writeAvailable).toBe(true);
    expect((await kernel.operation(ack.operation.ref))?.state).toBe('Completed');
    expect(await available(kernel, 'did:ledger:acct:bob')).toBe(25n);
    await kernel.close();
  });

  it('serves a replay and every operation from chunks of at most eventChunkEventsMax events', async () => {
    const store = new MemoryStore();
    const clock = new TestClock();
    await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }), store, clock }).then(({ kernel }) => kernel.close());
    const kernel = await Kernel.open({ store, clock: clock.read, ids: sequentialIds });
    const acks = [];
    for (let i = 0; i < 2 * eventChunkEventsMax + 1; i++) acks.push(await kernel.submit(submission(actorOf('did:ledger:id:alice'), transfer('did:ledger:acct:alice', 'did:ledger:acct:bob', 1n))));
    await kernel.poke();
    const chunks: string[] = [];
    for await (const [key] of store.entries({ gte: keys.eventPrefix, lt: prefixEnd(keys.eventPrefix), limit: 10 })) chunks.push(key);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    const events = await kernel.eventsAfter(0, 1000);
    expect(events.map((e) => e.seq)).toEqual(acks.map((_, i) => i + 1));
    expect(events.map((e) => e.operation.ref)).toEqual(acks.map((a) => a.operation.ref));
    // A page starting inside a chunk.
    expect((await kernel.eventsAfter(eventChunkEventsMax + 2, 2)).map((e) => e.seq)).toEqual([eventChunkEventsMax + 3, eventChunkEventsMax + 4]);
    for (const [i, ack] of acks.entries()) expect(await kernel.operation(ack.operation.ref)).toEqual(events[i]!.operation);
    await kernel.close();
  });
});
