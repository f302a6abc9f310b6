/**
 * `ledgerctl assets register|bind|deprecate`, `withdrawals create` and `settlement
 * status|sync|compare|rescan|observe` as processes against a real `ledgerd`, whose
 * embedded layer makes a block every second (the default).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accounts, testGenesis } from './support/book.js';
import { type Daemon, startDaemon } from './support/daemon.js';
import { configDir, ledgerctl } from './support/ledgerctl.js';

let daemon: Daemon;
let asOperator: Record<string, string>;

beforeAll(async () => {
  daemon = await startDaemon({ genesis: testGenesis });
  asOperator = { LEDGER_URL: daemon.url, LEDGER_TOKEN: daemon.operatorKey, LEDGERCTL_CONFIG_DIR: configDir() };
});
afterAll(() => daemon?.stop());

const run = (args: string[]) => ledgerctl(args, asOperator);
const location = '5e'.repeat(32);

describe('settlement from ledgerctl', () => {
  it('registers, binds, withdraws, syncs, compares, rescans and refuses a bad observation', async () => {
    const registered = await run(['assets', 'register', 'GBP', '--kind', 'fiat', '--precision', '2', '--json']);
    expect(registered.code).toBe(0);
    expect(registered.json().state).toBe('Completed');
    const badKind = await run(['assets', 'register', 'CHF', '--kind', 'paper', '--precision', '2']);
    expect(badKind.code).toBe(2);

    const bound = await run(['assets', 'bind', 'USD', '--location', location, '--json']);
    expect(bound.code).toBe(0);
    expect(bound.json().result.settlement.attestation).toEqual({ asset: 'USD', verdict: 'binding' });
    let binding = 'binding';
    for (let i = 0; i < 100 && binding !== 'bound'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      binding = ((await run(['assets', 'list', '--json'])).json() as { id: string; binding: string }[]).find((a) => a.id === 'USD')!.binding;
    }
    expect(binding).toBe('bound');

    // Major units, the minor units of the instruction the same.
    const withdrawn = await run(['withdrawals', 'create', '--account', accounts.alice, '--amount', '0.25 USD', '--asset', 'USD', '--to', 'cd'.repeat(32), '--json']);
    expect(withdrawn.code).toBe(0);
    expect(withdrawn.json().state).toBe('Instructed');
    expect(withdrawn.json().result.settlement.instruction).toMatchObject({ amount: '25', asset: 'USD', reserved: true });
    const noDestination = await run(['withdrawals', 'create', '--account', accounts.alice, '--amount', '25', '--asset', 'USD']);
    expect(noDestination.code).toBe(2);

    const status = await run(['settlement', 'status', '--json']);
    expect(status.code).toBe(0);
    expect(status.json()).toMatchObject({ serving: true, pending_instructions: 1 });
    expect(status.json().fresh_until).toBeGreaterThan(status.json().declared_at);
    expect(status.json().attestations).toEqual([{ asset: 'USD', verdict: 'bound', mismatch: null, height: expect.any(Number), operation_reference: expect.any(String) }]);
    const statusTable = await run(['settlement', 'status', '-o', 'table']);
    expect(statusTable.stdout).toMatch(/ASSET\s+VERDICT\s+MISMATCH\s+HEIGHT\s+OPERATION\nUSD\s+bound\s+-\s+\d+/);

    const synced = await run(['settlement', 'sync', '--json']);
    expect(synced.code).toBe(0);
    expect(synced.json().result.settlement.moved).toEqual(expect.any(Array));

    const compared = await run(['settlement', 'compare', '--json']);
    expect(compared.code).toBe(0);
    expect(compared.json()).toMatchObject({ differs: false, rows: [{ asset: 'USD', book: '0', layer: '0', difference: '0', liabilities: null, liabilities_checkpoint: null, solvent: null }] });
    const table = await run(['settlement', 'compare', '-o', 'table']);
    expect(table.stdout).toContain('DIFFERENCE');
    expect(table.stdout).toMatch(/\nUSD\s+0\.00 USD\s+0\.00 USD\s+0\.00 USD\s+-/);

    const rescan = await run(['settlement', 'rescan', '--from', '1', '--to', '10', '--json']);
    expect(rescan.json()).toEqual({ missing: [], unassociated: 0, unknown: [] });
    const unbounded = await run(['settlement', 'rescan', '--from', '1', '--to', '5000']);
    expect(unbounded.code).toBe(1);
    expect(unbounded.stderr).toMatch(/^ERR-QueryUnbounded: /m);

    const observed = await run(['settlement', 'observe', '--seq', '1', '--digest', '00'.repeat(32), '--instance', '1']);
    expect(observed.code).toBe(1);
    expect(observed.stderr).toMatch(/^ERR-EvidenceInsufficient: /m);

    const deprecated = await run(['assets', 'deprecate', 'GBP', '--json']);
    expect(deprecated.json().state).toBe('Completed');
  }, 60_000);

  it('drives the embedded layer (location, deposit, blocks, stop, resume) and waits for a withdrawal to complete', async () => {
    // Runs after the first test bound USD.
    const ethLocation = '6f'.repeat(32);
    const declared = await run(['settlement', 'layer', 'location', ethLocation, '--symbol', 'ETH', '--decimals', '18', '--json']);
    expect(declared.code).toBe(0);
    expect(declared.json()).toEqual({ location: ethLocation });
    // EUR bound to a location the layer says is ETH: the attestation names the mismatch.
    const binding = await run(['assets', 'bind', 'EUR', '--location', ethLocation, '-o', 'table']);
    expect(binding.code).toBe(0);
    expect(binding.stdout).toMatch(/^settlement\.attestation\.verdict\s+binding$/m);
    expect(binding.stdout).not.toContain('{');
    const blocks = await run(['settlement', 'layer', 'blocks', '--count', '3', '--json']);
    expect(blocks.code).toBe(0);
    expect(blocks.json()).toMatchObject({ serving: true, height: expect.any(Number) });
    expect(blocks.json().final_height).toBe(blocks.json().height - 2);
    const attested = (await run(['settlement', 'status', '--json'])).json().attestations as { asset: string; mismatch: string | null }[];
    expect(attested.find((a) => a.asset === 'EUR')?.mismatch).toMatch(/symbol/);
    expect((await run(['settlement', 'layer', 'blocks', '--count', '1001'])).code).toBe(2);
    expect((await run(['settlement', 'layer', 'location', 'zz', '--symbol', 'X', '--decimals', '2'])).code).toBe(2);

    const balance = async () => BigInt(((await run(['accounts', 'balance', accounts.alice, '--json'])).json().balances as { asset: string; available: string }[]).find((b) => b.asset === 'USD')!.available);
    const before = await balance();
    const ref = (await run(['accounts', 'show', accounts.alice, '--field', 'deposit_ref'])).stdout.trim();
    const deposit = await run(['settlement', 'layer', 'deposit', '--asset', 'USD', '--amount', '700', '--account-ref', ref, '-o', 'table']);
    expect(deposit.code).toBe(0);
    expect(deposit.stdout).toMatch(/^amount\s+7\.00 USD$/m);
    expect(deposit.stdout).toMatch(/^coordinate\.seq\s+\d+$/m);
    expect(deposit.stdout).not.toContain('{');
    await run(['settlement', 'layer', 'blocks', '--count', '3']);
    expect(await balance()).toBe(before + 700n);

    // Waits past Instructed for the final block (the daemon makes one a second), the result as lines, no JSON.
    const settled = await run(['withdrawals', 'create', '--account', accounts.alice, '--amount', '25', '--asset', 'USD', '--to', 'cd'.repeat(32), '--until-settled', '--timeout-ms', '30000', '-o', 'table']);
    expect(settled.code).toBe(0);
    expect(settled.stdout).toMatch(/^state\s+Completed$/m);
    expect(settled.stdout).toMatch(/^settlement\.instruction\.amount\s+0\.25 USD$/m);
    expect(settled.stdout).toMatch(/^settlement\.instruction\.expiry\s+\d+$/m);
    expect(settled.stdout).not.toContain('{');
    // Without it, it says plainly that it stops at Instructed and how to wait.
    const instructed = await run(['withdrawals', 'create', '--account', accounts.alice, '--amount', '25', '--asset', 'USD', '--to', 'cd'.repeat(32), '--json']);
    expect(instructed.json().state).toBe('Instructed');
    expect(instructed.stderr).toContain(`ledgerctl operations wait ${instructed.json().operation_reference} --terminal`);
    const waited = await run(['operations', 'wait', instructed.json().operation_reference, '--terminal', '--timeout-ms', '30000', '--json']);
    expect(waited.json().state).toBe('Completed');

    const stopped = await run(['settlement', 'layer', 'stop', '--json']);
    expect(stopped.json().serving).toBe(false);
    const refused = await run(['withdrawals', 'create', '--account', accounts.alice, '--amount', '25', '--asset', 'USD', '--to', 'cd'.repeat(32)]);
    expect(refused.stderr).toMatch(/^ERR-SettlementLayerUnavailable: /m);
    const resumed = await run(['settlement', 'layer', 'resume', '-o', 'table']);
    expect(resumed.stdout).toMatch(/^serving\s+yes$/m);

    const synced = await run(['settlement', 'sync', '-o', 'table']);
    expect(synced.code).toBe(0);
    expect(synced.stdout).toMatch(/^command\s+settle$/m);
    expect(synced.stdout).not.toContain('{');
  }, 90_000);
});

describe('a withdrawal that expires on the layer', () => {
  it('is waited on past Instructed and reported as expired there, its value back (exit 1)', async () => {
    // Blocks only on request, instructions expiring 2 blocks after their decision.
    const own = await startDaemon({ genesis: testGenesis });
    try {
      await own.restart(async () => writeFileSync(join(own.dataDir, 'ledgerd.json'), JSON.stringify({ settlement: { blockIntervalMs: 0, instructionExpiryBlocks: 2 } })));
      const env = { LEDGER_URL: own.url, LEDGER_TOKEN: own.operatorKey, LEDGERCTL_CONFIG_DIR: configDir() };
      const go = (args: string[]) => ledgerctl(args, env);
      expect((await go(['assets', 'bind', 'USD', '--location', location])).code).toBe(0);
      expect((await go(['settlement', 'layer', 'blocks', '--count', '3'])).code).toBe(0);
      const available = async () => ((await go(['accounts', 'balance', accounts.alice, '--json'])).json().balances as { asset: string; available: string }[]).find((b) => b.asset === 'USD')!.available;
      const before = await available();
      const withdrawn = await go(['withdrawals', 'create', '--account', accounts.alice, '--amount', '25', '--asset', 'USD', '--to', 'cd'.repeat(32), '--json']);
      expect(withdrawn.json().state).toBe('Instructed');
      expect(await available()).toBe(String(BigInt(before) - 25n));
      const ref = withdrawn.json().operation_reference as string;
      // A stopped layer's blocks carry nothing: the instruction passes its expiry height unexecuted.
      expect((await go(['settlement', 'layer', 'stop'])).code).toBe(0);
      expect((await go(['settlement', 'layer', 'blocks', '--count', '6'])).code).toBe(0);
      expect((await go(['settlement', 'layer', 'resume'])).code).toBe(0);
      await go(['settlement', 'sync']);
      const waited = await go(['operations', 'wait', ref, '--terminal', '--timeout-ms', '20000']);
      expect(waited.code).toBe(1);
      expect(waited.stderr).toContain(`${ref} expired on the settlement layer: no final block carried its instruction by its expiry height`);
      expect(await available()).toBe(before);
    } finally {
      await own.stop();
    }
  }, 90_000);
});
