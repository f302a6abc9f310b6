/**
 * The book a genesis file makes, pinned entry by entry (issue 28): a document read by
 * daemon/genesis-file.ts and imported into LevelDB at a fixed clock gives exactly the
 * store entries (keys and values, so the journal's leaves and every checkpoint's root)
 * that the import gave before its scanner and its floor checks were rewritten. The
 * digests were taken from the stream-json reader and the pass over every balance, writing
 * store layout 4 (its compact account index); store layout 5 changed only `meta/layout` in
 * them (a genesis writes no operation or event), checked by hashing it as 4 to the old digests;
 * store layout 6 changed only `meta/layout` and the journal chunks `j/` (compact entries, no
 * leaves), checked by hashing each chunk as its leaves and the layout as 5 to layout 5's digests;
 * store layout 7 changed only `meta/layout` in them, hashed as 6 to layout 6's digests; then
 * layout 7's compact forms changed the identity and account records `id/`, `acct/` (tuples without the id) and
 * the openings' index entries `aa/` and journal lines (encodeIndexedOpening): each such record
 * is decoded and hashed in layout 6's form (asLayout6) to layout 6's digests, and the entries
 * as stored are pinned too (`layout 7 …`).
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openGenesisFile } from '../../daemon/genesis-file.js';
import { importGenesisSource } from '../../src/book/genesis.js';
import { genesisEntriesPerRead, genesisEntriesPerWrite, genesisIdentityRewriteAccountsMax, journalChunkEntriesMax } from '../../src/constants.js';
import { decodeAccount, decodeIdentity, decodeIndexedPosting, genesisOpeningAuthorities, journalChunkLeaves, journalChunkMark } from '../../src/model/codec.js';
import { keys, keySpaces, parseSeqHex, storeLayout } from '../../src/model/keys.js';
import type { BatchOp } from '../../src/store/port.js';
import { Refused } from '../../src/errors.js';
import { LevelStore } from '../../src/store/level.js';
import { useTempDirs } from './support.js';

const newDir = useTempDirs();
const assets = ['USD', 'EUR', 'BTC'] as const;
/** More customers than a journal chunk holds and than the floors kept in memory, so both bounds are crossed. */
const customers = journalChunkEntriesMax + 904;

/**
 * Customers funded in three assets, on every layer, some owning two accounts, identities
 * in both forms, sections in no particular order. `dip`: each customer is first debited
 * what it is then credited twice (below its floor until the last openings: more such
 * balances than the import keeps); `stuck`, `stuckFew`: every customer, or every fourth
 * from c2, is debited and credited in its reserved layer (left below its floor).
 */
type Variant = 'plain' | 'dip' | 'stuck' | 'stuckFew';
function document(variant: Variant): string {
  const amount = (i: number) => BigInt(1 + ((i * 7919) % 100_000));
  const totals = [0n, 0n, 0n];
  const openings: string[] = [];
  const opening = (i: number, credit: boolean, layer = 'available') => {
    const a = i % 3;
    totals[a]! += credit ? amount(i) : -amount(i);
    openings.push(`{"account":"did:ledger:acct:c${i}","asset":"${assets[a]}","amount":"${amount(i)}","direction":"${credit ? 'credit' : 'debit'}"${layer === 'available' ? '' : `,"balance":"${layer}"`}}`);
  };
  for (let i = 0; i < customers; i++) {
    const stuck = variant === 'stuck' || (variant === 'stuckFew' && i % 4 === 2);
    if (variant === 'dip' || stuck) opening(i, false);
    opening(i, true, stuck ? 'reserved' : variant === 'plain' ? ['available', 'reserved', 'encumbered'][i % 5 === 0 ? 1 : i % 7 === 0 ? 2 : 0] : 'available');
  }
  if (variant === 'dip') for (let i = 0; i < customers; i++) opening(i, true);
  // An asset whose openings already balance (the stuck customers) needs no treasury opening (an amount of zero is refused).
  const treasuryOpenings = assets.flatMap((s, a) => (totals[a] === 0n ? [] : [`{"account":"did:ledger:acct:t-${s}","asset":"${s}","amount":"${totals[a]! < 0n ? -totals[a]! : totals[a]!}","direction":"${totals[a]! < 0n ? 'credit' : 'debit'}"}`]));
  const owners = customers - 5;
  const accounts = Array.from({ length: customers }, (_, i) => `{"account":"did:ledger:acct:c${i}","owner":"did:ledger:id:p${i % owners}","kind":"customer"${i % 11 === 0 ? `,"custody":"owned","status":"active","opened_at":${1_600_000_000_000 + i}` : ''}}`);
  const treasuries = assets.map((s, a) => `{"account":"did:ledger:acct:t-${s}","owner":"did:ledger:id:operator","kind":"treasury","treasury_limits":{"${s}":"${(totals[a]! < 0n ? -totals[a]! : totals[a]!) + 1n}"}}`);
  const identities = Array.from({ length: owners }, (_, i) => (i % 4 === 0 ? `{"identity":"did:ledger:id:p${i}"}` : `"did:ledger:id:p${i}"`));
  const aliases = Array.from({ length: customers / 2 }, (_, i) => `{"source":"old","name":"c-${2 * i}","account":"did:ledger:acct:c${2 * i}"}`);
  return (
    `{"openings":[${[...openings, ...treasuryOpenings].join(',')}],\n"accounts":[${[...accounts, ...treasuries].join(',\n')}],` +
    '"assets":[{"id":"USD","kind":"fiat","precision":2},{"id":"EUR","kind":"fiat","precision":2,"status":"active"},{"id":"BTC","kind":"native","precision":8,"binding":"book_only","location":null}],' +
    `"identities":[${identities.join(', ')}],"archived":[{"source":"old","name":"gone-1"},{"source":"older","name":"x"}],"aliases":[${aliases.join(',')}]}\n`
  );
}

