/**
 * The kernel's in-memory state that follows the store: the head, the registered assets,
 * the per-asset totals, the cache of accounts, balances and identities, the used-set's
 * count. Read from the store on open and after a write failure; changed only by a round
 * once its write is durable (`follow`).
 */
import { assert } from '../assert.js';
import { challengesOutstandingMax } from '../auth/constants.js';
import { decodeHead } from '../model/codec.js';
import { keySpaces, keys, prefixEnd } from '../model/keys.js';
import type { Account, Asset, Balance, Head, Identity } from '../model/model.js';
import type { Store } from '../store/port.js';
import { GenerationalCache } from './cache.js';
import { PendingCommandChunks } from './command-chunks.js';
import type { BuiltRound } from './round-builder.js';
import { readTotals, totalMinor } from './totals.js';

export class BookState {
  readonly cache: GenerationalCache<Account | Balance | Identity>;
  /** Per asset, the sum of every balance layer by layer (as stored under tb/); their sum must stay zero (the trial balance). */
  totals = new Map<string, Balance>();
  /** Entries of the used-set (challenges taken, not yet pruned). */
  challengesOutstanding = 0;
  /** When expired challenges and sessions were last pruned (at most once per authPruneIntervalMs). */
  authPrunedAtMs = 0;
  /** The `cmd/` chunks holding undecided commands (read with the backlog: decider.ts loadBacklog). */
  readonly commandChunks = new PendingCommandChunks();

  constructor(
    private readonly store: Store,
    public assets: ReadonlyMap<string, Asset>,
    public head: Head,
    cacheEntries: number,
  ) {
    this.cache = new GenerationalCache(cacheEntries);
  }

  /** Reads the per-asset totals (one read per asset, whatever the book's size); the trial balance must be zero. */
  async loadTotals(): Promise<void> {
    const totals = await readTotals(this.store, this.assets.keys());
    for (const [asset, total] of totals) assert(totalMinor(total) === 0n, `the reopened book's trial balance is zero in ${asset}`);
    this.totals = totals;
  }

  async countChallenges(): Promise<void> {
    for await (const _ of this.store.entries({ gte: keySpaces.challenge, lt: prefixEnd(keySpaces.challenge), limit: challengesOutstandingMax })) this.challengesOutstanding++;
  }

  /** Reads the state back after a write failure (a write reported failed may have landed); the cache is dropped. */
  async reload(): Promise<void> {
    const headText = await this.store.get(keys.head);
    assert(headText !== undefined, 'a sealed book has a head');
    this.head = decodeHead(headText);
    this.cache.clear();
    await this.loadTotals();
    this.challengesOutstanding = 0;
    await this.countChallenges();
  }

  /** A round's write is durable: the assets, counters, cache, totals and head now follow the store. */
  follow(round: BuiltRound): void {
    const { head, overlay, totals, challengesAdded, assets } = round;
    if (assets.size > 0) this.assets = new Map([...this.assets, ...assets]);
    this.challengesOutstanding += challengesAdded;
    this.cache.noteChange();
    for (const key of overlay.dirtyBalances) this.cache.set(key, overlay.balances.get(key)!);
    for (const key of overlay.dirtyAccounts) this.cache.set(key, overlay.accounts.get(key)!);
    for (const key of overlay.dirtyIdentities) this.cache.set(key, overlay.identities.get(key)!);
    for (const [asset, total] of totals) {
      this.totals.set(asset, total);
      assert(totalMinor(total) === 0n, `the trial balance is zero in ${asset}`);
    }
    this.head = head;
    this.commandChunks.dropThrough(head.decidedCseq);
  }
}
