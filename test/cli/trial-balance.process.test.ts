/**
 * `ledgerctl trial-balance` as an accountant reads it, against a real `ledgerd`: per asset the
 * debits, the credits, each layer, the sum and whether it balances, the view in words; with
 * `--accounts` the per-account lines, paged.
 */
import { describe, expect, it } from 'vitest';
import { accounts } from './support/book.js';
import { ledgerctl } from './support/ledgerctl.js';
import { ledgerctlOnTerminal } from './support/terminal.js';
import { useBook } from './support/use-book.js';

const book = useBook();
const run = (args: string[]) => ledgerctl(args, book.env);

describe('ledgerctl trial-balance', () => {
  it('shows debits, credits, each layer and the sum per asset, and what the view is', async () => {
    // 12.34 USD of alice's held: reserved, not available.
    const held = await run(['reservations', 'create', '--payer', accounts.alice, '--amount', '1234', '--asset', 'USD', '--json']);
    expect(held.json().state).toBe('Reserved');

    const json = await run(['trial-balance', '--json']);
    expect(json.code).toBe(0);
    expect(json.json().rows).toEqual([
      { asset: 'EUR', openings: '0', layers: { available: '0', reserved: '0', encumbered: '0' }, debits: '0', credits: '0' },
      { asset: 'USD', openings: '0', layers: { available: '-1234', reserved: '1234', encumbered: '0' }, debits: '100000', credits: '100000' },
    ]);

    const screen = (await ledgerctlOnTerminal(['trial-balance'], book.env)).screen.replace(/\x1b\[[0-9;]*m/g, '');
    expect(screen).toMatch(/ASSET\s+DEBITS\s+CREDITS\s+AVAILABLE\s+RESERVED\s+ENCUMBERED\s+SUM\s+BALANCED/);
    expect(screen).toMatch(/USD\s+1000\.00 USD\s+1000\.00 USD\s+-12\.34 USD\s+12\.34 USD\s+0\.00 USD\s+0\.00 USD\s+yes/);
    expect(screen).toMatch(/balanced \(3 accounts; view (\d+): every figure read at journal position \1, one consistent snapshot\)/);
    expect(screen).toContain('debits: balances below zero');
  });

  it('adds per-account lines with --accounts, a page at a time', async () => {
    const first = await ledgerctlOnTerminal(['trial-balance', '--accounts', '--limit', '1'], book.env);
    expect(first.code).toBe(0);
    expect(first.screen).toMatch(/ACCOUNT\s+ASSET\s+DEBIT\s+CREDIT\s+AVAILABLE\s+RESERVED\s+ENCUMBERED/);
    expect(first.screen).toMatch(/did:ledger:acct:alice\s+USD\s+1000\.00 USD\s+987\.66 USD\s+12\.34 USD\s+0\.00 USD/);
    const cursor = /more: --cursor ([0-9a-f]+) \(or --all\)/.exec(first.screen)?.[1];
    expect(cursor).toBeDefined();

    const second = await run(['trial-balance', '--accounts', '--limit', '1', '--cursor', cursor!, '--json']);
    expect(second.code).toBe(0);
    expect(second.json().accounts_page.items).toEqual([{ account: accounts.treasury, asset: 'USD', available: '-100000', reserved: '0', encumbered: '0', balance: '-100000' }]);

    const all = await run(['trial-balance', '--accounts', '--limit', '1', '--all', '--json']);
    const lines = all.stdout.trim().split('\n').map((l) => JSON.parse(l) as { account: string; balance: string });
    expect(lines.map((l) => [l.account, l.balance])).toEqual([
      [accounts.alice, '100000'],
      [accounts.treasury, '-100000'],
    ]);
    const byAsset = await run(['trial-balance', '--accounts', '--asset', 'EUR', '--json']);
    expect(byAsset.json().accounts_page).toEqual({ items: [], view: expect.any(Number) });

    // Its last digit changed (to another digit: a cursor ending in 0 would otherwise come back unchanged).
    const forged = await run(['trial-balance', '--accounts', '--cursor', `${cursor!.slice(0, -1)}${cursor!.endsWith('0') ? '1' : '0'}`]);
    expect(forged.code).toBe(1);
    expect(forged.stderr).toMatch(/^ERR-MalformedCommand: /m);
    const huge = await run(['trial-balance', '--accounts', '--limit', '5000']);
    expect(huge.stderr).toMatch(/^ERR-QueryUnbounded: /m);
  });

  it('is refused paging without accounts=true, and to anyone but the operator', async () => {
    const url = `${book.daemon.url}/v1/trial-balance`;
    const asOperator = { authorization: `Bearer ${book.daemon.operatorKey}` };
    const paged = await fetch(`${url}?limit=5`, { headers: asOperator });
    expect(paged.status).toBe(400);
    expect(((await paged.json()) as { error: string }).error).toBe('ERR-MalformedCommand');
    const odd = await fetch(`${url}?gross=yes`, { headers: asOperator });
    expect(odd.status).toBe(400);
    const anonymous = await fetch(`${url}?gross=true&accounts=true`);
    expect(anonymous.status).toBe(401);
  });
});
