/**
 * The benchmarks' book: `customers` customer accounts `did:ledger:acct:b<i>` (owned by
 * `did:ledger:id:b<i>`, delegated custody), each funded with `fundingMinor` of every
 * asset (USD unless `assets` says otherwise) from that asset's treasury
 * (`did:ledger:acct:treasury-<asset>`) at genesis, the treasury's limit covering exactly that.
 */
import { type Genesis, importGenesis, parseGenesis } from '../src/book/genesis.js';
import { decodeHead, encodeAccount, encodeBalance, encodeHead } from '../src/model/codec.js';
import { keys } from '../src/model/keys.js';
import type { AccountId, IdentityId } from '../src/model/values.js';
import type { BatchOp, Store } from '../src/store/port.js';

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

/**
 * The same book at sizes whose genesis import is too slow (10^6 accounts took 141 s and
 * ~3 GB of heap): a one-customer genesis, then the other customers' accounts and USD
 * balances written straight into the store in batches, the treasury's balance and the
 * head to match. The kernel opens and decides on it like any book.
 */
export async function syntheticFundedBook(store: Store, customers: number, fundingMinor: bigint): Promise<void> {
  const one = fundedCustomersGenesis(1, fundingMinor);
  await importGenesis(store, one, Date.now());
  const customer = one.accounts[1]!;
  const funded = JSON.stringify(encodeBalance({ available: fundingMinor, reserved: 0n, encumbered: 0n }));
  for (let first = 1; first < customers; first += syntheticBatchEntries) {
    const batch: BatchOp[] = [];
    for (let i = first; i < Math.min(customers, first + syntheticBatchEntries); i++) {
      batch.push({ type: 'put', key: keys.account(benchAccount(i)), value: encodeAccount({ ...customer, id: benchAccount(i), owner: `did:ledger:id:b${i}` as IdentityId }) });
      batch.push({ type: 'put', key: keys.balance(benchAccount(i), 'USD'), value: funded });
    }
    await store.write(batch, false);
  }
  const treasury = one.accounts[0]!;
  const head = decodeHead((await store.get(keys.head))!);
  await store.write(
    [
      { type: 'put', key: keys.account(treasury.id), value: encodeAccount({ ...treasury, treasuryLimits: { USD: fundingMinor * BigInt(customers) } }) },
      { type: 'put', key: keys.balance(treasury.id, 'USD'), value: JSON.stringify(encodeBalance({ available: -fundingMinor * BigInt(customers), reserved: 0n, encumbered: 0n })) },
      { type: 'put', key: keys.head, value: encodeHead({ ...head, accounts: customers + 1 }) },
    ],
    true,
  );
}
const syntheticBatchEntries = 10_000;
