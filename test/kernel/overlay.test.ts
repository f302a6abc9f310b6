import { describe, expect, it } from 'vitest';
import { Overlay } from '../../src/book/overlay.js';
import { keys } from '../../src/model/keys.js';
import type { Account, Balance } from '../../src/model/model.js';
import type { AccountId, AssetSymbol } from '../../src/model/values.js';

const usd = 'USD' as AssetSymbol;
const eur = 'EUR' as AssetSymbol;
const sd = 'SD' as AssetSymbol;
const alice = 'did:ledger:acct:alice' as AccountId;
const bob = 'did:ledger:acct:bob' as AccountId;
const balance = (available: bigint): Balance => ({ available, reserved: 0n, encumbered: 0n });

describe('a round\'s overlay', () => {
  it('keeps each account\'s balances apart by asset, under the store\'s keys, whichever asset it met first', () => {
    const overlay = new Overlay(new Map());
    // The overlay makes each account's first asset's key once; others are made each time: both must name their own balance.
    overlay.balances.set(keys.balance(alice, usd), balance(10n));
    overlay.balances.set(keys.balance(alice, eur), balance(20n));
    expect(overlay.balanceKey(alice, usd)).toBe(keys.balance(alice, usd));
    for (const asset of [eur, usd, sd, eur]) expect(overlay.balanceKey(alice, asset)).toBe(keys.balance(alice, asset));
    expect(overlay.balance(alice, usd)).toEqual(balance(10n));
    expect(overlay.balance(alice, eur)).toEqual(balance(20n));
    // An asset whose symbol ends another's, and one never stored, read as their own (zero).
    expect(overlay.balance(alice, sd)).toEqual(balance(0n));
    overlay.setBalance(alice, eur, balance(25n));
    overlay.setBalance(bob, eur, balance(-5n));
    expect(overlay.balance(alice, eur)).toEqual(balance(25n));
    expect(overlay.balance(alice, usd)).toEqual(balance(10n));
    expect([...overlay.dirtyBalances].sort()).toEqual([keys.balance(alice, eur), keys.balance(bob, eur)].sort());
    // The totals move by what the balances moved, per asset.
    expect(overlay.withTotals(new Map([[eur, balance(100n)]])).total(eur)).toEqual(balance(100n));
    expect(overlay.total(usd)).toEqual(balance(0n));
  });

  it('reads accounts under the store\'s keys, and refuses one that was not prefetched', () => {
    const overlay = new Overlay(new Map());
    const account = { id: alice } as Account;
    overlay.accounts.set(keys.account(alice), account);
    overlay.accounts.set(keys.account(bob), undefined);
    expect(overlay.account(alice)).toBe(account);
    expect(overlay.account(bob)).toBeUndefined();
    expect(overlay.accountKey(alice)).toBe(keys.account(alice));
    expect(() => overlay.account('did:ledger:acct:carol' as AccountId)).toThrow(/was prefetched/);
  });
});