/**
 * Accounts of which every third is owned by one identity (`p-many`: more than a record is
 * rewritten whole for, over several batches), the first and the last by another (`p-ends`:
 * two accounts a whole section apart), the rest by one identity each.
 */
const manyAccounts = 3 * genesisEntriesPerWrite;
function identityDocument(): string {
  const owner = (i: number) => (i === 0 || i === manyAccounts - 1 ? 'p-ends' : i % 3 === 1 ? 'p-many' : `p${i}`);
  const accounts = Array.from({ length: manyAccounts }, (_, i) => `{"account":"did:ledger:acct:c${i}","owner":"did:ledger:id:${owner(i)}","kind":"customer"}`);
  const identities = ['p-ends', 'p-many', ...Array.from({ length: manyAccounts }, (_, i) => `p${i}`)].map((id) => `"did:ledger:id:${id}"`);
  return `{"assets":[{"id":"USD","kind":"fiat","precision":2}],"identities":[${identities.join(',')}],"accounts":[${accounts.join(',')}]}`;
}

/** Whether a compact index entry is a genesis opening's (a tuple of 7, not 13). */
const isOpeningForm = (text: string) => (JSON.parse(text) as unknown[]).length === 7;
/**
 * An index entry in layout 6's form (the full tuple: encodeIndexedPosting's before layout 7), whichever form it is stored in:
 * an opening's members as decoded, with the kind, status, operation, counterparty, authorities and reference it leaves out.
 */
function indexEntry6(account: string, asset: string, seq: number, text: string): string {
  if (!isOpeningForm(text)) return text;
  const p = decodeIndexedPosting(keys.accountAsset(account, asset, seq), text);
  const [at, amount, direction, layer, ...after] = JSON.parse(text) as unknown[];
  expect([p.kind, p.status, p.operation, p.counterparty, p.reference, p.authorities]).toEqual(['opening', 'opening', 'genesis', null, null, genesisOpeningAuthorities]);
  return JSON.stringify([at, amount, direction, layer, 0, 4, 'genesis', null, [['did:ledger:cred:genesis', null, 2, null, 'did:ledger:id:operator']], null, ...after]);
}

/** A stored entry's value as layout 6 wrote it: the layout mark, identity and account records, openings' index entries and journal lines decoded and encoded in its forms. */
function asLayout6(key: string, value: string): string {
  if (key === keys.layout) return '6';
  if (key.startsWith(keySpaces.account) && value.startsWith('[')) {
    const account = decodeAccount(value, key);
    return JSON.stringify({ ...account, treasuryLimits: Object.fromEntries(Object.entries(account.treasuryLimits).map(([asset, limit]) => [asset, limit.toString()])) });
  }
  if (key.startsWith(keySpaces.identity) && value.startsWith('[')) return JSON.stringify(decodeIdentity(value, key));
  if (key.startsWith(keySpaces.accountAsset)) {
    const [account, asset, seq] = key.slice(keySpaces.accountAsset.length).split('/') as [string, string, string];
    return indexEntry6(account, asset, parseSeqHex(seq), value);
  }
  if (key.startsWith(keySpaces.journal)) {
    const [mark, ...lines] = value.split('\n');
    expect(mark).toBe(journalChunkMark);
    const firstSeq = parseSeqHex(key.slice(keySpaces.journal.length));
    return [mark, ...lines.map((line, i) => {
      const [account, asset] = line.split('/', 2) as [string, string];
      const place = `${account}/${asset}/`;
      return place + indexEntry6(account, asset, firstSeq + i, line.slice(place.length));
    })].join('\n');
  }
  return value;
}

