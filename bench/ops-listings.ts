/**
 * Operator listings benchmark (docs/api.md, Operator listings): in a LevelDB book of N decided
 * transfers, the latency of one page of GET /v1/ops/operations as the kernel reads it (newest
 * 100; a filter that matches nothing, so the page reads its bound of 4,000 index entries; one
 * that matches every transfer), of GET /v1/ops/accounts filtered by an asset, and the time
 * `ledgerd` takes at open to build the operations index of a book from before it; and, after
 * `--audited` more transfers submitted by the operator's member `root` (one audit item each),
 * pages of GET /v1/ops/audit (from the start, from the middle, and a member filter that
 * matches nothing, so the page reads its bound of 10,000 items). Prints a table; nothing is
 * asserted.
 *
 *   npm run build && node dist/bench/ops-listings.js [--transfers 50000] [--audited 20000] [--accounts 2000] [--queries 50]
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type Actor, builtInPrincipals } from '../src/auth/authority.js';
import { importGenesis } from '../src/book/genesis.js';
import { Kernel } from '../src/book/kernel.js';
import { sequentialIds } from '../src/model/ids.js';
import { keys, prefixEnd } from '../src/model/keys.js';
import type { AssetSymbol, CredentialId, IdentityId } from '../src/model/values.js';
import { buildOperationIndex } from '../src/queries/operation-index.js';
import { listAccounts, listOperations } from '../src/queries/ops-listings.js';
import type { BookView } from '../src/queries/queries.js';
import { LevelStore } from '../src/store/level.js';
import { benchAccount, fundedCustomersGenesis } from './genesis.js';
import { percentile } from './percentile.js';

const { values: args } = parseArgs({
  options: {
    transfers: { type: 'string', default: '50000' },
    audited: { type: 'string', default: '20000' },
    accounts: { type: 'string', default: '2000' },
    queries: { type: 'string', default: '50' },
  },
});
const transfers = Number(args.transfers);
const audited = Number(args.audited);
const accounts = Number(args.accounts);
const queries = Number(args.queries);
const inFlight = 1024;
const usd = 'USD' as AssetSymbol;
const actor = (i: number): Actor => ({ principal: `did:ledger:id:b${i}` as IdentityId, credential: `did:ledger:cred:b${i}` as CredentialId, onBehalfOf: null });

const operator: Actor = { principal: builtInPrincipals.operator, credential: 'did:ledger:cred:operator' as CredentialId, onBehalfOf: null };

/** `count` transfers, each by its payer's owner, or all by the operator (`root`, audited) when `byOperator`. */
async function fill(kernel: Kernel, count: number, byOperator = false): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const key = `${byOperator ? 'a' : 't'}-${i}`;
      const from = i % accounts;
      await kernel.submit({
        command: { type: 'transfer', legs: [{ from: benchAccount(from), to: benchAccount((from + 1) % accounts), asset: usd, amountMinor: 1n }], deadlineMs: Number.MAX_SAFE_INTEGER },
        actor: byOperator ? operator : actor(from),
        clientKey: key,
        requestDigest: createHash('sha256').update(key).digest('hex'),
        reference: null,
      });
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  await kernel.idle();
}

/** p50 and p99 of `queries` pages, each on a view of its own; and the items the last page held. */
async function timed(kernel: Kernel, read: (view: BookView) => Promise<{ items: unknown[] }>): Promise<[number, number, number]> {
  const ms: number[] = [];
  let items = 0;
  for (let i = 0; i < queries; i++) {
    const view = await kernel.openView();
    const started = performance.now();
    items = (await read(view)).items.length;
    ms.push(performance.now() - started);
    await view.close();
  }
  ms.sort((a, b) => a - b);
  return [percentile(ms, 50), percentile(ms, 99), items];
}

async function main() {
  console.log(`ops listings bench: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${transfers} transfers over ${accounts} accounts, ${queries} pages each\n`);
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-ops-listings-'));
  try {
    let store = await LevelStore.open(dir);
    await importGenesis(store, fundedCustomersGenesis(accounts, 1_000_000_000n), Date.now());
    let kernel = await Kernel.open({ store, clock: Date.now, ids: sequentialIds, sync: false, onFatal: (e) => { throw e; } });
    await fill(kernel, transfers);
    const none = { state: null, command: null, principal: null, fromMs: null, toMs: null };
    const rows: [string, [number, number, number]][] = [
      ['operations, newest 100', await timed(kernel, (v) => listOperations(v.records, { limit: 100, after: null }, none))],
      ['operations, command=open_account (none: 4,000 read)', await timed(kernel, (v) => listOperations(v.records, { limit: 100, after: null }, { ...none, command: 'open_account' }))],
      ['operations, state=Completed, 1,000', await timed(kernel, (v) => listOperations(v.records, { limit: 1000, after: null }, { ...none, state: 'Completed' }))],
      ['accounts, asset=USD, 1,000', await timed(kernel, (v) => listAccounts(v.records, { limit: 1000, after: null }, { kind: null, status: null, custody: null, asset: usd, owner: null }))],
      ['accounts, asset=EUR (none matches: every account read)', await timed(kernel, (v) => listAccounts(v.records, { limit: 100, after: null }, { kind: null, status: null, custody: null, asset: 'EUR', owner: null }))],
    ];
    await fill(kernel, audited, true);
    rows.push(
      ['audit, first 100', await timed(kernel, (v) => v.audit({ afterSeq: 0, limit: 100, member: null }))],
      ['audit, 1,000 from the middle', await timed(kernel, (v) => v.audit({ afterSeq: Math.floor(audited / 2) + 7, limit: 1000, member: null }))],
      ['audit, member=nobody (none: 10,000 read)', await timed(kernel, (v) => v.audit({ afterSeq: 0, limit: 100, member: 'nobody' }))],
    );
    console.log('page'.padEnd(52), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'items'.padStart(7));
    for (const [name, [p50, p99, items]] of rows) console.log(name.padEnd(52), p50.toFixed(1).padStart(8), p99.toFixed(1).padStart(8), String(items).padStart(7));

    await kernel.close();
    store = await LevelStore.open(dir);
    // A book from before the index: drop it, then time what an open builds.
    const dropped: string[] = [keys.operationTimeBuilt];
    for await (const [key] of store.entries({ gte: keys.operationTimePrefix, lt: prefixEnd(keys.operationTimePrefix), limit: Number.MAX_SAFE_INTEGER })) dropped.push(key);
    for (let i = 0; i < dropped.length; i += 10_000) await store.write(dropped.slice(i, i + 10_000).map((key) => ({ type: 'del' as const, key })), true);
    const started = performance.now();
    const built = await buildOperationIndex(store);
    const ms = performance.now() - started;
    console.log(`\nindex built at open: ${built} operations in ${ms.toFixed(0)} ms (${Math.round(built / (ms / 1000))} a second)`);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
