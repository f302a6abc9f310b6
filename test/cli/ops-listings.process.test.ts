/**
 * What is in the book, with the built `ledgerctl` against a real `ledgerd` (issue 25 item 1):
 * `identities list`, `accounts list` without `--owner`, `operations list`, `reservations list` and
 * `grants list` without a subject read the operator's listings, with their filters as flags,
 * `--limit`, `--cursor` and `--all`, JSON for programs and a table on a terminal.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { accounts } from './support/book.js';
import { ledgerctl } from './support/ledgerctl.js';
import { ledgerctlOnTerminal } from './support/terminal.js';
import { useBook } from './support/use-book.js';

const book = useBook();
let hold = '';
let grant = '';
let startedAtMs = 0;

beforeAll(async () => {
  startedAtMs = Date.now();
  expect((await ledgerctl(['ops', 'identities', 'restrict', 'did:ledger:id:bob', '--justification', 'listing'], book.env)).code).toBe(0);
  expect((await ledgerctl(['transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '500', '--asset', 'USD'], book.env)).code).toBe(0);
  const reserved = await ledgerctl(['reservations', 'create', '--payer', accounts.alice, '--amount', '1234', '--asset', 'USD', '--field', 'operation_reference'], book.env);
  expect(reserved.code).toBe(0);
  hold = reserved.stdout.trim();
  const issued = await ledgerctl(
    ['ops', 'issuance-grant', '--principal', 'did:ledger:id:operator', '--subject-account', 'treasury:USD', '--ops', 'transfer', '--per-operation', '10', '--justification', 'listing', '--field', 'result.grant'],
    book.env,
  );
  expect(issued.code).toBe(0);
  grant = issued.stdout.trim();
});

const lines = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l));

describe('identities list', () => {
  it('lists every identity, by status when asked', async () => {
    const all = await ledgerctl(['identities', 'list'], book.env);
    expect(all.code).toBe(0);
    expect(all.json().items.map((i: { identity: string }) => i.identity)).toEqual(expect.arrayContaining(['did:ledger:id:alice', 'did:ledger:id:bob']));
    const restricted = await ledgerctl(['identities', 'list', '--status', 'restricted'], book.env);
    expect(restricted.json().items.map((i: { identity: string }) => i.identity)).toEqual(['did:ledger:id:bob']);
    const screen = (await ledgerctlOnTerminal(['identities', 'list', '--status', 'restricted'], book.env)).screen;
    expect(screen).toMatch(/IDENTITY\s+STATUS\s+ACCOUNTS\s+CREATED/);
    expect(screen).toMatch(/did:ledger:id:bob\s+restricted\s+1/);
  });
});

describe('accounts list without --owner', () => {
  it('lists every account for the operator, filtered by the flags, with each owner on a terminal', async () => {
    const all = await ledgerctl(['accounts', 'list'], book.env);
    expect(all.code).toBe(0);
    expect(all.json().items.map((a: { account: string }) => a.account)).toEqual([accounts.alice, accounts.bob, accounts.treasury].sort());
    const treasuries = await ledgerctl(['accounts', 'list', '--kind', 'treasury'], book.env);
    expect(treasuries.json().items.map((a: { account: string }) => a.account)).toEqual([accounts.treasury]);
    const heldEur = await ledgerctl(['accounts', 'list', '--asset', 'EUR'], book.env);
    expect(heldEur.json().items).toEqual([]);
    const aliceUsd = await ledgerctl(['accounts', 'list', '--owner', 'did:ledger:id:alice', '--asset', 'USD'], book.env);
    expect(aliceUsd.json().items.map((a: { account: string }) => a.account)).toEqual([accounts.alice]);
    const screen = (await ledgerctlOnTerminal(['accounts', 'list', '--limit', '1'], book.env)).screen;
    expect(screen).toMatch(/ACCOUNT\s+KIND\s+CUSTODY\s+STATUS\s+OPENED\s+OWNER/);
    expect(screen).toMatch(/more: --cursor [0-9a-f]+ \(or --all\)/);
    const paged = await ledgerctl(['accounts', 'list', '--limit', '1', '--all'], book.env);
    expect(lines(paged.stdout).map((a) => a.account)).toEqual([accounts.alice, accounts.bob, accounts.treasury].sort());
  });
});

describe('operations list', () => {
  it('lists operations newest first, filtered by state, command, principal and time', async () => {
    const all = await ledgerctl(['operations', 'list', '--all'], book.env);
    expect(all.code).toBe(0);
    const ops = lines(all.stdout);
    expect(ops[0].command).toBe('issue_grant');
    expect(ops.map((o) => o.submitted_at)).toEqual([...ops.map((o) => o.submitted_at)].sort((a, b) => b - a));
    const reserves = await ledgerctl(['operations', 'list', '--command', 'reserve', '--state', 'Reserved', '--principal', 'did:ledger:id:operator'], book.env);
    expect(reserves.json().items.map((o: { operation_reference: string }) => o.operation_reference)).toEqual([hold]);
    const since = await ledgerctl(['operations', 'list', '--from', new Date(startedAtMs).toISOString(), '--command', 'transfer'], book.env);
    expect(since.json().items).toHaveLength(1);
    const before = await ledgerctl(['operations', 'list', '--to', String(startedAtMs - 1)], book.env);
    expect(before.json().items).toEqual([]);
    const screen = (await ledgerctlOnTerminal(['operations', 'list', '--command', 'reserve'], book.env)).screen;
    expect(screen).toMatch(/SUBMITTED\s+OPERATION\s+COMMAND\s+STATE\s+PRINCIPAL\s+MOVES/);
    expect(screen).toContain(`12.34 USD ${accounts.alice} -> (held)`);
  });

  it('refuses a bad time (exit 2) and a limit the service does not serve (exit 1)', async () => {
    expect((await ledgerctl(['operations', 'list', '--from', 'yesterday-ish'], book.env)).code).toBe(2);
    const r = await ledgerctl(['operations', 'list', '--limit', '1001'], book.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ERR-QueryUnbounded: /);
  });
});

describe('reservations list', () => {
  it('lists live holds with payer, amount in major units, deadline and holder', async () => {
    const r = await ledgerctl(['reservations', 'list'], book.env);
    expect(r.code).toBe(0);
    expect(r.json().items).toEqual([expect.objectContaining({ operation_reference: hold, payer: accounts.alice, amount: '1234', asset: 'USD', holder: 'did:ledger:id:operator' })]);
    const screen = (await ledgerctlOnTerminal(['reservations', 'list'], book.env)).screen;
    expect(screen).toMatch(/OPERATION\s+PAYER\s+AMOUNT\s+DEADLINE\s+HOLDER/);
    expect(screen).toMatch(new RegExp(`${hold}\\s+${accounts.alice}\\s+12\\.34 USD\\s+\\d{4}-\\d\\d-\\d\\dT`));
  });
});

describe('grants list without a subject', () => {
  it('lists every grant, by grantor, holder and state', async () => {
    const live = await ledgerctl(['grants', 'list', '--grantor', 'did:ledger:id:operator', '--state', 'live'], book.env);
    expect(live.code).toBe(0);
    expect(live.json().items.map((g: { grant: string; state: string }) => [g.grant, g.state])).toEqual([[grant, 'live']]);
    expect((await ledgerctl(['grants', 'list', '--state', 'revoked'], book.env)).json().items).toEqual([]);
    const screen = (await ledgerctlOnTerminal(['grants', 'list', '--holder', 'did:ledger:id:operator'], book.env)).screen;
    expect(screen).toMatch(/GRANT\s+KIND.*GRANTOR\s+STATE/);
    expect(screen).toContain(grant);
    expect((await ledgerctl(['grants', 'list', '--account', accounts.treasury, '--state', 'live'], book.env)).code).toBe(2);
  });
});

describe('the operator alone', () => {
  it.each([['identities', 'list'], ['accounts', 'list'], ['operations', 'list'], ['reservations', 'list'], ['grants', 'list']])('%s %s refuses anyone else (exit 1)', async (...verb) => {
    const r = await ledgerctl([...verb], { ...book.env, LEDGER_TOKEN: book.daemon.identitiesKey });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ERR-NotAuthorised: /);
  });
});