/** Imports the document from a file into a fresh LevelDB at a fixed clock: the refusal, or the count and sha256 of every entry. `wrote` hears every batch. */
async function bookOf(text: string, wrote: (ops: readonly BatchOp[]) => void = () => {}): Promise<string> {
  const dir = newDir();
  const file = join(dir, 'genesis.json');
  writeFileSync(file, text);
  const store = await LevelStore.open(join(dir, 'book'));
  const write = store.write.bind(store);
  store.write = (ops, sync) => (wrote(ops), write(ops, sync));
  // The import's batches are built op by op (LevelStore.batch): each heard as it is written.
  const batch = store.batch.bind(store);
  store.batch = () => {
    const inner = batch();
    const ops: BatchOp[] = [];
    return {
      put: (key, value) => (ops.push({ type: 'put', key, value }), inner.put(key, value)),
      del: (key) => (ops.push({ type: 'del', key }), inner.del(key)),
      get length() {
        return inner.length;
      },
      write: (sync) => (wrote(ops), inner.write(sync)),
    };
  };
  const genesis = await openGenesisFile(file);
  try {
    await importGenesisSource(store, genesis, 1_700_000_000_000);
    const hash6 = createHash('sha256');
    const hash7 = createHash('sha256');
    let entries = 0;
    for await (const [key, value] of store.entries({ limit: 100_000 })) {
      if (key === keys.layout) expect(value).toBe(storeLayout);
      const value6 = asLayout6(key, value);
      // The CONTRACT 9 leaves made from a chunk are the same bytes in either form.
      if (key.startsWith(keySpaces.journal)) {
        const firstSeq = parseSeqHex(key.slice(keySpaces.journal.length));
        expect(journalChunkLeaves(value, firstSeq)).toEqual(journalChunkLeaves(value6, firstSeq));
      }
      hash6.update(`${key}\0${value6}\n`);
      hash7.update(`${key}\0${value}\n`);
      entries++;
    }
    return `${entries} entries, sha256 ${hash6.digest('hex')} (layout 7 ${hash7.digest('hex')})`;
  } catch (error) {
    if (error instanceof Refused) return error.refusal.description;
    throw error;
  } finally {
    await genesis.close();
    await store.close();
  }
}

describe('the book a genesis file makes', () => {
  it('is the same, entry by entry, as the import made before', async () => {
    expect(customers).toBeGreaterThan(2 * genesisEntriesPerRead);
    expect(await bookOf(document('plain'))).toBe('27524 entries, sha256 ef9cff37e49949bf76a88267e529a7e5077c3ccfcf6650063ba6f675262e4158 (layout 7 11a446911b10a676ecdc1386d9936c15e1fd2d197193e2af4bcb5fd30d143c0c)');
  });

  it('is the same when more balances than the import keeps dip below their floor before the last openings', async () => {
    expect(await bookOf(document('dip'))).toBe('37528 entries, sha256 417bb4e9d2a3995f81659f33870da9520ddf195c51d1272a1312e290d23248e0 (layout 7 792f6282c83faf1d0028378060a4ea353a3ac430a90f4c6c06d7afc6f1d6f111)');
  });

  it('names the first balance below its floor in key order, as the pass over every balance did', async () => {
    expect(await bookOf(document('stuckFew'))).toBe('genesis openings: leave did:ledger:acct:c10 below its floor in EUR');
    expect(await bookOf(document('stuck'))).toBe('genesis openings: leave did:ledger:acct:c0 below its floor in USD');
  });

  it('is the same with an identity of many accounts spread through the section, whose record is written three times, not once per batch', async () => {
    const many = keys.identity('did:ledger:id:p-many');
    let writes = 0;
    let batches = 0;
    const book = await bookOf(identityDocument(), (ops) => {
      batches++;
      writes += ops.filter((op) => op.key === many).length;
    });
    expect(manyAccounts / 3).toBeGreaterThan(2 * genesisIdentityRewriteAccountsMax);
    expect(batches).toBeGreaterThan(8);
    expect(book).toBe('90009 entries, sha256 8e0a70e121cbf975bbadb13f4a4bba2bdbdee501e8fd190f8d2758eb1cd8e0bb (layout 7 9bc10da088aee3d57b19b328a3d681be77d37d807f68d2e4bf92823c6a9994b1)');
    // Made with its identity, rewritten whole once (under the bound), then once with every later account.
    expect(writes).toBe(3);
  });

  it("lists an identity's accounts in file order, however far apart, and leaves no scratch entry", async () => {
    const dir = newDir();
    const file = join(dir, 'genesis.json');
    writeFileSync(file, identityDocument());
    const store = await LevelStore.open(join(dir, 'book'));
    const genesis = await openGenesisFile(file);
    try {
      await importGenesisSource(store, genesis, 1_700_000_000_000);
      const accounts = async (id: string) => decodeIdentity((await store.get(keys.identity(`did:ledger:id:${id}`)))!, keys.identity(`did:ledger:id:${id}`)).accounts;
      expect(await accounts('p-ends')).toEqual(['did:ledger:acct:c0', `did:ledger:acct:c${manyAccounts - 1}`]);
      expect(await accounts('p-many')).toEqual(Array.from({ length: manyAccounts / 3 }, (_, i) => `did:ledger:acct:c${3 * i + 1}`));
      const spaces = new Set<string>();
      for await (const [key] of store.entries({ limit: 10 * manyAccounts })) spaces.add(key.slice(0, key.indexOf('/') + 1));
      expect([...spaces].sort()).toEqual(['acct/', 'asset/', 'dref/', 'id/', 'meta/', 'tb/']);
    } finally {
      await genesis.close();
      await store.close();
    }
  });
});
