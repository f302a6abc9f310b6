/**
 * `ops members` and `ops audit` (CONTRACT 13) with the built `ledgerctl` against a real `ledgerd`:
 * adding an api-key member prints its key once, the member acts under it, a role change and a
 * removal hold, the trail lists each act, and names and justifications with control characters are
 * escaped on a terminal.
 */
import { describe, expect, it } from 'vitest';
import { accounts } from './support/book.js';
import { ledgerctl } from './support/ledgerctl.js';
import { ledgerctlOnTerminal } from './support/terminal.js';
import { useBook } from './support/use-book.js';

const book = useBook();

describe('ops members and ops audit', () => {
  it('adds, lists, changes and removes members; the audit lists their acts', async () => {
    const added = await ledgerctl(['ops', 'members', 'add', 'dana', '--role', 'operator', '--scheme', 'api-key', '--json'], book.env);
    expect(added.code, added.stderr).toBe(0);
    const { api_key: key, result } = added.json();
    expect(key).toMatch(/^ledger_ak_/);
    const dana = { ...book.env, LEDGER_TOKEN: key };
    const freeze = await ledgerctl(['accounts', 'freeze', accounts.bob, '--justification', 'case 9\u001b[2J'], dana);
    expect(freeze.code, freeze.stderr).toBe(0);

    const list = await ledgerctl(['ops', 'members', 'list', '--json'], book.env);
    expect(list.json().items.map((m: { name: string; role: string }) => [m.name, m.role])).toEqual([['dana', 'operator'], ['root', 'admin']]);
    expect((await ledgerctl(['ops', 'members', 'role', result.credential, '--role', 'auditor'], book.env)).code).toBe(0);
    const refused = await ledgerctl(['accounts', 'unfreeze', accounts.bob, '--justification', 'no'], dana);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^ERR-NotAuthorised: /m);
    expect((await ledgerctl(['ops', 'members', 'role', result.credential, '--role', 'owner'], book.env)).code).toBe(2);

    const audit = await ledgerctl(['ops', 'audit', '--member', 'dana', '--all', '--json'], dana);
    expect(audit.code, audit.stderr).toBe(0);
    const items = audit.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(items.map((i: { act: string }) => i.act)).toEqual(['freezeAccount']);
    expect(items[0].justification).toBe('case 9\u001b[2J');

    const screen = await ledgerctlOnTerminal(['ops', 'audit', '--limit', '10'], book.env);
    expect(screen.code).toBe(0);
    expect(screen.screen).toMatch(/SEQ\s+AT\s+MEMBER\s+ACT/);
    expect(screen.screen).toContain('case 9\\x1b[2J');
    expect(screen.screen).not.toContain('\u001b[2J');

    expect((await ledgerctl(['ops', 'members', 'remove', result.credential], book.env)).code).toBe(0);
    const gone = await ledgerctl(['ops', 'audit'], dana);
    expect(gone.code).toBe(4);
  });
});
