/**
 * What the operator's treasury accounts hold, per asset (signed minor units, every layer): the
 * accounts the signed-in principal owns (`GET /v1/accounts?owner=`, every page) that are of kind
 * treasury, each one's balances summed. An identity owns at most 256 accounts, so this is a few
 * requests, not a scan of the book.
 */
import type { AccountBalances, AccountListing } from '../api.js';
import type { LedgerClient } from '../client.js';
import { accountPagesMax } from '../limits.js';
import type { Treasuries } from './model.js';

export async function readTreasuries(client: LedgerClient, owner: string): Promise<Treasuries> {
  const treasuries: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < accountPagesMax; pages++) {
    const page = await client.get<AccountListing>('/v1/accounts', { owner, limit: 1000, cursor });
    treasuries.push(...page.items.filter((a) => a.kind === 'treasury').map((a) => a.account));
    if (page.next === undefined) break;
    cursor = page.next;
  }
  const byAsset = new Map<string, bigint>();
  for (const account of treasuries) {
    const { balances } = await client.get<AccountBalances>(`/v1/accounts/${encodeURIComponent(account)}/balances`);
    for (const b of balances) byAsset.set(b.asset, (byAsset.get(b.asset) ?? 0n) + BigInt(b.available) + BigInt(b.reserved) + BigInt(b.encumbered));
  }
  return { accounts: treasuries.length, byAsset };
}
