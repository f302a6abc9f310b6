/**
 * The reads an operator needs (CONTRACT 11) with the built `ledgerctl` against a real `ledgerd`:
 * `accounts balance` and `accounts list`, JSON as the API returned it for programs, major units
 * with the asset's symbol on a terminal.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { majorUnits } from '../../cli/money.js';
import { accounts } from './support/book.js';
import { ledgerctl } from './support/ledgerctl.js';
import { ledgerctlOnTerminal } from './support/terminal.js';
import { useBook } from './support/use-book.js';

const book = useBook();
const opened: string[] = [];

beforeAll(async () => {
  for (let i = 0; i < 2; i++) {
    const r = await ledgerctl(['accounts', 'open', '--owner', 'did:ledger:id:bob', '--field', 'result.account'], book.env);
    expect(r.code).toBe(0);
    opened.push(r.stdout.trim());
  }
  const held = await ledgerctl(['reservations', 'create', '--payer', accounts.alice, '--amount', '1234', '--asset', 'USD'], book.env);
  expect(held.code).toBe(0);
});

describe('accounts balance', () => {
  it('prints the API reply for programs', async () => {
    const r = await ledgerctl(['accounts', 'balance', accounts.alice], book.env);
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({ account: accounts.alice, view: expect.any(Number), balances: [{ asset: 'USD', available: '98766', reserved: '1234', encumbered: '0' }] });
  });

  it('shows major units with the symbol on a terminal, signed for a treasury below zero', async () => {
    const alice = await ledgerctlOnTerminal(['accounts', 'balance', accounts.alice], book.env);
    expect(alice.code).toBe(0);
    expect(alice.screen).toMatch(/ASSET\s+AVAILABLE\s+RESERVED\s+ENCUMBERED/);
    expect(alice.screen).toMatch(/USD\s+987\.66 USD\s+12\.34 USD\s+0\.00 USD/);
    const treasury = await ledgerctlOnTerminal(['accounts', 'balance', accounts.treasury], book.env);
    expect(treasury.screen).toMatch(/USD\s+-1000\.00 USD/);
    const json = await ledgerctlOnTerminal(['accounts', 'balance', accounts.alice, '--json'], book.env);
    expect(json.screen).toContain('"available": "98766"');
  });

  it('reads as the identities principal too, and refuses an unknown account (exit 1)', async () => {
    const r = await ledgerctl(['accounts', 'balance', accounts.alice], { ...book.env, LEDGER_TOKEN: book.daemon.identitiesKey });
    expect(r.code).toBe(0);
    const unknown = await ledgerctl(['accounts', 'balance', 'did:ledger:acct:nobody'], book.env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^ERR-UnknownAccount: /);
  });
});

describe('accounts list', () => {
  const bobs = () => [accounts.bob, ...opened].sort();

  it("lists an identity's accounts in identifier order, one page or all of them", async () => {
    const page = await ledgerctl(['accounts', 'list', '--owner', 'did:ledger:id:bob', '--limit', '2'], book.env);
    expect(page.code).toBe(0);
    expect(page.json().items.map((a: { account: string }) => a.account)).toEqual(bobs().slice(0, 2));
    expect(page.json().next).toMatch(/^[0-9a-f]+$/);
    const rest = await ledgerctl(['accounts', 'list', '--owner', 'did:ledger:id:bob', '--limit', '2', '--cursor', page.json().next], book.env);
    expect(rest.json().items.map((a: { account: string }) => a.account)).toEqual(bobs().slice(2));
    const all = await ledgerctl(['accounts', 'list', '--owner', 'did:ledger:id:bob', '--limit', '1', '--all'], book.env);
    expect(all.stdout.trim().split('\n').map((l) => JSON.parse(l).account)).toEqual(bobs());
  });

  it('shows a table on a terminal', async () => {
    const r = await ledgerctlOnTerminal(['accounts', 'list', '--owner', 'did:ledger:id:bob', '--limit', '1', '--all'], book.env);
    expect(r.code).toBe(0);
    expect(r.screen).toMatch(/ACCOUNT\s+KIND\s+CUSTODY\s+STATUS\s+OPENED/);
    for (const account of bobs()) expect(r.screen).toContain(account);
  });

  it("refuses another identity, and without an owner anyone but the operator (exit 1)", async () => {
    const strangerKey = await ledgerctl(['identities', 'create', '--scheme', 'api-key', '--field', 'api_key'], { ...book.env, LEDGER_TOKEN: book.daemon.identitiesKey });
    const stranger = { ...book.env, LEDGER_TOKEN: strangerKey.stdout.trim() };
    const other = await ledgerctl(['accounts', 'list', '--owner', 'did:ledger:id:bob'], stranger);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/^ERR-NotAuthorised: /);
    const everyAccount = await ledgerctl(['accounts', 'list'], stranger);
    expect(everyAccount.code).toBe(1);
    expect(everyAccount.stderr).toMatch(/^ERR-NotAuthorised: /);
  });
});

describe('amounts on a terminal', () => {
  it('shows movements, statements and the trial balance in major units with the symbol', async () => {
    const movements = await ledgerctlOnTerminal(['movements', '--account', accounts.alice, '--limit', '5'], book.env);
    expect(movements.screen).toMatch(/1000\.00 USD\s+USD\s+available/);
    expect(movements.screen).toMatch(/12\.34 USD\s+USD\s+reserved/);
    const statement = await ledgerctlOnTerminal(['statements', '--account', accounts.alice, '--asset', 'USD', '--from', '0', '--to', String(Date.now() + 60_000)], book.env);
    expect(statement.screen).toMatch(/available\s+0\.00 USD\s+987\.66 USD/);
    const trialBalance = await ledgerctlOnTerminal(['trial-balance'], book.env);
    expect(trialBalance.screen).toMatch(/USD\s+0\.00 USD\s+yes/);
    expect((await ledgerctl(['movements', '--account', accounts.alice, '--limit', '5'], book.env)).json().movements[0].amount).toBe('100000');
  });
});

describe('major units', () => {
  it('are computed with bigint arithmetic, beyond what a JS number holds', () => {
    expect(majorUnits('50000', 2)).toBe('500.00');
    expect(majorUnits('5', 2)).toBe('0.05');
    expect(majorUnits('-100000', 2)).toBe('-1000.00');
    expect(majorUnits('7', 0)).toBe('7');
    expect(majorUnits('340282366920938463463374607431768211455', 8)).toBe('3402823669209384634633746074317.68211455');
    expect(majorUnits('12.5', 2)).toBe('12.5');
  });
});
