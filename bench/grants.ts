/**
 * Grant benchmark: decided transfers per second by the owner, by a holder of one
 * grant, and by a holder at its bounds (64 live grants, the covering one read last,
 * and 64 revoked ones); and grant listing page latency over an identity with
 * 1 200 grants. Prints a table; nothing is asserted.
 *
 *   npm run build && node dist/bench/grants.js [--transfers 20000] [--no-sync]
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseGrantTerms } from '../src/auth/grants.js';
import { type GrantOp, type GrantTerms } from '../src/model/model.js';
import type { Actor } from '../src/auth/authority.js';
import { importGenesis } from '../src/book/genesis.js';
import { sequentialIds } from '../src/model/ids.js';
import { Kernel, type Submission } from '../src/book/kernel.js';
import type { Command } from '../src/model/model.js';
import { LevelStore } from '../src/store/level.js';
import type { AssetSymbol, CredentialId, GrantId, IdentityId } from '../src/model/values.js';
import { benchAccount, fundedCustomersGenesis } from './genesis.js';
import { percentile } from './percentile.js';

const { values: args } = parseArgs({
  options: {
    transfers: { type: 'string', default: '20000' },
    'in-flight': { type: 'string', default: '1024' },
    queries: { type: 'string', default: '200' },
    'no-sync': { type: 'boolean', default: false },
  },
});
const transfers = Number(args.transfers);
const inFlight = Number(args['in-flight']);
const queries = Number(args.queries);
const sync = !args['no-sync'];

const usd = 'USD' as AssetSymbol;
const identity = (i: number) => `did:ledger:id:b${i}` as IdentityId;
const actor = (i: number): Actor => ({ principal: identity(i), credential: `did:ledger:cred:b${i}` as CredentialId, onBehalfOf: null });
const holder = 5;
let keyCounter = 0;

function submission(by: Actor, command: Command): Submission {
  const key = `g-${++keyCounter}`;
  return { command, actor: by, clientKey: key, requestDigest: createHash('sha256').update(key).digest('hex'), reference: null };
}

async function decided(kernel: Kernel, by: Actor, command: Command) {
  const ack = await kernel.submit(submission(by, command));
  await kernel.idle();
  const op = (await kernel.operation(ack.operation.ref))!;
  if (op.error !== null) throw new Error(`${command.type}: ${op.error.error} ${op.error.description}`);
  return op;
}

const terms = (grantor: number, ops: GrantOp[]): GrantTerms =>
  parseGrantTerms({ kind: 'delegated', principal: identity(holder), subject: { account: benchAccount(grantor) }, ops, per_operation: '1000' }, 'delegated');
const give = async (kernel: Kernel, grantor: number, ops: GrantOp[]) =>
  (await decided(kernel, actor(grantor), { type: 'issue_grant', terms: terms(grantor, ops), justification: null })).result!.grant! as GrantId;

async function openBook() {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-grants-'));
  const store = await LevelStore.open(dir);
  await importGenesis(store, fundedCustomersGenesis(6, 1_000_000_000n), Date.now());
  const kernel = await Kernel.open({ store, clock: Date.now, ids: sequentialIds, sync, onFatal: (e) => { throw e; } });
  return { kernel, dir };
}

async function drive(kernel: Kernel, by: Actor, from: number) {
  let next = 0;
  const started = performance.now();
  const transfer = (): Command => ({ type: 'transfer', legs: [{ from: benchAccount(from), to: benchAccount(4), asset: usd, amountMinor: 1n }], deadlineMs: Number.MAX_SAFE_INTEGER });
  const worker = async () => {
    while (next++ < transfers) await kernel.submit(submission(by, transfer()));
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, transfers) }, worker));
  await kernel.idle();
  return transfers / ((performance.now() - started) / 1000);
}

async function main() {
  console.log(`grants bench: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, fsync ${sync ? 'on' : 'off'}, ${transfers} transfers each\n`);
  const rows: [string, number][] = [];

  const { kernel, dir } = await openBook();
  rows.push(['owner, no grant read', await drive(kernel, actor(0), 0)]);
  const single = await give(kernel, 0, ['transfer']);
  rows.push(['holder of 1 grant', await drive(kernel, actor(holder), 0)]);
  await decided(kernel, actor(holder), { type: 'revoke_grant', grant: single });

  // At the bounds: 64 revoked, then 63 live grants that do not cover the transfer and the one that does, read last.
  for (let i = 0; i < 63; i++) {
    const g = await give(kernel, 1, ['reserve']);
    await decided(kernel, actor(holder), { type: 'revoke_grant', grant: g });
  }
  const given: GrantId[] = [];
  for (let g = 1; g <= 3; g++) for (let i = 0; i < 16; i++) given.push(await give(kernel, g, ['reserve']));
  for (let i = 0; i < 15; i++) given.push(await give(kernel, 0, ['reserve']));
  given.push(await give(kernel, 0, ['transfer']));
  rows.push(['holder of 64 live + 64 revoked, covering grant last', await drive(kernel, actor(holder), 0)]);
  for (const g of given) await decided(kernel, actor(holder), { type: 'revoke_grant', grant: g });

  // A listing over an identity that gave 1 200 grants (revoked as it went, to stay within its bounds).
  for (let i = 0; i < 1_200; i++) {
    const g = await give(kernel, 2, ['reserve']);
    await decided(kernel, actor(2), { type: 'revoke_grant', grant: g });
  }
  const samples: number[] = [];
  for (let i = 0; i < queries; i++) {
    const t = performance.now();
    const view = await kernel.openView();
    try {
      await view.identityGrants(actor(2), identity(2), { limit: 1000, cursor: null });
    } finally {
      await view.close();
    }
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  await kernel.close();
  rmSync(dir, { recursive: true, force: true });

  console.log('| workload | decided transfers/s |');
  console.log('|---|---:|');
  for (const [name, rate] of rows) console.log(`| ${name} | ${rate.toFixed(0)} |`);
  const at = (p: number) => percentile(samples, p);
  console.log(`\n| query | p50 ms | p99 ms |\n|---|---:|---:|\n| identity grant listing, page of 1000 (1 200 grants) | ${at(50).toFixed(2)} | ${at(99).toFixed(2)} |`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
