/**
 * `ledgerd check --data-dir DIR`: verifies a stopped book offline (a book on PostgreSQL
 * may be served meanwhile: everything is read from one snapshot), through the query
 * layer (BookView), so it does not depend on how the store lays the book out:
 * - the trial balance: every asset's balances sum to zero, and the per-asset totals the
 *   kernel keeps (and answers the trial balance from) equal the sum of every balance;
 * - every account's balance in every asset against its journal entries: folded in
 *   journal order from zero, each entry's recorded `after` and, at the end, the stored
 *   balance must match the fold.
 * - every checkpoint: its kernel_root recomputed from the journal (one pass over it), its
 *   commitment, and its link to the one before.
 * - what check-records.ts checks below the query layer: records outside the layout,
 *   credentials and tokens against their principals, daemon.key against the book.
 * Accounts are listed by their records (the other read here below the query layer). A
 * record that does not decode is a problem of its account (or its checkpoint), and the
 * check goes on with the next; one met in a pass over the whole book ends that pass
 * alone.
 */
import { builtInPrincipals, type Actor } from '../src/auth/authority.js';
import { loadAssets } from '../src/book/assets.js';
import { checkCheckpoints } from '../src/checkpoints/checkpoints.js';
import { decodeAccount, decodeHead } from '../src/model/codec.js';
import { DamagedRecord } from '../src/model/decode.js';
import { existsSync, readFileSync } from 'node:fs';
import { deriveDaemonKeys, idsEpoch } from './book.js';
import { bookPaths } from './data-dir.js';
import { StartupFailure, exitCodes } from './failures.js';
import { movementsPageLimitMax } from '../src/constants.js';
import { type Balance, moved, zeroBalance } from '../src/model/model.js';
import { BookView } from '../src/queries/queries.js';
import { sameBalance, verifyTotals } from '../src/book/totals.js';
import type { ReadView, Store } from '../src/store/port.js';
import type { AccountId, AssetSymbol, CredentialId } from '../src/model/values.js';
import { keys } from '../src/model/keys.js';
import { pagedEntries } from '../src/store/paged.js';
import { checkAccountPageEntries, checkProblemsListedMax } from './constants.js';
import { checkCounters, checkCredentials, checkDaemonKey, checkForeignRecords, checkOperationIndex } from './check-records.js';
import { type IdSource, keyedIds } from '../src/model/ids.js';

/** What a check has read so far (`ledgerd check` and the online check show it as progress). */
export interface CheckCounts {
  readonly accounts: number;
  readonly balances: number;
  readonly postings: number;
}

/**
 * Called between passes and after each page of an account's entries: it reports progress,
 * and may end the check early by throwing (the online check's time bound).
 */
export type CheckWatch = (counts: CheckCounts) => void;

export interface CheckReport {
  readonly accounts: number;
  readonly balances: number;
  readonly postings: number;
  readonly checkpoints: number;
  readonly view: number;
  readonly problemCount: number;
  readonly problems: readonly string[];
}

const operator: Actor = { principal: builtInPrincipals.operator, credential: 'did:ledger:cred:check' as CredentialId, onBehalfOf: null, scope: null };

const showBalance = (b: Balance) => `available ${b.available}, reserved ${b.reserved}, encumbered ${b.encumbered}`;

