/**
 * The benchmarks' book: `customers` customer accounts `did:ledger:acct:b<i>` (owned by
 * `did:ledger:id:b<i>`, delegated custody), each funded with `fundingMinor` of every
 * asset (USD unless `assets` says otherwise) from that asset's treasury
 * (`did:ledger:acct:treasury-<asset>`) at genesis, the treasury's limit covering exactly that.
 */
import { type Genesis, parseGenesis } from '../src/book/genesis.js';
import type { AccountId } from '../src/model/values.js';

export const benchAccount = (i: number) => `did:ledger:acct:b${i}` as AccountId;
export const benchTreasury = (asset: string) => `did:ledger:acct:treasury-${asset}` as AccountId;

export function fundedCustomersGenesis(customers: number, fundingMinor: bigint, assets: readonly string[] = ['USD']): Genesis {
  const ids = Array.from({ length: customers }, (_, i) => i);
  const funding = fundingMinor.toString();
  return parseGenesis(
    JSON.stringify({
      assets: assets.map((id) => ({ id, kind: 'fiat', precision: 2 })),
      identities: ids.map((i) => `did:ledger:id:b${i}`),
      accounts: [
        ...assets.map((asset) => ({ account: benchTreasury(asset), owner: 'did:ledger:id:operator', kind: 'treasury', treasury_limits: { [asset]: (fundingMinor * BigInt(customers)).toString() } })),
        ...ids.map((i) => ({ account: benchAccount(i), owner: `did:ledger:id:b${i}`, kind: 'customer' })),
      ],
      openings: fundingMinor === 0n
        ? []
        : assets.flatMap((asset) =>
            ids.flatMap((i) => [
              { account: benchAccount(i), asset, amount: funding, direction: 'credit' },
              { account: benchTreasury(asset), asset, amount: funding, direction: 'debit' },
            ]),
          ),
    }),
  );
}
