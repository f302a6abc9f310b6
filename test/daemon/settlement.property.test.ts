/**
 * Random interleavings of deposits, withdrawals, transfers, blocks, layer outages and
 * daemon restarts (issue 13): after each step the trial balance is zero, and after
 * every sync the comparison of the book with the layer shows no difference. Seeded,
 * so a failure names the seed and the step that broke.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../bench/soak/commands.js';
import { type Daemon, client, decided, startDaemon, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();
const location = '5e'.repeat(32);
const accounts = ['did:ledger:acct:alice', 'did:ledger:acct:bob'];

let keyCount = 0;
const key = () => ({ 'client-key': `prop-${++keyCount}-${Math.random().toString(36).slice(2)}` });

async function trial(seed: number, steps: number): Promise<void> {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const dir = newDir();
  const keys = await writeBook(dir, { alice: 500n, bob: 500n });
  writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ settlement: { blockIntervalMs: 0, finalityDepth: 2, instructionExpiryBlocks: 4 } }));
  let daemon: Daemon = await startDaemon({ dataDir: dir });
  const op = client(() => daemon.url, keys.operator);
  const customer = (account: string) => client(() => daemon.url, keys.customers[account.slice('did:ledger:acct:'.length)]!);
  const at = (what: string) => `seed ${seed}: ${what}`;
  try {
    await decided(op, (await op.post('/v1/ops/assets/USD/binding', { location }, undefined, key())).body.operation_reference);
    // The attestation request reaches the layer just after the decision: blocks until it is final.
    for (let i = 0; i < 50 && ((await op.get('/v1/assets')).body as { id: string; binding: string }[]).find((a) => a.id === 'USD')!.binding !== 'bound'; i++) {
      await op.post('/v1/ops/layer/blocks', { count: 1 });
      await new Promise((r) => setTimeout(r, 20));
    }
    const refs = Object.fromEntries(await Promise.all(accounts.map(async (a) => [a, (await op.get(`/v1/accounts/${a}`)).body.deposit_ref as string])));
    let serving = true;
    const sync = async (what: string) => {
      if (!serving) return;
      const reply = await op.post('/v1/ops/settlement/sync', {}, undefined, key());
      expect((await decided(op, reply.body.operation_reference)).body.state, at(what)).toBe('Completed');
      const comparison = (await op.post('/v1/ops/settlement/comparisons', {}, undefined, key())).body.result.settlement.comparison;
      expect(comparison.differs, at(`${what}: ${JSON.stringify(comparison.rows)}`)).toBe(false);
    };
    await sync('bound');
    for (let step = 0; step < steps; step++) {
      const kind = pick(['deposit', 'deposit', 'withdraw', 'withdraw', 'transfer', 'blocks', 'blocks', 'blocks', 'outage', 'restart', 'sync']);
      const what = `step ${step} ${kind}`;
      const account = pick(accounts);
      const amount = String(1 + Math.floor(random() * 120));
      if (kind === 'deposit') {
        const placed = await op.post('/v1/ops/layer/deposits', { asset: 'USD', amount, account_ref: refs[account] }, undefined, key());
        expect(placed.status, at(what)).toBe(200);
      } else if (kind === 'withdraw') {
        const reply = await customer(account).post('/v1/withdrawals', { account, amount, asset: 'USD', destination: { account: 'cd'.repeat(32) } }, undefined, key());
        if (serving) await decided(customer(account), reply.body.operation_reference);
        else expect(reply.body.error, at(what)).toBe('ERR-SettlementLayerUnavailable');
      } else if (kind === 'transfer') {
        const to = accounts.find((a) => a !== account)!;
        const reply = await customer(account).post('/v1/transfers', { legs: [{ from: account, to, asset: 'USD', amount }] }, undefined, key());
        await decided(customer(account), reply.body.operation_reference);
      } else if (kind === 'blocks') {
        await op.post('/v1/ops/layer/blocks', { count: 1 + Math.floor(random() * 3) });
      } else if (kind === 'outage') {
        serving = !serving;
        await op.post('/v1/ops/layer/status', { serving });
      } else if (kind === 'restart') {
        expect(await daemon.stop(), at(what)).toBe(0);
        daemon = await startDaemon({ dataDir: dir });
      } else {
        await sync(what);
      }
      const tb = (await op.get('/v1/trial-balance')).body;
      expect(tb.unbalanced, at(what)).toEqual([]);
      for (const row of tb.rows) expect(row.openings, at(`${what} ${row.asset}`)).toBe('0');
    }
    // Let every instruction finish (complete or expire), then the book and the layer agree.
    if (!serving) await op.post('/v1/ops/layer/status', { serving: true });
    serving = true;
    await op.post('/v1/ops/layer/blocks', { count: 8 });
    await sync('end');
    expect((await op.get('/v1/ops/settlement/status')).body.pending_instructions, at('end')).toBe(0);
  } finally {
    await daemon.stop();
  }
}

describe('settlement under random interleavings', () => {
  for (const seed of [13, 1013]) {
    it(`keeps the trial balance zero and the book matching the layer after every sync (seed ${seed})`, async () => {
      await trial(seed, 60);
    }, 120_000);
  }
});

