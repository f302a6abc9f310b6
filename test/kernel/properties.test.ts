/**
 * Property tests: random interleavings of transfers, reservations, captures,
 * releases, expiries and clock moves keep every invariant, agree with a plain
 * sequential model of the rules, and replay to the very same book.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeLeaf, journalChunkLeaves } from '../../src/model/codec.js';
import { decidedOfEntries } from '../../src/queries/operation-records.js';
import { Refused } from '../../src/errors.js';
import type { Command } from '../../src/model/model.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { Store } from '../../src/store/port.js';
import { verifyTotals } from '../../src/book/totals.js';
import { TestClock, acct, actorOf, customersGenesis, openBook, submission, sym, transfer } from '../support/book.js';
import { useStores } from '../support/stores.js';
import { keys, parseSeqHex, prefixEnd } from '../../src/model/keys.js';

const stores = useStores();

const names = ['alice', 'bob', 'carol'] as const;
const account = (i: number) => `did:ledger:acct:${names[i]}`;
const actor = (i: number) => actorOf(`did:ledger:id:${names[i]}`);
const funding = 1_000n;

type Action =
  | { t: 'transfer'; from: number; to: number; amount: bigint; deadlineInMs: number }
  | { t: 'reserve'; payer: number; amount: bigint; deadlineInMs: number }
  | { t: 'capture'; which: number; to: number; amount: bigint | null }
  | { t: 'release'; which: number }
  | { t: 'advance'; ms: number }
  | { t: 'settle' };

const who = fc.integer({ min: 0, max: names.length - 1 });
const amount = fc.bigInt({ min: 1n, max: 700n });
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant('transfer' as const), from: who, to: who, amount, deadlineInMs: fc.integer({ min: -5, max: 10_000 }) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('reserve' as const), payer: who, amount, deadlineInMs: fc.integer({ min: 1, max: 5_000 }) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('capture' as const), which: fc.nat(20), to: who, amount: fc.option(amount, { nil: null }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('release' as const), which: fc.nat(20) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 3_000 }) }) },
  { weight: 2, arbitrary: fc.constant({ t: 'settle' as const }) },
);

/** The rules, applied one command at a time with no batching, prefetch or store. */
class Model {
  available = names.map(() => funding);
  reserved = names.map(() => 0n);
  holds: ({ payer: number; amount: bigint; deadlineMs: number; state: string } | null)[] = [];

  expire(nowMs: number) {
    for (const h of this.holds) {
      if (h && h.state === 'Reserved' && h.deadlineMs <= nowMs) this.finish(h, 'Expired', h.amount);
    }
  }
  private finish(h: NonNullable<Model['holds'][number]>, state: string, returnedMinor: bigint) {
    this.reserved[h.payer]! -= h.amount;
    this.available[h.payer]! += returnedMinor;
    h.state = state;
  }
  apply(a: Action, nowMs: number, decided: boolean) {
    if (a.t === 'transfer') {
      if (nowMs > nowMs + a.deadlineInMs || !decided) return;
      if (this.available[a.from]! >= a.amount) {
        this.available[a.from]! -= a.amount;
        this.available[a.to]! += a.amount;
      }
    } else if (a.t === 'reserve') {
      const ok = this.available[a.payer]! >= a.amount;
      if (ok) {
        this.available[a.payer]! -= a.amount;
        this.reserved[a.payer]! += a.amount;
      }
      this.holds.push(ok ? { payer: a.payer, amount: a.amount, deadlineMs: nowMs + a.deadlineInMs, state: 'Reserved' } : null);
    }
  }
  capture(h: NonNullable<Model['holds'][number]>, to: number, amountMinor: bigint | null, nowMs: number) {
    if (h.state !== 'Reserved' || nowMs >= h.deadlineMs || to === h.payer) return;
    const taken = amountMinor ?? h.amount;
    if (taken > h.amount) return;
    this.finish(h, 'Captured', h.amount - taken);
    this.available[to]! += taken;
  }
  release(h: NonNullable<Model['holds'][number]>) {
    if (h.state === 'Reserved') this.finish(h, 'Released', h.amount);
  }
}

async function dump(store: Store): Promise<string[]> {
  const out: string[] = [];
  for await (const [k, v] of store.entries({ gte: '', limit: Number.MAX_SAFE_INTEGER })) out.push(`${k}=${v}`);
  return out;
}

