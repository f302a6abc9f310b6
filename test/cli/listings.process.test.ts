/**
 * Paged listings with the built `ledgerctl` against a real `ledgerd`: `grants list` follows `next`
 * like `movements` (`--limit`, `--cursor`, `--all`), and every paged table on a terminal says when
 * more pages exist.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { accounts } from './support/book.js';
import { ledgerctl } from './support/ledgerctl.js';
import { ledgerctlOnTerminal } from './support/terminal.js';
import { useBook } from './support/use-book.js';

const book = useBook();
const issued: string[] = [];

beforeAll(async () => {
  for (let i = 0; i < 3; i++) {
    const grant = await ledgerctl(
      ['ops', 'issuance-grant', '--principal', 'did:ledger:id:operator', '--subject-account', 'treasury:USD', '--ops', 'transfer', '--per-operation', '10', '--justification', `paging ${i}`, '--field', 'result.grant'],
      book.env,
    );
    expect(grant.code).toBe(0);
    issued.push(grant.stdout.trim());
  }
  issued.sort();
  expect((await ledgerctl(['accounts', 'open', '--owner', 'did:ledger:id:bob'], book.env)).code).toBe(0);
  const paid = await ledgerctl(['transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '5', '--asset', 'USD'], book.env);
  expect(paid.code).toBe(0);
});

const grantsOf = (items: { grant: string }[]) => items.map((g) => g.grant);

describe('grants list', () => {
  it('reads one page with --limit, the next with --cursor, and every page with --all', async () => {
    const first = await ledgerctl(['grants', 'list', '--account', accounts.treasury, '--limit', '2'], book.env);
    expect(first.code).toBe(0);
    expect(grantsOf(first.json().items)).toEqual(issued.slice(0, 2));
    expect(first.json().next).toMatch(/^[0-9a-f]+$/);
    const rest = await ledgerctl(['grants', 'list', '--account', accounts.treasury, '--limit', '2', '--cursor', first.json().next], book.env);
    expect(grantsOf(rest.json().items)).toEqual(issued.slice(2));
    expect(rest.json().next).toBeUndefined();
    const all = await ledgerctl(['grants', 'list', '--account', 'treasury:USD', '--limit', '1', '--all'], book.env);
    expect(all.code).toBe(0);
    expect(all.stdout.trim().split('\n').map((l) => JSON.parse(l).grant)).toEqual(issued);
    const whole = await ledgerctl(['grants', 'list', '--account', accounts.treasury], book.env);
    expect(grantsOf(whole.json().items)).toEqual(issued);
  });

  it('refuses a limit the service does not serve (exit 1)', async () => {
    const r = await ledgerctl(['grants', 'list', '--account', accounts.treasury, '--limit', '1001'], book.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ERR-QueryUnbounded: /);
  });
});

describe('paged tables on a terminal', () => {
  it('say that more pages exist, and how to read them', async () => {
    const grants = await ledgerctlOnTerminal(['grants', 'list', '--account', accounts.treasury, '--limit', '2'], book.env);
    expect(grants.code).toBe(0);
    expect(grants.screen).toMatch(/GRANT\s+KIND/);
    expect(grants.screen).toMatch(/more: --cursor [0-9a-f]+ \(or --all\)/);
    const movements = await ledgerctlOnTerminal(['movements', '--account', accounts.alice, '--limit', '1'], book.env);
    expect(movements.screen).toMatch(/more: --cursor [0-9a-f]+ \(or --all\)/);
    const owned = await ledgerctlOnTerminal(['accounts', 'list', '--owner', 'did:ledger:id:bob', '--limit', '1'], book.env);
    expect(owned.screen).toMatch(/more: --cursor [0-9a-f]+ \(or --all\)/);
  });

  it('say nothing more on the last page, with --all, or with --field', async () => {
    const last = await ledgerctlOnTerminal(['grants', 'list', '--account', accounts.treasury], book.env);
    expect(last.screen).not.toContain('more:');
    const all = await ledgerctlOnTerminal(['grants', 'list', '--account', accounts.treasury, '--limit', '1', '--all'], book.env);
    for (const grant of issued) expect(all.screen).toContain(grant);
    expect(all.screen.match(/GRANT\s+KIND/g)).toHaveLength(1);
    expect(all.screen).not.toContain('more:');
    const field = await ledgerctlOnTerminal(['grants', 'list', '--account', accounts.treasury, '--limit', '1', '--field', 'items[0].grant'], book.env);
    expect(field.screen.trim()).toBe(issued[0]);
  });
});
