/**
 * `ledgerd migrate` on a large layout-1 book: wall time, CPU per journal entry and peak
 * RSS of the migrating process, to show memory stays flat as the book grows.
 *
 *   npm run build && node dist/bench/migrate.js [--postings 1000000] [--accounts 100000] [--dir PATH] [--old-space-mib 48]
 *
 * The book is synthetic, written straight into LevelDB as stage 1 laid it out (one
 * `j/<seq>` posting per entry, empty `aa/` index entries, no totals, no `meta/layout`):
 * `--accounts` customers funded from a treasury at genesis, then 1-leg transfers between
 * neighbours, 2 postings each, 1,000 per time (a round). Peak RSS is read by /usr/bin/time.
 * `--old-space-mib` caps V8's old space in the migrating process: left free, V8 grows its
 * heap lazily with the book's size; capped, the migration still completes, showing what
 * it holds is bounded.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { encodeAccount, encodeAsset, encodeBalance, encodeHead } from '../src/model/codec.js';
import { keys } from '../src/model/keys.js';
import { type Balance, type Posting, moved, zeroBalance } from '../src/model/model.js';
import { LevelStore } from '../src/store/level.js';
import type { BatchOp } from '../src/store/port.js';
import type { AccountId, AssetSymbol, CredentialId, IdentityId } from '../src/model/values.js';

const { values: args } = parseArgs({ options: { postings: { type: 'string', default: '1000000' }, accounts: { type: 'string', default: '100000' }, dir: { type: 'string' }, 'old-space-mib': { type: 'string' } } });
const postingsWanted = Number(args.postings);
const accountCount = Number(args.accounts);
const dataDir = args.dir ?? mkdtempSync(join(tmpdir(), 'bench-migrate-'));

/** A posting as stage 1 stored it (its encodePosting: `after` as {a, r, e}). */
const layout1Posting = (p: Posting): string =>
  JSON.stringify({ ...p, amountMinor: p.amountMinor.toString(), reference: p.reference, after: { a: p.after.available.toString(), r: p.after.reserved.toString(), e: p.after.encumbered.toString() } });

const usd = 'USD' as AssetSymbol;
const treasury = 'did:ledger:acct:treasury-USD' as AccountId;
const customer = (i: number) => `did:ledger:acct:c${i}` as AccountId;
const authorities = [{ credential: 'did:ledger:cred:bench' as CredentialId, grant: null, kind: 'operator' as const, onBehalfOf: null, principal: 'did:ledger:id:operator' as IdentityId }];

async function writeLayout1Book(): Promise<number> {
  const store = await LevelStore.open(join(dataDir, 'book'));
  const balances = new Map<AccountId, Balance>();
  let batch: BatchOp[] = [];
  const put = async (key: string, value: string) => {
    batch.push({ type: 'put', key, value });
    if (batch.length >= 10_000) {
      await store.write(batch, false);
      batch = [];
    }
  };
  let seq = 0;
  const post = async (account: AccountId, counterparty: AccountId | null, amountMinor: bigint, direction: 'debit' | 'credit', atMs: number, kind: Posting['kind']) => {
    const after = moved(balances.get(account) ?? zeroBalance, 'available', direction === 'credit' ? amountMinor : -amountMinor);
    balances.set(account, after);
    seq++;
    const posting: Posting = { seq, atMs, account, asset: usd, amountMinor, direction, layer: 'available', kind, status: kind === 'opening' ? 'opening' : 'completed', operation: `op_${seq}`, counterparty, authorities, reference: null, after };
    await put(keys.journal(seq), layout1Posting(posting));
    await put(keys.accountAsset(account, usd, seq), '');
  };
  const t0 = 1_700_000_000_000;
  await put(keys.asset(usd), encodeAsset({ id: usd, code: 0, kind: 'fiat', precision: 2, status: 'active', binding: 'book_only', location: null }));
  const accounts = [treasury, ...Array.from({ length: accountCount }, (_, i) => customer(i))];
  for (const id of accounts) {
    const kind = id === treasury ? 'treasury' : 'customer';
    await put(keys.account(id), encodeAccount({ id, owner: 'did:ledger:id:operator' as IdentityId, kind, custody: 'delegated', status: 'active', openedAtMs: t0, epoch: 0, treasuryLimits: kind === 'treasury' ? { USD: 10n ** 20n } : {} }));
  }
  for (let i = 0; i < accountCount; i++) {
    await post(customer(i), null, 1_000_000n, 'credit', t0, 'opening');
    await post(treasury, null, 1_000_000n, 'debit', t0, 'opening');
  }
  for (let n = 0; seq + 2 <= postingsWanted; n++) {
    const from = customer(n % accountCount);
    const to = customer((n + 1) % accountCount);
    const atMs = t0 + 1 + Math.floor(n / 500);
    await post(from, to, 1n, 'debit', atMs, 'transfer');
    await post(to, from, 1n, 'credit', atMs, 'transfer');
  }
  for (const [account, b] of balances) await put(keys.balance(account, usd), JSON.stringify(encodeBalance(b)));
  await put(keys.head, encodeHead({ decidedCseq: 0, postingSeq: seq, eventSeq: 0, lastAtMs: t0 + postingsWanted, accounts: accounts.length }));
  await put(keys.sealed, String(t0));
  await store.write(batch, true);
  await store.close();
  writeFileSync(join(dataDir, 'daemon.key'), `${'A'.repeat(43)}\n`, { mode: 0o600 });
  return seq;
}

const writeStart = Date.now();
const postings = await writeLayout1Book();
console.log(`layout-1 book: ${postings} journal entries, ${accountCount + 1} accounts, written in ${((Date.now() - writeStart) / 1000).toFixed(1)} s (${dataDir})`);
const ledgerd = new URL('../../bin/ledgerd', import.meta.url).pathname;
const heapCap = args['old-space-mib'] === undefined ? [] : [`--max-old-space-size=${Number(args['old-space-mib'])}`];
const run = spawnSync('/usr/bin/time', ['-f', 'time: %M %U %S %e', process.execPath, ...heapCap, ledgerd, 'migrate', '--data-dir', dataDir], { encoding: 'utf8' });
process.stdout.write(run.stdout);
const figures = /time: (\d+) ([\d.]+) ([\d.]+) ([\d.]+)/.exec(run.stderr);
if (run.status !== 0 || figures === null) throw new Error(`migrate failed (${run.status}): ${run.stderr}`);
const [rssKiB, userS, sysS, wallS] = figures.slice(1).map(Number) as [number, number, number, number];
console.log(`migrate: ${wallS.toFixed(1)} s wall, ${(((userS + sysS) * 1e6) / postings).toFixed(1)} µs CPU per journal entry, peak RSS ${(rssKiB / 1024).toFixed(0)} MiB`);
if (args.dir === undefined) rmSync(dataDir, { recursive: true, force: true });
