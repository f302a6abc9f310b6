/**
 * Settlement benchmark (docs/settlement.md): deposits credited per second through
 * `settle` commands of one final block of 1 000 deposits (the daemon takes no further block
 * into a command past settleItemsPerCommandMax items),
 * and withdrawals decided per second (Instructed) then completed by one `settle`.
 * LevelDB, fsync'd unless --no-sync. Prints a table; nothing is asserted.
 *
 *   npm run build && node dist/bench/settlement.js [--deposits 64000] [--withdrawals 20000] [--no-sync]
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { builtInPrincipals } from '../src/auth/authority.js';
import { importGenesis } from '../src/book/genesis.js';
import { Kernel, type Submission } from '../src/book/kernel.js';
import { layerBlockItemsMax } from '../src/constants.js';
import { sequentialIds } from '../src/model/ids.js';
import type { Command, SettleBlock } from '../src/model/model.js';
import type { AssetSymbol, CredentialId, IdentityId } from '../src/model/values.js';
import { depositRefOf } from '../src/settlement/book.js';
import { LevelStore } from '../src/store/level.js';
import { benchAccount, fundedCustomersGenesis } from './genesis.js';
import { settlementKeys } from '../src/model/keys.js';

const { values: args } = parseArgs({
  options: {
    deposits: { type: 'string', default: '64000' },
    withdrawals: { type: 'string', default: '20000' },
    customers: { type: 'string', default: '1000' },
    'no-sync': { type: 'boolean', default: false },
  },
});
const deposits = Number(args.deposits);
const withdrawals = Number(args.withdrawals);
const customers = Number(args.customers);
const sync = !args['no-sync'];

const usd = 'USD' as AssetSymbol;
const location = '5e'.repeat(32);
const operator = { principal: builtInPrincipals.operator, credential: 'did:ledger:cred:operator' as CredentialId, onBehalfOf: null };
const customer = (i: number) => ({ principal: `did:ledger:id:b${i}` as IdentityId, credential: `did:ledger:cred:b${i}` as CredentialId, onBehalfOf: null });
let keys = 0;
const submission = (actor: Submission['actor'], command: Command): Submission => {
  const key = `s-${++keys}`;
  return { command, actor, clientKey: key, requestDigest: createHash('sha256').update(key).digest('hex'), reference: null };
};
let height = 0;
const block = (facts: Partial<SettleBlock>): SettleBlock => ({ height: ++height, deposits: [], instructions: [], expired: [], attestations: [], ...facts });
const settle = (blocks: SettleBlock[]): Command => ({ type: 'settle', finalHeight: height, headHeight: height, blocks, due: [] });

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-settlement-'));
  const store = await LevelStore.open(dir);
  try {
    await importGenesis(store, fundedCustomersGenesis(customers, 1_000_000n), Date.now());
    const kernel = await Kernel.open({ store, clock: Date.now, ids: sequentialIds, sync, settlement: { instance: 1, instructionExpiryBlocks: 100, layerHeight: () => height } });
    const run = async (actor: Submission['actor'], command: Command) => {
      const ack = await kernel.submit(submission(actor, command));
      await kernel.idle();
      return (await kernel.operation(ack.operation.ref))!;
    };
    await run(operator, { type: 'bind_asset', asset: usd, location });
    await run(operator, settle([block({ attestations: [{ location, symbol: 'USD', decimals: 2, status: 'active' }] })]));

    let seq = 0;
    const depositStarted = performance.now();
    while (seq < deposits) {
      const facts = [];
      for (let i = 0; i < layerBlockItemsMax && seq < deposits; i++, seq++) {
        facts.push({ seq: seq + 1, digest: createHash('sha256').update(String(seq)).digest('hex'), location, amountMinor: 100n, accountRef: depositRefOf(benchAccount(seq % customers)), height: height + 1 });
      }
      await run(operator, settle([block({ deposits: facts })]));
    }
    const depositSeconds = (performance.now() - depositStarted) / 1000;

    const withdrawStarted = performance.now();
    const acks = [];
    for (let i = 0; i < withdrawals; i++) {
      acks.push(kernel.submit(submission(customer(i % customers), { type: 'withdraw', account: benchAccount(i % customers), asset: usd, amountMinor: 1n, destination: { account: 'cd'.repeat(32) }, deadlineMs: Number.MAX_SAFE_INTEGER })));
      if (acks.length >= 1024) await Promise.all(acks.splice(0));
    }
    await Promise.all(acks);
    await kernel.idle();
    const withdrawSeconds = (performance.now() - withdrawStarted) / 1000;

    // Every instruction carried in final blocks: each settle completes 1 000 withdrawals.
    const instructions = [];
    for (const [, digest] of await kernel.settlementRecords(settlementKeys.pendingPrefix, settlementKeys.pendingPrefix, withdrawals)) instructions.push({ digest, location, amountMinor: 1n });
    const completeStarted = performance.now();
    while (instructions.length > 0) await run(operator, settle([block({ instructions: instructions.splice(0, layerBlockItemsMax) })]));
    const completeSeconds = (performance.now() - completeStarted) / 1000;
    await kernel.close();
    console.log(`| flow | count | per second |\n|---|---|---|`);
    console.log(`| deposits credited by settle (1 000 per command) | ${deposits} | ${Math.round(deposits / depositSeconds)} |`);
    console.log(`| withdrawals decided (Instructed), 1 024 in flight | ${withdrawals} | ${Math.round(withdrawals / withdrawSeconds)} |`);
    console.log(`| withdrawals completed by settle (1 000 per command) | ${withdrawals} | ${Math.round(withdrawals / completeSeconds)} |`);
    console.log(`(sync ${sync})`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
