/**
 * The decider's working state for one write: records prefetched from the cache or the
 * store, with the changes decisions make layered on top. Decisions read it
 * synchronously; the kernel turns its dirty records into one batch.
 */
import { fail } from '../assert.js';
import type { Reads } from '../decide/decide.js';
import { type Account, type Asset, type Balance, type Identity, type Operation, zeroBalance } from '../model/model.js';
import type { AccountId, AssetSymbol, GrantId } from '../model/values.js';
import { keySpaces, keys } from '../model/keys.js';

export class Overlay implements Reads {
  readonly accounts = new Map<string, Account | undefined>();
  readonly identities = new Map<string, Identity | undefined>();
  readonly balances = new Map<string, Balance>();
  readonly operations = new Map<string, Operation>();
  /** Other records by store key, as stored text; undefined when absent. */
  readonly records = new Map<string, string | undefined>();
  readonly dirtyRecords = new Set<string>();
  /** Ids under an index prefix (grants held, grants narrowed from one), as prefetched. */
  readonly lists = new Map<string, GrantId[]>();
  readonly dirtyAccounts = new Set<string>();
  readonly dirtyIdentities = new Set<string>();
  readonly dirtyBalances = new Set<string>();
  readonly dirtyOperations = new Set<string>();

  /** Assets registered or changed by this round's decisions. */
  readonly dirtyAssets = new Map<string, Asset>();
  /** Per asset, the totals as committed before the round (`withTotals`) and what the round's balances moved since. */
  private committedTotals: ReadonlyMap<string, Balance> = new Map();
  /** Added to in place, layer by layer (one object per asset, not one per balance set). */
  private readonly totalDeltas = new Map<string, { available: bigint; reserved: bigint; encumbered: bigint }>();

  /**
   * Store keys of accounts (by id) and balances (by account, for one asset), made once per
   * overlay: a round reads each several times (prefetch, precheck, decision), and a key made
   * anew is a new string to allocate, flatten and hash at every lookup.
   */
  private readonly accountKeys = new Map<string, string>();
  private readonly balanceKeys = new Map<string, string>();

  constructor(private readonly assets: ReadonlyMap<string, Asset>) {}

  accountKey(id: string): string {
    let key = this.accountKeys.get(id);
    if (key === undefined) this.accountKeys.set(id, (key = keys.account(id)));
    return key;
  }
  /** `keys.balance(account, asset)`; an account's first asset's key is kept (most rounds move one asset), another's made each time. */
  balanceKey(account: string, asset: string): string {
    const known = this.balanceKeys.get(account);
    // `bal/<account>/` is the known key's start: its length and end say whether it is this asset's.
    if (known !== undefined && known.length === keySpaces.balance.length + account.length + 1 + asset.length && known.endsWith(asset)) return known;
    const key = keys.balance(account, asset);
    if (known === undefined) this.balanceKeys.set(account, key);
    return key;
  }

  /** The per-asset totals the round starts from (the decider's; an intake's prechecks read none). */
  withTotals(totals: ReadonlyMap<string, Balance>): this {
    this.committedTotals = totals;
    return this;
  }
  total(asset: AssetSymbol): Balance {
    const delta = this.totalDeltas.get(asset) ?? zeroBalance;
    const base = this.committedTotals.get(asset) ?? zeroBalance;
    return { available: base.available + delta.available, reserved: base.reserved + delta.reserved, encumbered: base.encumbered + delta.encumbered };
  }

  asset(symbol: AssetSymbol): Asset | undefined {
    return this.dirtyAssets.get(symbol) ?? this.assets.get(symbol);
  }
  /** The asset bound or binding at a settlement-layer location (assets are few: bounded by assetsMax). */
  assetAt(location: string): Asset | undefined {
    for (const symbol of new Set([...this.assets.keys(), ...this.dirtyAssets.keys()])) {
      const asset = this.asset(symbol as AssetSymbol)!;
      if (asset.location === location && asset.binding !== 'book_only') return asset;
    }
    return undefined;
  }
  get assetCount(): number {
    return new Set([...this.assets.keys(), ...this.dirtyAssets.keys()]).size;
  }
  setAsset(asset: Asset): void {
    this.dirtyAssets.set(asset.id, asset);
  }
  assetSymbols(): readonly AssetSymbol[] {
    return [...this.assets.keys()] as AssetSymbol[];
  }
  account(id: AccountId): Account | undefined {
    const key = this.accountKey(id);
    const account = this.accounts.get(key);
    if (account === undefined && !this.accounts.has(key)) fail(`account ${id} was prefetched`);
    return account;
  }
  identity(id: string): Identity | undefined {
    const key = keys.identity(id);
    if (!this.identities.has(key)) fail(`identity ${id} was prefetched`);
    return this.identities.get(key);
  }
  balance(account: AccountId, asset: AssetSymbol): Balance {
    return this.balanceAt(this.balanceKey(account, asset));
  }
  /** The balance under its key (`keys.balance`), for a caller that has built the key already. */
  balanceAt(key: string): Balance {
    // An account opened in this same write has no stored balance to prefetch.
    return this.balances.get(key) ?? zeroBalance;
  }
  operation(ref: string): Operation | undefined {
    return this.operations.get(ref);
  }
  record(key: string): string | undefined {
    if (!this.records.has(key)) fail(`record ${key} was prefetched`);
    return this.records.get(key);
  }

  listed(prefix: string): readonly GrantId[] {
    const ids = this.lists.get(prefix);
    if (ids === undefined) fail(`index ${prefix} was prefetched`);
    return ids;
  }

  /** Puts a record, or deletes it when `value` is null. */
  setRecord(key: string, value: string | null): void {
    this.records.set(key, value ?? undefined);
    this.dirtyRecords.add(key);
    // An index entry written or deleted this round changes a list a later decision of the round reads.
    const prefix = key.slice(0, key.lastIndexOf('/') + 1);
    const list = this.lists.get(prefix);
    if (list === undefined) return;
    const id = key.slice(prefix.length) as GrantId;
    const at = list.indexOf(id);
    if (value !== null && at === -1) list.push(id), list.sort();
    if (value === null && at !== -1) list.splice(at, 1);
  }

  setAccount(account: Account): void {
    const key = this.accountKey(account.id);
    this.accounts.set(key, account);
    this.dirtyAccounts.add(key);
  }
  setIdentity(identity: Identity): void {
    const key = keys.identity(identity.id);
    this.identities.set(key, identity);
    this.dirtyIdentities.add(key);
  }
  setBalance(account: AccountId, asset: AssetSymbol, balance: Balance): void {
    this.setBalanceAt(this.balanceKey(account, asset), asset, balance);
  }
  /** setBalance under its key (`keys.balance(account, asset)`), for a caller that has built the key already. */
  setBalanceAt(key: string, asset: AssetSymbol, balance: Balance): void {
    const before = this.balanceAt(key);
    let delta = this.totalDeltas.get(asset);
    if (delta === undefined) this.totalDeltas.set(asset, (delta = { available: 0n, reserved: 0n, encumbered: 0n }));
    // Only the layers that moved (an entry moves one).
    if (balance.available !== before.available) delta.available += balance.available - before.available;
    if (balance.reserved !== before.reserved) delta.reserved += balance.reserved - before.reserved;
    if (balance.encumbered !== before.encumbered) delta.encumbered += balance.encumbered - before.encumbered;
    this.balances.set(key, balance);
    this.dirtyBalances.add(key);
  }
  setOperation(op: Operation): void {
    this.operations.set(op.ref, op);
    this.dirtyOperations.add(op.ref);
  }
}
