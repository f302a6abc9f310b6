/**
 * Restart and trial-balance benchmark on a large book: builds (or reuses, with --dir)
 * a book of `--accounts` funded customer accounts on LevelDB, then times, each
 * `--trials` times: reopening the store and the kernel until it is ready to decide
 * (restart-to-readiness), a trial balance of every asset, and the full pass over
 * every balance that `verifyTotals` makes (what opening and every trial balance
 * cost before the totals were kept). Prints the figures; nothing is asserted.
 *
 *   npm run build && node --max-old-space-size=12000 dist/bench/restart.js [--accounts 1000000] [--dir PATH] [--trials 3] [--synthetic]
 *
 * `--synthetic` builds a book that holds the accounts and balances of `--accounts`
 * funded customers but only one customer's journal and identity (written straight
 * into the store in batches, without genesis's in-memory checks): the records opening
 * and the trial balance could read, for sizes whose genesis import is too slow here.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type Genesis, importGenesis } from '../src/book/genesis.js';
import { sequentialIds } from '../src/model/ids.js';
import { Kernel } from '../src/book/kernel.js';
import { LevelStore } from '../src/store/level.js';
import { verifyTotals } from '../src/book/totals.js';
import type { IdentityId } from '../src/model/values.js';
import { benchAccount, fundedCustomersGenesis, syntheticFundedBook } from './genesis.js';

const { values: args } = parseArgs({ options: { accounts: { type: 'string', default: '1000000' }, dir: { type: 'string' }, trials: { type: 'string', default: '3' }, synthetic: { type: 'boolean', default: false } } });
const accounts = Number(args.accounts);
const trials = Number(args.trials);
const fundingMinor = 1_000_000n;

/**
 * The benchmarks' book (bench/genesis.ts) at any size: one customer is parsed and
 * checked, the rest are copies of it, so no document of millions of entries is held as text.
 */
function largeGenesis(customers: number): Genesis {
  const one = fundedCustomersGenesis(1, fundingMinor);
  const [treasury, customer] = one.accounts as [Genesis['accounts'][number], Genesis['accounts'][number]];
  const [credit, debit] = one.openings as [Genesis['openings'][number], Genesis['openings'][number]];
  const ids = Array.from({ length: customers }, (_, i) => i);
  return {
    ...one,
    identities: ids.map((i) => `did:ledger:id:b${i}` as IdentityId),
    accounts: [{ ...treasury, treasuryLimits: { USD: fundingMinor * BigInt(customers) } }, ...ids.map((i) => ({ ...customer, id: benchAccount(i), owner: `did:ledger:id:b${i}` as IdentityId }))],
    openings: ids.flatMap((i) => [{ ...credit, account: benchAccount(i) }, debit]),
  };
}

const ms = (from: number) => performance.now() - from;


async function main() {
  const dir = args.dir ?? mkdtempSync(join(tmpdir(), 'ledger-restart-'));
  if (!existsSync(join(dir, 'CURRENT'))) {
    const started = performance.now();
    const store = await LevelStore.open(dir);
    if (args.synthetic) await syntheticFundedBook(store, accounts, fundingMinor);
    else await importGenesis(store, largeGenesis(accounts), Date.now());
    await store.close();
    console.log(`built a ${args.synthetic ? 'synthetic ' : ''}book of ${accounts} funded accounts in ${(ms(started) / 1000).toFixed(0)} s (${dir})`);
  }
  for (let trial = 1; trial <= trials; trial++) {
    const opened = performance.now();
    const store = await LevelStore.open(dir, { createIfMissing: false });
    const kernel = await Kernel.open({ store, clock: Date.now, ids: sequentialIds });
    const readyMs = ms(opened);
    const asked = performance.now();
    const view = await kernel.openView();
    const tb = await view.trialBalance(null);
    const trialBalanceMs = ms(asked);
    await view.close();
    const passed = performance.now();
    const report = await verifyTotals(store);
    const passMs = ms(passed);
    console.log(
      `trial ${trial}: ${tb.accounts} accounts; restart-to-readiness ${readyMs.toFixed(1)} ms; trial balance ${trialBalanceMs.toFixed(1)} ms (unbalanced: ${tb.unbalanced.length}); ` +
        `full pass over every balance (verifyTotals) ${(passMs / 1000).toFixed(2)} s (ok: ${report.ok})`,
    );
    await kernel.close();
  }
  if (args.dir === undefined) rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
