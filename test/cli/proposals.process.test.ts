/**
 * `--propose` and `ops proposals` (CONTRACT 13) with the built `ledgerctl` against a real `ledgerd`:
 * a member proposes a command instead of sending it, another lists and approves it (the request is
 * shown escaped and asked on a terminal; `--yes` for scripts), a proposal is withdrawn, and
 * `--propose` without a justification is a usage error.
 */
import { describe, expect, it } from 'vitest';
import { accounts } from './support/book.js';
import { ledgerctl } from './support/ledgerctl.js';
import { ledgerctlOnTerminal } from './support/terminal.js';
import { useBook } from './support/use-book.js';

const book = useBook();

describe('--propose and ops proposals', () => {
  it('proposes, shows the request escaped before approving, approves with --yes, and withdraws', async () => {
    const added = await ledgerctl(['ops', 'members', 'add', 'dana', '--role', 'operator', '--scheme', 'api-key', '--json'], book.env);
    expect(added.code, added.stderr).toBe(0);
    const dana = { ...book.env, LEDGER_TOKEN: added.json().api_key };

    const proposed = await ledgerctl(['accounts', 'freeze', accounts.bob, '--justification', 'case 9\u001b[2J', '--propose', '--json'], dana);
    expect(proposed.code, proposed.stderr).toBe(0);
    const id = proposed.json().result.proposal as string;
    expect(id).toMatch(/^did:ledger:proposal:/);
    const bob = async () => (await ledgerctl(['accounts', 'show', accounts.bob, '--json'], book.env)).json().status;
    expect(await bob()).toBe('active');

    const listed = await ledgerctl(['ops', 'proposals', 'list', '--state', 'open', '--json'], book.env);
    expect(listed.json().items.map((p: { proposal: string; proposer: string }) => [p.proposal, p.proposer])).toEqual([[id, 'dana']]);

    // On a terminal the request is shown, escaped, and nothing is sent without a yes.
    const asked = await ledgerctlOnTerminal(['ops', 'proposals', 'approve', id], book.env, 'n\r');
    expect(asked.code).toBe(2);
    expect(asked.screen).toContain(`POST /v1/accounts/${accounts.bob}/freeze`);
    expect(asked.screen).toContain('case 9\\u001b[2J');
    expect(asked.screen).not.toContain('\u001b[2J');
    expect(asked.screen).toMatch(/Approve it\? \[y\/N\]/);
    expect((await ledgerctl(['ops', 'proposals', 'show', id, '--json'], book.env)).json().state).toBe('open');
    // Off a terminal an approval is never implied.
    expect((await ledgerctl(['ops', 'proposals', 'approve', id], book.env)).code).toBe(2);
    // The proposer approves its own never.
    const own = await ledgerctl(['ops', 'proposals', 'approve', id, '--yes'], dana);
    expect(own.code).toBe(1);
    expect(own.stderr).toMatch(/^ERR-NotAuthorised: /m);

    // The id as the dashboard shows it, without its did:ledger:proposal: prefix, names it too.
    const approved = await ledgerctl(['ops', 'proposals', 'approve', id.replace(/^did:ledger:proposal:/, ''), '--yes', '--json'], book.env);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.json()).toMatchObject({ state: 'Completed', command: 'freeze_account' });
    expect(await bob()).toBe('frozen');
    const shown = await ledgerctlOnTerminal(['ops', 'proposals', 'show', id], book.env);
    expect(shown.screen).toMatch(/state\s+approved/);
    expect(shown.screen).toMatch(/decided by\s+root/);

    const second = (await ledgerctl(['accounts', 'unfreeze', accounts.bob, '--justification', 'done', '--propose', '--json'], dana)).json().result.proposal;
    const withdrawn = await ledgerctl(['ops', 'proposals', 'reject', second, '--reason', 'not yet'], dana);
    expect(withdrawn.code, withdrawn.stderr).toBe(0);
    expect((await ledgerctl(['ops', 'proposals', 'show', second, '--json'], book.env)).json()).toMatchObject({ state: 'rejected', reason: 'not yet', decided_by: 'dana' });

    const bare = await ledgerctl(['accounts', 'close', accounts.bob, '--propose'], dana);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('--propose needs --justification');
  });
});