/** `ids`: the ids of the data dir's daemon.key, or null when it has none. */
export async function checkBook(store: Store, ids: IdSource | null, watch: CheckWatch = () => {}): Promise<CheckReport> {
  const problems: string[] = [];
  let problemCount = 0;
  const problem = (text: string) => {
    problemCount++;
    if (problems.length < checkProblemsListedMax) problems.push(text);
  };
  // Everything from one snapshot: a book on PostgreSQL may be checked while a ledgerd serves it.
  const snap = store.snapshot();
  const assets = await loadAssets(snap);
  const view = await BookView.open(snap, assets, builtInPrincipals, 0, () => null);
  let accounts = 0;
  let balances = 0;
  let postings = 0;
  const tick = () => watch({ accounts, balances, postings });
  // A pass that meets a damaged record reports it and the check goes on with the next pass.
  const pass = async (name: string | null, run: () => Promise<void>) => {
    tick();
    try {
      await run();
    } catch (error) {
      if (!(error instanceof DamagedRecord)) throw error;
      problem(name === null ? error.message : `${name}: ${error.message}`);
    }
  };
  try {
    await pass(null, async () => void (await idsEpoch(snap)));
    let tbAccounts: number | null = null;
    await pass('trial balance', async () => {
      const tb = await view.trialBalance(null);
      tbAccounts = tb.accounts;
      for (const row of tb.rows) if (row.openingsMinor !== 0n) problem(`trial balance: ${row.asset} sums to ${row.openingsMinor}, not 0`);
    });
    // The trial balance above is read from the kept totals: sum every balance too (a damaged balance is named below too, by its account).
    await pass('totals: the balances cannot be summed', async () => {
      for (const { asset, stored, summed } of (await verifyTotals(snap)).assets) {
        if (stored === null) problem(`totals: ${asset} has no kept total; its balances sum to ${showBalance(summed)}`);
        else if (!sameBalance(stored, summed)) problem(`totals: ${asset} keeps ${showBalance(stored)}; its balances sum to ${showBalance(summed)}`);
      }
    });

    for await (const [account, record] of accountRecords(snap)) {
      accounts++;
      try {
        decodeAccount(record, keys.account(account));
        for (const { asset, balance } of await view.balances(account)) {
          balances++;
          const folded = await foldMovements(view, account, asset, problem, tick);
          postings += folded.postings;
          if (!sameBalance(folded.balance, balance)) problem(`${account} ${asset}: balance is ${showBalance(balance)}; its journal entries sum to ${showBalance(folded.balance)}`);
        }
      } catch (error) {
        // A record that does not decode is a problem of this account; the check goes on with the next.
        if (!(error instanceof DamagedRecord)) throw error;
        problem(`${account}: ${error.message}`);
      }
    }
    if (tbAccounts !== null && accounts !== tbAccounts) problem(`the head counts ${tbAccounts} accounts; ${accounts} account records exist`);
    tick();
    // Each damaged checkpoint is named by checkCheckpoints, which goes on with the next.
    const checkpoints = await checkCheckpoints(snap, problem);
    await pass('credentials', () => checkCredentials(snap, problem));
    tick();
    await checkForeignRecords(snap, problem);
    await checkDaemonKey(snap, ids, problem);
    await pass('counters', () => checkCounters(snap, problem));
    await pass('operations index', () => checkOperationIndex(snap, problem));
    return { accounts, balances, postings, checkpoints, view: view.view, problemCount, problems };
  } finally {
    await view.close();
  }
}

/** The journal's length as the head records it (what the check folds, for its progress), or null when the head does not decode (the check reports that). */
export async function journalLength(view: ReadView): Promise<number | null> {
  const text = await view.get(keys.head);
  try {
    return text === undefined ? null : decodeHead(text).postingSeq;
  } catch (error) {
    if (error instanceof DamagedRecord) return null;
    throw error;
  }
}

/** The ids of the data dir's daemon.key (read, never made), or null when it has none. */
export async function dataDirIds(dataDir: string): Promise<IdSource | null> {
  const path = bookPaths(dataDir).daemonKey;
  if (!existsSync(path)) return null;
  const derived = deriveDaemonKeys(readFileSync(path, 'utf8'));
  if (derived === null) throw new StartupFailure(`${path} does not hold a daemon key`, exitCodes.dataDir);
  return keyedIds(derived.ids);
}

/** Every account's id and stored record, a page at a time. */
async function* accountRecords(store: ReadView): AsyncGenerator<[AccountId, string]> {
  for await (const [key, record] of pagedEntries(store, keys.accountPrefix, checkAccountPageEntries)) yield [key.slice(keys.accountPrefix.length) as AccountId, record];
}

/** The account's entries in `asset`, folded from zero in journal order; a recorded `after` that differs from the fold is a problem (the first one only). */
async function foldMovements(view: BookView, account: AccountId, asset: AssetSymbol, problem: (text: string) => void, tick: () => void): Promise<{ balance: Balance; postings: number }> {
  let balance = zeroBalance;
  let postings = 0;
  let reported = false;
  let cursor: string | null = null;
  do {
    const page = await view.movements(operator, { account, identity: null, limit: movementsPageLimitMax, fromMs: null, toMs: null, asset, direction: null, cursor });
    for (const p of page.movements) {
      postings++;
      balance = moved(balance, p.layer, p.direction === 'credit' ? p.amountMinor : -p.amountMinor);
      if (!reported && !sameBalance(balance, p.after)) {
        reported = true;
        problem(`${account} ${asset}: journal entry ${p.seq} records ${showBalance(p.after)} after it; the entries up to it sum to ${showBalance(balance)}`);
      }
    }
    cursor = page.next;
    tick();
  } while (cursor !== null);
  return { balance, postings };
}