/** Runs the actions; at each settle point, compares the book with the model. */
async function run(actions: readonly Action[], store: Store, check: boolean) {
  const clock = new TestClock();
  const { kernel } = await openBook({ genesis: customersGenesis({ alice: funding, bob: funding, carol: funding }), store, clock });
  const model = new Model();
  const reservations: string[] = [];
  // Client keys numbered per run, so that a replay submits the very same requests.
  let submitted = 0;
  let pending: Promise<unknown>[] = [];
  const settle = async () => {
    await Promise.all(pending);
    pending = [];
    await kernel.poke();
  };
  // The model decides in the order the kernel acknowledged (cseq), as the kernel must:
  // concurrent submissions are ordered by acknowledgement, not by call.
  let queue: { cseq: Promise<number>; apply: () => void }[] = [];
  const drain = async () => {
    const ordered = await Promise.all(queue.map(async (q) => ({ cseq: await q.cseq, apply: q.apply })));
    queue = [];
    for (const q of ordered.filter((o) => o.cseq >= 0).sort((a, b) => a.cseq - b.cseq)) q.apply();
  };
  for (const a of actions) {
    const nowMs = clock.nowMs;
    let cmd: Command | null = null;
    let by = actor(0);
    let apply: () => void;
    switch (a.t) {
      case 'transfer':
        if (a.from === a.to) continue;
        cmd = transfer(account(a.from), account(a.to), a.amount, nowMs + a.deadlineInMs);
        by = actor(a.from);
        apply = () => model.apply(a, nowMs, nowMs <= nowMs + a.deadlineInMs);
        break;
      case 'reserve':
        cmd = { type: 'reserve', payer: acct(account(a.payer)), asset: sym('USD'), amountMinor: a.amount, deadlineMs: nowMs + a.deadlineInMs };
        by = actor(a.payer);
        apply = () => model.apply(a, nowMs, true);
        break;
      case 'capture':
      case 'release': {
        await settle();
        await drain();
        if (reservations.length === 0) continue;
        const i = a.which % reservations.length;
        const hold = model.holds[i];
        if (!hold || hold.state !== 'Reserved') continue;
        by = actor(hold.payer);
        cmd = a.t === 'capture' ? { type: 'capture', reservation: reservations[i]!, to: acct(account(a.to)), amountMinor: a.amount } : { type: 'release', reservation: reservations[i]! };
        apply = () => (a.t === 'capture' ? model.capture(hold, a.to, a.amount, clock.nowMs) : model.release(hold));
        break;
      }
      case 'advance':
        await settle();
        await drain();
        clock.advance(a.ms);
        await kernel.poke();
        model.expire(clock.nowMs);
        continue;
      case 'settle':
        await settle();
        await drain();
        if (check) await compare(kernel, model);
        continue;
    }
    const isReserve = a.t === 'reserve';
    const ack = kernel.submit(submission(by, cmd!, { clientKey: `run-${++submitted}` })).then(
      (ack) => {
        if (isReserve) reservations.push(ack.operation.ref);
        return ack.operation.cseq;
      },
      (e) => {
        if (!(e instanceof Refused)) throw e;
        if (isReserve) reservations.push('refused');
        return -1;
      },
    );
    queue.push({ cseq: ack, apply: apply! });
    pending.push(ack);
    // Reservations are numbered in submission order for the model.
    if (isReserve) await Promise.all(pending.splice(0));
  }
  await settle();
  await drain();
  if (check) await compare(kernel, model);
  await checkInvariants(kernel, store);
  await kernel.close();
}

async function compare(kernel: Awaited<ReturnType<typeof openBook>>['kernel'], model: Model) {
  const view = await kernel.openView();
  try {
    for (const [i] of names.entries()) {
      const b = await view.balance(acct(account(i)), sym('USD'));
      expect({ who: names[i], available: b.available, reserved: b.reserved }).toEqual({ who: names[i], available: model.available[i], reserved: model.reserved[i] });
    }
  } finally {
    await view.close();
  }
}

/** Invariants read back from the store: postings balance per operation; floors; trial balance zero. */
async function checkInvariants(kernel: Awaited<ReturnType<typeof openBook>>['kernel'], store: Store) {
  const perOperation = new Map<string, bigint>();
  for await (const [k, v] of store.entries({ gte: keys.journalPrefix, lt: prefixEnd(keys.journalPrefix), limit: Number.MAX_SAFE_INTEGER })) {
    for (const leaf of journalChunkLeaves(v, parseSeqHex(k.slice(keys.journalPrefix.length)))) {
      const p = decodeLeaf(leaf, null);
      if (p.kind === 'opening') continue;
      const k = `${p.operation}/${p.kind}/${p.asset}`;
      perOperation.set(k, (perOperation.get(k) ?? 0n) + (p.direction === 'credit' ? p.amountMinor : -p.amountMinor));
    }
  }
  for (const [k, sum] of perOperation) expect({ k, sum }).toEqual({ k, sum: 0n });
  const view = await kernel.openView();
  const tb = await view.trialBalance(null);
  expect(tb.unbalanced).toEqual([]);
  expect((await verifyTotals(store)).ok).toBe(true);
  for (const i of names.keys()) {
    const b = await view.balance(acct(account(i)), sym('USD'));
    expect(b.available >= 0n && b.reserved >= 0n).toBe(true);
  }
  const decided: [string, string][] = [];
  for await (const entry of store.entries({ gte: 'op/', lt: 'op0', limit: Number.MAX_SAFE_INTEGER })) decided.push(entry);
  // An op/ record says where the decided operation is stored (its event chunk).
  for (const op of await decidedOfEntries(store, decided)) {
    expect(op.state).not.toBe('Received');
  }
  await view.close();
}

describe('kernel properties', () => {
  it('keeps every invariant and agrees with the sequential model under random interleavings', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 60 }), async (actions) => {
        await run(actions, new MemoryStore(), true);
      }),
      { numRuns: 300 },
    );
  });

  // The store matrix: the same property on PostgreSQL, with fewer runs (each is a table and real round trips;
  // the interleavings are the kernel's, the same on any store: what differs is the store's order, batches and snapshots).
  it('keeps every invariant and agrees with the sequential model on PostgreSQL too', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 60 }), async (actions) => {
        await run(actions, await stores.open('postgres'), true);
      }),
      { numRuns: 50 },
    );
  });

  it('replays the same commands into the very same book', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 60 }), async (actions) => {
        const first = new MemoryStore();
        const second = new MemoryStore();
        await run(actions, first, false);
        await run(actions, second, false);
        expect(await dump(second)).toEqual(await dump(first));
      }),
      { numRuns: 60 },
    );
  });
});
