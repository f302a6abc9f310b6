/**
 * What people see on a terminal: commands run in-process (the same code the process runs) with
 * a fake TTY, against a real `ledgerd`. Tables for people, JSON with --json or through a pipe.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accounts, testGenesis } from './support/book.js';
import { type Daemon, startDaemon } from './support/daemon.js';
import { runInProcess } from './support/io.js';
import { configDir } from './support/ledgerctl.js';

let daemon: Daemon;
let env: Record<string, string>;

beforeAll(async () => {
  daemon = await startDaemon({ genesis: testGenesis });
  env = { LEDGER_URL: daemon.url, LEDGER_TOKEN: daemon.operatorKey, LEDGERCTL_CONFIG_DIR: configDir() };
});
afterAll(() => daemon?.stop());

const run = (args: string[], tty = true) => runInProcess(args, { tty, env });

describe('on a terminal', () => {
  it('prints the trial balance as a table, and JSON with --json or through a pipe', async () => {
    const table = await run(['trial-balance']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ASSET\s+DEBITS\s+CREDITS\s+AVAILABLE\s+RESERVED\s+ENCUMBERED\s+SUM\s+BALANCED\n/);
    expect(table.stdout).toMatch(/USD\s+0\.00 USD\s+yes/);
    expect(table.stdout).toContain('balanced (3 accounts');
    expect(JSON.parse((await run(['trial-balance', '--json'])).stdout).rows).toHaveLength(2);
    expect(JSON.parse((await run(['trial-balance'], false)).stdout).unbalanced).toEqual([]);
  });

  it('prints a submitted command as its reference and state with --no-wait, then the decision', async () => {
    const ack = await run(['transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '5', '--asset', 'USD', '--client-key', 'tty-1', '--no-wait']);
    expect(ack.code).toBe(0);
    expect(ack.stdout).toMatch(/^operation\s+op_\w+\n/);
    expect(ack.stdout).toMatch(/client key\s+tty-1\n/);
    const reference = /operation\s+(op_\w+)/.exec(ack.stdout)![1]!;
    const waited = await run(['operations', 'wait', reference]);
    expect(waited.code).toBe(0);
    expect(waited.stdout).toMatch(/state\s+Completed/);
    // Who did what, in major units, and the postings counted rather than listed as JSON.
    expect(waited.stdout).toMatch(/principal\s+did:ledger:id:operator\ncredential\s+did:ledger:cred:operator\namount\s+0\.05 USD\nfrom\s+did:ledger:acct:alice\nto\s+did:ledger:acct:bob\n/);
    expect(waited.stdout).toMatch(/postings\s+2 \(journal seq \d+, \d+\)/);
  });

  it('shows a spinner on stderr while it waits, and clears it', async () => {
    const r = await run(['reservations', 'create', '--payer', accounts.alice, '--amount', '3', '--asset', 'USD']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/state\s+Reserved/);
    expect(r.stderr).toMatch(/waiting for op_\w+/);
    // Erased whole when it stops: after its last frame only the erasing of the line.
    expect(r.stderr.slice(r.stderr.lastIndexOf('waiting for'))).toMatch(/^waiting for op_\w+ \(\w+\)\r\u001b\[2K$/);
  });

  it('prints statements and movements as tables', async () => {
    const statement = await run(['statements', '--account', accounts.alice, '--asset', 'USD', '--from', '1970-01-01T00:00:00Z', '--to', String(Date.now() + 60_000)]);
    expect(statement.code).toBe(0);
    expect(statement.stdout).toMatch(/^did:ledger:acct:alice USD from 1970-01-01T00:00:00.000Z/);
    expect(statement.stdout).toMatch(/LAYER\s+OPENING\s+CLOSING/);
    expect(statement.stdout).toMatch(/SEQ\s+AT\s+ACCOUNT\s+DIR\s+AMOUNT\s+ASSET\s+LAYER\s+STATUS\s+KIND\s+COUNTERPARTY\s+OPERATION/);
    const all = await run(['movements', '--account', accounts.alice, '--limit', '1', '--all']);
    expect(all.code).toBe(0);
    const rows = all.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^SEQ\s+AT/);
    expect(rows.filter((r) => r.startsWith('SEQ'))).toHaveLength(1);
    expect(rows.length).toBeGreaterThan(2);
  });

  it('prints assets, accounts and aliases for people', async () => {
    expect((await run(['assets', 'list'])).stdout).toMatch(/^ASSET\s+KIND\s+PRECISION\s+STATUS\s+BINDING\s+LOCATION\nEUR\s+fiat\s+2\s+active\s+book_only\s+-\n/);
    expect((await run(['accounts', 'show', accounts.bob])).stdout).toMatch(/^account\s+did:ledger:acct:bob\nclosed\s+false\ncustody\s+delegated\n/);
    expect((await run(['aliases', 'lookup', '--source', 'ledger', '--name', 'treasury:USD'])).stdout).toBe(`${accounts.treasury}\n`);
  });

  it('follows events as lines for people and NDJSON for programs', async () => {
    const people = await run(['events', 'tail', '--after', '0', '--count', '1']);
    expect(people.stdout).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z {2}1 {2}did:ledger:id:operator {2}transfer Completed {2}0\.05 USD {2}did:ledger:acct:alice -> did:ledger:acct:bob {2}op_\w+\n$/);
    const programs = await run(['events', 'tail', '--after', '0', '--count', '1', '--json']);
    expect(JSON.parse(programs.stdout)).toMatchObject({ seq: 1, event: 'operation' });
  });

  it('refuses the dashboard without a terminal', async () => {
    const r = await run(['dashboard'], false);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the dashboard needs a terminal');
  });
});

/** The same runs through a pipe: exit codes and stderr for the cases beside the process tests' main paths. */
describe('through a pipe', () => {
  const piped = (...args: string[]) => run(args, false);

  it('exits 2 with the usage for missing options, unknown commands, bad flag values', async () => {
    const required = await piped('reservations', 'create', '--payer', accounts.alice);
    expect(required.code).toBe(2);
    expect(required.stderr).toMatch(/required option '--amount <amount>' not specified/);
    const unknown = await piped('accounts', 'frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    const both = await piped('transfers', 'create', '--legs', '/dev/null', '--amount', '1');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give either --legs or --from/--to/--amount/--asset, not both');
    const tooLong = await piped('transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '8', '--asset', 'USD', '--client-key', 'k'.repeat(257));
    expect(tooLong.code).toBe(2);
    expect((await piped('movements', '--limit', '1')).code).toBe(2);
    const noVerb = await piped('accounts');
    expect(noVerb.code).toBe(2);
    expect(noVerb.stderr).toBe('error: accounts needs a verb: open, show, balance, list, custody, recovery-mechanisms, reclaim, freeze, unfreeze, close, liabilities, verify-liabilities\nhint: ledgerctl help accounts\n');
    expect((await piped('profile', 'use', 'nope')).code).toBe(2);
    expect((await piped('statements', '--account', accounts.alice, '--asset', 'USD', '--from', 'yesterday', '--to', '1')).code).toBe(2);
  });

  it('prints the version', async () => {
    const version = await piped('--version');
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('exits 1 with the code for refusals of every kind', async () => {
    const notOperator = await runAs(daemon.identitiesKey, ['trial-balance']);
    expect(notOperator).toMatchObject({ code: 1, stdout: '' });
    expect(notOperator.stderr).toMatch(/^ERR-NotAuthorised: /);
    expect((await piped('aliases', 'lookup', '--source', 'legacy', '--name', 'nobody')).stderr).toMatch(/^ERR-UnknownAccount: /);
    expect((await piped('transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '0', '--asset', 'USD')).stderr).toMatch(/^ERR-ZeroAmount: /m);
    expect((await piped('movements', '--account', accounts.alice, '--direction', 'sideways')).stderr).toMatch(/^ERR-MalformedCommand: /);
    expect((await piped('operations', 'show', 'op_nope')).stderr).toMatch(/^ERR-UnknownOperation: /);
  });

  it('prints one field raw with --field', async () => {
    expect((await piped('aliases', 'lookup', '--source', 'legacy', '--name', 'alice-1', '--field', 'account')).stdout).toBe(`${accounts.alice}\n`);
    const missing = await piped('aliases', 'lookup', '--source', 'legacy', '--name', 'alice-1', '--field', 'nope');
    expect(missing.code).toBe(2);
  });
});

const runAs = (token: string, args: string[]) => runInProcess(args, { env: { ...env, LEDGER_TOKEN: token } });
