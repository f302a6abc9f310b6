/**
 * `ledgerctl transfers create --batch FILE` with the built CLI against a real ledgerd: a file of
 * transfer bodies (NDJSON or a JSON array, or stdin) sent in batches of up to 1,000, decisions
 * awaited, a summary printed, exit 1 when any did not complete, and a rerun under the same
 * `--client-key-prefix` with no second effect.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { accounts } from './support/book.js';
import { ledgerctl } from './support/ledgerctl.js';
import { ledgerctlOnTerminal } from './support/terminal.js';
import { useBook } from './support/use-book.js';

const book = useBook();
const dir = mkdtempSync(join(tmpdir(), 'ledgerctl-batch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const transfer = (amount: string) => ({ legs: [{ from: accounts.alice, to: accounts.bob, asset: 'USD', amount }] });

async function bobMinor(): Promise<bigint> {
  const r = await request(`${book.env.LEDGER_URL}/v1/accounts/${accounts.bob}/balances`, { headers: { authorization: `Bearer ${book.env.LEDGER_TOKEN}` } });
  const body = (await r.body.json()) as { balances: { asset: string; available: string }[] };
  return BigInt(body.balances.find((b) => b.asset === 'USD')?.available ?? '0');
}

describe('transfers create --batch', () => {
  it('sends 1,200 transfers in two batches, waits, summarises refusals and rejections by code, and exits 1; a rerun under the same prefix has no second effect', async () => {
    const lines = Array.from({ length: 1_200 }, (_, i) => (i === 99 ? transfer('0') : i === 1_100 ? transfer('999999999') : transfer('1')));
    const file = join(dir, 'payroll.ndjson');
    writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const before = await bobMinor();

    const run = await ledgerctl(['transfers', 'create', '--batch', file, '--client-key-prefix', 'payroll-2026-11', '--timeout-ms', '60000', '--json'], book.env);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout, run.stderr).not.toBe('');
    const summary = run.json();
    expect(summary).toMatchObject({ transfers: 1_200, completed: 1_198, rejected: { 'ERR-InsufficientAvailable': 1 }, expired: 0, refused: { 'ERR-ZeroAmount': 1 }, undecided: 0, client_key_prefix: 'payroll-2026-11' });
    expect(summary.failures.map((f: { item: number; client_key: string; error: string }) => [f.item, f.client_key, f.error])).toEqual([
      [100, 'payroll-2026-11-100', 'ERR-ZeroAmount'],
      [1_101, 'payroll-2026-11-1101', 'ERR-InsufficientAvailable'],
    ]);
    expect(run.stderr).toMatch(/2 of 1200 transfers did not complete/);
    expect(await bobMinor()).toBe(before + 1_198n);

    const again = await ledgerctl(['transfers', 'create', '--batch', file, '--client-key-prefix', 'payroll-2026-11', '--timeout-ms', '60000', '--json'], book.env);
    expect(again.code).toBe(1);
    expect(again.json()).toMatchObject({ completed: 1_198, rejected: { 'ERR-InsufficientAvailable': 1 }, refused: { 'ERR-ZeroAmount': 1 } });
    expect(await bobMinor()).toBe(before + 1_198n);
  });

  it('takes a JSON array on stdin, under a random prefix it shows on stderr, and exits 0 when all complete', async () => {
    const before = await bobMinor();
    const run = await ledgerctl(['transfers', 'create', '--batch', '-', '--json'], book.env, JSON.stringify([transfer('2'), transfer('3')]));
    expect(run.code, run.stderr).toBe(0);
    const prefix = /^client key prefix ([0-9a-f]{32}) /m.exec(run.stderr)?.[1];
    expect(prefix).toBeDefined();
    expect(run.json()).toMatchObject({ transfers: 2, completed: 2, failures: [], client_key_prefix: prefix });
    expect(await bobMinor()).toBe(before + 5n);
  });

  it('prints the acknowledgements only with --no-wait', async () => {
    const run = await ledgerctl(['transfers', 'create', '--batch', '-', '--no-wait', '--json'], book.env, JSON.stringify(transfer('1')));
    expect(run.code, run.stderr).toBe(0);
    expect(run.json().transfers).toBe(1);
  });

  it('refuses usage it cannot honour with exit 2, naming the line', async () => {
    const mixed = await ledgerctl(['transfers', 'create', '--batch', '-', '--amount', '1'], book.env, '{}');
    expect(mixed.code).toBe(2);
    const bad = await ledgerctl(['transfers', 'create', '--batch', '-'], book.env, `${JSON.stringify(transfer('1'))}\n[1,2]\n`);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/line 2 must be a JSON object/);
    const notJson = await ledgerctl(['transfers', 'create', '--batch', '-'], book.env, `${JSON.stringify(transfer('1'))}\n{oops\n`);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/line 2 is not JSON/);
    const prefixAlone = await ledgerctl(['transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '1', '--asset', 'USD', '--client-key-prefix', 'p'], book.env);
    expect(prefixAlone.code).toBe(2);
  });

  it('shows a summary table on a terminal and leaves no progress line behind', async () => {
    const file = join(dir, 'small.json');
    writeFileSync(file, JSON.stringify([transfer('1'), transfer('0')]));
    const run = await ledgerctlOnTerminal(['transfers', 'create', '--batch', file, '--client-key-prefix', 'terminal-run'], book.env);
    expect(run.code).toBe(1);
    expect(run.screen).toMatch(/completed\s+1/);
    expect(run.screen).toMatch(/refused at submission\s+1 \(ERR-ZeroAmount 1\)/);
    expect(run.screen).toMatch(/ITEM\s+OPERATION\s+CODE\s+WHY/);
    // Each progress redraw starts with a carriage return and erases its line; the last write before the summary clears it.
    expect(run.screen).not.toMatch(/submitted \d+\/\d+[^\r\x1b]*\r?\n/);
  });
});
