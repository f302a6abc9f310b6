/**
 * The streamed genesis import checks each entry against what was written before it
 * (in this chunk of entries or an earlier one), reads those checks in batches, and
 * names the first bad entry, as an entry-by-entry import did.
 */
import { describe, expect, it } from 'vitest';
import { type GenesisSource, importGenesisSource } from '../../src/book/genesis.js';
import { genesisEntriesPerRead } from '../../src/constants.js';
import { Refused } from '../../src/errors.js';
import { decodeBalance, decodeIdentity } from '../../src/model/codec.js';
import { readTotals } from '../../src/book/totals.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';
import { keys } from '../../src/model/keys.js';

type Doc = Record<string, unknown[]>;
const source = (doc: Doc): GenesisSource => ({
  sections: async () => Object.keys(doc),
  entries: async function* (section) {
    yield doc[section] ?? [];
  },
});

/** Customers c0..c(n-1), each funded with 5 GBP from the treasury t; sections may be edited before import. */
function customers(n: number): Doc {
  const ids = Array.from({ length: n }, (_, i) => i);
  return {
    assets: [{ id: 'GBP', kind: 'fiat', precision: 2 }],
    identities: ids.map((i) => `did:ledger:id:c${i}`),
    accounts: [...ids.map((i) => ({ account: `did:ledger:acct:c${i}`, owner: `did:ledger:id:c${i}`, kind: 'customer' })), { account: 'did:ledger:acct:t', owner: 'did:ledger:id:operator', kind: 'treasury', treasury_limits: { GBP: String(10 * n) } }],
    openings: [
      ...ids.map((i) => ({ account: `did:ledger:acct:c${i}`, asset: 'GBP', amount: '3', direction: 'credit' })),
      ...ids.map((i) => ({ account: `did:ledger:acct:c${i}`, asset: 'GBP', amount: '2', direction: 'credit' })),
      { account: 'did:ledger:acct:t', asset: 'GBP', amount: String(5 * n), direction: 'debit' },
    ],
    aliases: ids.map((i) => ({ source: 'old', name: `c-${i}`, account: `did:ledger:acct:c${i}` })),
    archived: [{ source: 'old', name: 'gone' }],
  };
}

async function refusal(doc: Doc): Promise<string> {
  const store = new MemoryStore();
  try {
    await importGenesisSource(store, source(doc), 1_000);
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    expect(await store.get(keys.sealed)).toBeUndefined();
    return error.refusal.description;
  }
  throw new Error('the genesis was imported');
}

const n = 2 * genesisEntriesPerRead + 17;

