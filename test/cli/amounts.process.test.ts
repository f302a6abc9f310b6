/**
 * One convention for amounts (issue 25, items 2, 3 and 13), with the built `ledgerctl` against a
 * real `ledgerd`: amount flags take minor units (bare integers, as before) or major units (a
 * decimal point or the symbol, the asset's precision checked); on a terminal every amount shows
 * in major units with its symbol, and tables say who did what; `--json` keeps minor-unit strings.
 */
import { describe, expect, it } from 'vitest';
import { accounts } from './support/book.js';
import { ledgerctl, withoutClientKey } from './support/ledgerctl.js';
import { ledgerctlOnTerminal } from './support/terminal.js';
import { useBook } from './support/use-book.js';

const book = useBook();
const run = (...args: string[]) => ledgerctl(args, book.env);
const usd = ['--asset', 'USD'];

/** The minor units a transfer of `amount` (as written) asked to move. */
async function movedMinor(amount: string): Promise<string> {
  const r = await run('transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', amount, ...usd);
  expect(withoutClientKey(r.stderr)).toBe('');
  expect(r.code).toBe(0);
  return r.json().moves[0].amount;
}

describe('events tail on a terminal', () => {
  // First in the file: the book's first event is this transfer's.
  it('writes lines with time, principal, kind and amount', async () => {
    const sent = await run('transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '0.09', ...usd, '--field', 'operation_reference');
    expect(sent.code).toBe(0);
    const tail = await ledgerctlOnTerminal(['events', 'tail', '--after', '0', '--count', '1'], book.env);
    expect(tail.code).toBe(0);
    expect(tail.screen).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z {2}1 {2}did:ledger:id:operator {2}transfer Completed {2}0\\.09 USD {2}did:ledger:acct:alice -> did:ledger:acct:bob {2}${sent.stdout.trim()}\\r\\n$`));
  });
});

describe('amount flags', () => {
  it('take major units with a decimal point or the symbol, and a bare integer as minor units', async () => {
    expect(await movedMinor('1050')).toBe('1050');
    expect(await movedMinor('10.50')).toBe('1050');
    expect(await movedMinor('10.5')).toBe('1050');
    expect(await movedMinor('10.50 USD')).toBe('1050');
    expect(await movedMinor('USD 10.50')).toBe('1050');
    expect(await movedMinor('10 USD')).toBe('1000');
  });

  it('refuse more decimals than the asset has, or another asset, as usage errors (exit 2, nothing sent)', async () => {
    const before = (await run('accounts', 'balance', accounts.alice)).json();
    const precise = await run('transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '10.505', ...usd);
    expect(precise.code).toBe(2);
    expect(precise.stderr).toContain('error: --amount 10.505: USD has 2 decimal places');
    const other = await run('reservations', 'create', '--payer', accounts.alice, '--amount', '1.00 EUR', ...usd);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('--amount 1.00 EUR is in EUR, but the asset is USD');
    const unknown = await run('transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '1.00', '--asset', 'XYZ');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('the service lists no asset XYZ');
    expect((await run('accounts', 'balance', accounts.alice)).json()).toEqual(before);
  });

  it("capture in the reservation's asset, and grant bounds and treasury limits in major units", async () => {
    const held = await run('reservations', 'create', '--payer', accounts.alice, '--amount', '2.00', ...usd, '--field', 'operation_reference');
    expect(held.code).toBe(0);
    const captured = await run('reservations', 'capture', held.stdout.trim(), '--to', accounts.bob, '--amount', '1.25');
    expect(captured.code).toBe(0);
    const moved = (await run('movements', '--account', accounts.bob, '--limit', '1000')).json().movements;
    expect(moved.find((m: { operation: string }) => m.operation === captured.json().operation_reference)).toMatchObject({ amount: '125', direction: 'credit' });
    const precise = await run('reservations', 'capture', held.stdout.trim(), '--to', accounts.bob, '--amount', '0.001');
    expect(precise.code).toBe(2);

    const grant = await run('ops', 'issuance-grant', '--principal', 'did:ledger:id:operator', '--subject-account', 'treasury:USD', '--assets', 'USD', '--ops', 'transfer', '--per-operation', '250.00', '--justification', 'float in major units');
    expect(grant.code).toBe(0);
    const listed = (await run('grants', 'list', '--account', 'treasury:USD')).json().items;
    expect(listed.find((g: { grant: string }) => g.grant === grant.json().result.grant).terms.per_operation).toBe('25000');
    const table = await ledgerctlOnTerminal(['grants', 'list', '--account', 'treasury:USD'], book.env);
    expect(table.screen).toMatch(/PER OP/);
    expect(table.screen).toMatch(/250\.00 USD/);
    const noAsset = await run('ops', 'issuance-grant', '--principal', 'did:ledger:id:operator', '--subject-account', 'treasury:USD', '--ops', 'transfer', '--per-operation', '250.00', '--justification', 'which asset?');
    expect(noAsset.code).toBe(2);
    expect(noAsset.stderr).toContain('major units need the asset');

    const opened = await run('accounts', 'open', '--owner', 'did:ledger:id:operator', '--kind', 'treasury', '--treasury-limit', 'EUR=1000.00');
    expect(opened.code).toBe(0);
    expect(opened.json().state).toBe('Completed');
  });
});

describe('on a terminal', () => {
  it('shows who did what, amounts in major units, and refusals in major units; --json keeps minor units', async () => {
    const shown = await ledgerctlOnTerminal(['transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '0.07', ...usd], book.env);
    expect(shown.code).toBe(0);
    const reference = /operation\s+(op_\w+)/.exec(shown.screen)![1]!;
    const lines = (await ledgerctlOnTerminal(['operations', 'show', reference], book.env)).screen;
    expect(lines).toMatch(/command\s+transfer\r\nprincipal\s+did:ledger:id:operator\r\ncredential\s+did:ledger:cred:operator\r\namount\s+0\.07 USD\r\nfrom\s+did:ledger:acct:alice\r\nto\s+did:ledger:acct:bob\r\nstate\s+Completed\r\n/);
    expect(lines).not.toMatch(/postings\s+\[/);
    expect((await run('operations', 'show', reference)).json()).toMatchObject({ principal: 'did:ledger:id:operator', credential: 'did:ledger:cred:operator', moves: [{ amount: '7', asset: 'USD' }] });

    const refused = await ledgerctlOnTerminal(['transfers', 'create', '--from', accounts.bob, '--to', accounts.alice, '--amount', '1000000.00', ...usd], book.env);
    expect(refused.code).toBe(1);
    expect(refused.screen).toMatch(/amount\s+1000000\.00 USD/);
    expect(refused.screen).toContain('ERR-InsufficientAvailable: leg 0: available balance of did:ledger:acct:bob in USD does not cover 1000000.00 USD');
  });
});

describe('a repeat under a client key', () => {
  it('is marked as a replay on stderr, and does nothing again', async () => {
    const args = ['transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '3', ...usd, '--client-key', 'replayed-once'];
    const first = await run(...args);
    expect(first.code).toBe(0);
    expect(first.stderr).toBe('');
    const again = await run(...args);
    expect(again.code).toBe(0);
    expect(again.json().operation_reference).toBe(first.json().operation_reference);
    expect(again.stderr).toBe(`ledgerctl: replay: client key replayed-once was taken before; this is ${first.json().operation_reference}'s reply, nothing was done again\n`);
  });
});

describe('statements', () => {
  it('default to the last 30 days up to now', async () => {
    const beforeMs = Date.now();
    const r = await run('statements', '--account', accounts.alice, ...usd);
    expect(r.code).toBe(0);
    const { from, to } = r.json();
    expect(to).toBeGreaterThanOrEqual(beforeMs);
    expect(to).toBeLessThanOrEqual(Date.now());
    expect(to - from).toBe(30 * 86_400_000);
    const until = await run('statements', '--account', accounts.alice, ...usd, '--to', '2026-01-31T00:00:00Z');
    expect(until.json()).toMatchObject({ from: Date.parse('2026-01-01T00:00:00Z'), to: Date.parse('2026-01-31T00:00:00Z') });
  });
});
