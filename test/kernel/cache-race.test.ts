/**
 * The decider's cache and reads that straddle a round. Intake reads accounts and identities
 * through the same cache as the decider, and its reads run while rounds land (LevelDB's
 * past a few keys go to its thread pool; every read does on PostgreSQL). A read begun before
 * a round's write and answered after the round was followed holds the record as it was: kept
 * in the cache, the next round would decide on it — here, move money out of an account the
 * round had frozen.
 */
import { describe, expect, it } from 'vitest';
import type { Operation } from '../../src/model/model.js';
import type { AccountId } from '../../src/model/values.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';
import { customersGenesis, openBook, operator, submission } from '../support/book.js';

/** A store whose decision writes (those that write events) and whose reads of one key can be held. */
class HeldStore extends MemoryStore {
  holdDecisions = false;
  holdReadsOf: string | null = null;
  private readonly heldWrites: (() => void)[] = [];
  get decisionsHeld(): number {
    return this.heldWrites.length;
  }
  private heldRead: (() => void) | null = null;
  readHeld = false;

  override async write(ops: readonly BatchOp[], sync?: boolean): Promise<void> {
    if (this.holdDecisions && ops.some((op) => op.key.startsWith('ev/'))) await new Promise<void>((resume) => this.heldWrites.push(resume));
    return super.write(ops, sync);
  }

  override async getMany(keys: readonly string[]) {
    if (this.holdReadsOf !== null && keys.includes(this.holdReadsOf)) {
      this.holdReadsOf = null;
      // Read now, as the store would have when asked; answered once released.
      const texts = await super.getMany(keys);
      this.readHeld = true;
      await new Promise<void>((resume) => (this.heldRead = resume));
      return texts;
    }
    return super.getMany(keys);
  }

  releaseDecisions(): void {
    this.holdDecisions = false;
    for (const resume of this.heldWrites.splice(0)) resume();
  }

  releaseRead(): void {
    this.heldRead?.();
  }
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function until(what: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    if (await what()) return;
    await turn();
  }
  throw new Error('never came');
}

describe('the decider\'s cache, read across a round', () => {
  it('keeps no record read before a round landed: a transfer out of an account that round froze is refused', async () => {
    const others = Array.from({ length: 1_200 }, (_, i) => `c${i}`);
    const store = new HeldStore();
    // The smallest cache, so that the reads of many other accounts push alice's record out of it.
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 100n, bob: 0n, ...Object.fromEntries(others.map((name) => [name, 0n])) }), store, cacheEntries: 1024 });
    const alice = 'did:ledger:acct:alice' as AccountId;
    const bob = 'did:ledger:acct:bob' as AccountId;
    // One intake round, so one decision round: transfers of four legs to 1,200 other accounts, then the freeze. The round reads
    // alice's account, then 1,200 balances: alice's record leaves the cache before the round is written. Its write is held.
    store.holdDecisions = true;
    const transfers = [];
    for (let i = 0; i < others.length; i += 4) {
      const legs = others.slice(i, i + 4).map((name) => ({ from: bob, to: `did:ledger:acct:${name}` as AccountId, asset: 'USD' as never, amountMinor: 1n }));
      transfers.push(kernel.submit(submission(operator, { type: 'transfer', legs, deadlineMs: Number.MAX_SAFE_INTEGER })));
    }
    const freezing = kernel.submit(submission(operator, { type: 'freeze_account', account: alice, justification: 'held round' }));
    await Promise.all(transfers);
    const freeze = await freezing;
    await until(() => store.decisionsHeld > 0);
    // Intake reads alice's account for a transfer out of it, as the store holds it before the freeze lands; its answer comes after.
    store.holdReadsOf = 'acct/did:ledger:acct:alice';
    const moving = kernel.submit(submission(operator, { type: 'transfer', legs: [{ from: alice, to: bob, asset: 'USD' as never, amountMinor: 60n }], deadlineMs: Number.MAX_SAFE_INTEGER }));
    await until(() => store.readHeld);
    store.releaseDecisions();
    await until(async () => (await kernel.operation(freeze.operation.ref))?.state === 'Completed');
    store.releaseRead();
    const ack = await moving;
    await kernel.idle();
    const decided = (await kernel.operation(ack.operation.ref)) as Operation;
    expect(decided.state).toBe('Rejected');
    expect(decided.error?.error).toBe('ERR-AccountFrozen');
    await kernel.close();
  }, 60_000);
});

