/**
 * The benchmarks' book: `customers` customer accounts `did:ledger:acct:b<i>` (owned by
 * `did:ledger:id:b<i>`, delegated custody), each funded with `fundingMinor` USD from
 * the USD treasury at genesis, the treasury's limit covering exactly that.
 */
import { type Genesis, parseGenesis } from '../src/book/genesis.js';
import type { AccountId } from '../src/model/values.js';

export const benchAccount = (i: number) => `did:ledger:acct:b${i}` as AccountId;

export function fundedCustomersGenesis(customers: number, fundingMinor: bigint): Genesis {
  const ids = Array.from({ length: customers }, (_, i) => i);
  const treasury = 'did:ledger:acct:treasury-USD';
  const funding = fundingMinor.toString();
  return parseGenesis(
    JSON.stringify({
      assets: [{ id: 'USD', kind: 'fiat', precision: 2 }],
      identities: ids.map((i) => `did:ledger:id:b${i}`),
      accounts: [
        { account: treasury, owner: 'did:ledger:id:operator', kind: 'treasury', treasury_limits: { USD: (fundingMinor * BigInt(customers)).toString() } },
        ...ids.map((i) => ({ account: benchAccount(i), owner: `did:ledger:id:b${i}`, kind: 'customer' })),
      ],
      openings: fundingMinor === 0n
        ? []
        : ids.flatMap((i) => [
            { account: benchAccount(i), asset: 'USD', amount: funding, direction: 'credit' },
            { account: treasury, asset: 'USD', amount: funding, direction: 'debit' },
          ]),
    }),
  );
}