describe('streamed genesis import', () => {
  it('imports entries spread over many read chunks, each seeing the ones before it', async () => {
    const store = new MemoryStore();
    const doc = customers(n);
    // Two openings of one account inside one chunk, and an account's owner added to twice.
    doc.accounts!.push({ account: 'did:ledger:acct:c0-second', owner: 'did:ledger:id:c0', kind: 'customer' });
    doc.openings!.splice(1, 0, { account: 'did:ledger:acct:c0-second', asset: 'GBP', amount: '1', direction: 'credit' }, { account: 'did:ledger:acct:c0-second', asset: 'GBP', amount: '1', direction: 'debit' });
    await importGenesisSource(store, source(doc), 1_000);
    const balance = async (account: string) => decodeBalance(JSON.parse((await store.get(keys.balance(account, 'GBP')))!) as Record<string, unknown>);
    expect(await store.get(keys.sealed)).toBe('1000');
    expect((await balance('did:ledger:acct:c0')).available).toBe(5n);
    expect((await balance(`did:ledger:acct:c${n - 1}`)).available).toBe(5n);
    expect((await balance('did:ledger:acct:c0-second')).available).toBe(0n);
    expect((await balance('did:ledger:acct:t')).available).toBe(BigInt(-5 * n));
    expect(decodeIdentity((await store.get(keys.identity('did:ledger:id:c0')))!, keys.identity('did:ledger:id:c0')).accounts).toEqual(['did:ledger:acct:c0', 'did:ledger:acct:c0-second']);
    expect(await store.get(keys.alias('old', `c-${n - 1}`))).toBe(`did:ledger:acct:c${n - 1}`);
    expect((await readTotals(store, ['GBP'])).get('GBP')).toMatchObject({ available: 0n });
    expect(JSON.parse((await store.get(keys.head))!)).toMatchObject({ postingSeq: 2 * n + 3, accounts: n + 2 });
  });

  it('sees what it wrote while the store is still writing it, whichever batch an earlier opening of the same balance went out in', async () => {
    const store = new MemoryStore();
    // Each batch lands 60 ms after it is given, later than the next chunks are read: reads made meanwhile see only the batches before it.
    const slow = Object.assign(Object.create(store) as MemoryStore, {
      write: async (ops: readonly BatchOp[], sync: boolean) => {
        await new Promise((resolve) => setTimeout(resolve, 60));
        await store.write(ops, sync);
      },
    });
    // Enough accounts that an account's two openings may be a few batches apart.
    const accounts = 4 * genesisEntriesPerRead + 17;
    const doc = customers(accounts);
    // The second openings (2 each) in a scrambled order, so an account's two openings are every distance apart.
    const second = doc.openings!.splice(accounts, accounts);
    for (let i = 0; i < accounts; i++) doc.openings!.splice(accounts + i, 0, second[(i * 7919) % accounts]!);
    await importGenesisSource(slow, source(doc), 1_000);
    const available: bigint[] = [];
    for await (const [key, value] of store.entries({ gte: keys.balance('did:ledger:acct:c', ''), lt: keys.balance('did:ledger:acct:d', ''), limit: 2 * accounts })) {
      expect(key).toMatch(/GBP$/);
      available.push(decodeBalance(JSON.parse(value) as Record<string, unknown>).available);
    }
    expect(available).toEqual(Array.from({ length: accounts }, () => 5n));
  });

  it('reads its checks in batches: store round trips grow with chunks of entries, not entries', async () => {
    const store = new MemoryStore();
    let roundTrips = 0;
    const counted = Object.assign(Object.create(store) as MemoryStore, {
      get: (key: string) => (roundTrips++, store.get(key)),
      getMany: (wanted: readonly string[]) => (roundTrips++, store.getMany(wanted)),
    });
    await importGenesisSource(counted, source(customers(n)), 1_000);
    // Five sections of n entries (openings 2n+1) and the floor pass, a chunk of genesisEntriesPerRead per read.
    const chunks = Math.ceil(n / genesisEntriesPerRead);
    expect(roundTrips).toBeLessThanOrEqual(8 * (chunks + 1) + 10);
  });

  it('names the first bad entry, within a chunk and across chunks', async () => {
    const late = genesisEntriesPerRead + 5;
    const cases: [string, (doc: Doc) => void, string][] = [
      ['an account twice in one chunk', (d) => d.accounts!.splice(6, 0, { ...(d.accounts![3] as object) }), 'accounts[6]: account did:ledger:acct:c3 appears twice'],
      ['an account twice across chunks', (d) => d.accounts!.splice(late, 0, { ...(d.accounts![10] as object) }), `accounts[${late}]: account did:ledger:acct:c10 appears twice`],
      ['an owner not in identities', (d) => ((d.accounts![late] as Record<string, string>).owner = 'did:ledger:id:nobody'), `accounts[${late}].owner: identity did:ledger:id:nobody is not in identities`],
      ['an opening of an unknown account', (d) => ((d.openings![late] as Record<string, string>).account = 'did:ledger:acct:nobody'), `openings[${late}].account: account did:ledger:acct:nobody is not in accounts`],
      [
        'a bad reference before a malformed entry in the same chunk',
        (d) => {
          (d.openings![4] as Record<string, string>).account = 'did:ledger:acct:nobody';
          (d.openings![7] as Record<string, string>).direction = 'sideways';
        },
        'openings[4].account: account did:ledger:acct:nobody is not in accounts',
      ],
      ['a malformed entry', (d) => ((d.openings![late] as Record<string, string>).direction = 'sideways'), `openings[${late}].direction`],
      ['an alias twice across chunks', (d) => d.aliases!.splice(late, 0, { ...(d.aliases![1] as object) }), `aliases[${late}]: alias appears twice`],
      ['an archived alias', (d) => d.archived!.push({ source: 'old', name: `c-${late}` }), 'archived[1]: an archived identifier cannot also be an alias'],
      [
        'a customer below its floor',
        (d) => {
          (d.openings![late] as Record<string, string>).direction = 'debit';
          (d.openings![d.openings!.length - 1] as Record<string, string>).amount = String(5 * n - 6);
        },
        `leave did:ledger:acct:c${late} below its floor in GBP`,
      ],
    ];
    for (const [what, edit, named] of cases) {
      const doc = customers(n);
      edit(doc);
      expect({ what, refused: await refusal(doc) }).toEqual({ what, refused: expect.stringContaining(named) });
    }
  });
});
