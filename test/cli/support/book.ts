/** The book process tests start from: two customers, alice funded with USD, aliases and an archived id. */
export const accounts = {
  treasury: 'did:ledger:acct:treasury-USD',
  alice: 'did:ledger:acct:alice',
  bob: 'did:ledger:acct:bob',
};

export const aliceOpeningMinor = '100000';

export const testGenesis = {
  assets: [
    { id: 'USD', kind: 'fiat', precision: 2 },
    { id: 'EUR', kind: 'fiat', precision: 2 },
  ],
  identities: ['did:ledger:id:alice', 'did:ledger:id:bob'],
  accounts: [
    { account: accounts.treasury, owner: 'did:ledger:id:operator', kind: 'treasury', treasury_limits: { USD: '100000000000' } },
    { account: accounts.alice, owner: 'did:ledger:id:alice', kind: 'customer' },
    { account: accounts.bob, owner: 'did:ledger:id:bob', kind: 'customer' },
  ],
  openings: [
    { account: accounts.treasury, asset: 'USD', amount: aliceOpeningMinor, direction: 'debit' },
    { account: accounts.alice, asset: 'USD', amount: aliceOpeningMinor, direction: 'credit' },
  ],
  aliases: [
    { source: 'ledger', name: 'treasury:USD', account: accounts.treasury },
    { source: 'legacy', name: 'alice-1', account: accounts.alice },
  ],
  archived: [{ source: 'legacy', name: 'gone-1' }],
};
