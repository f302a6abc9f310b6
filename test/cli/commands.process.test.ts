/**
 * The built `ledgerctl` as a process against a real `ledgerd`: stdout, stderr and the exit
 * codes of CONTRACT 1 (0 ok, 1 refused, 2 usage, 3 cannot reach) for every served route.
 */
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accounts, testGenesis } from './support/book.js';
import { type Daemon, freePort, startDaemon } from './support/daemon.js';
import { configDir, ledgerctl, withoutClientKey } from './support/ledgerctl.js';

let daemon: Daemon;
let asOperator: Record<string, string>;
let asIdentities: Record<string, string>;

beforeAll(async () => {
  daemon = await startDaemon({ genesis: testGenesis });
  asOperator = { LEDGER_URL: daemon.url, LEDGER_TOKEN: daemon.operatorKey, LEDGERCTL_CONFIG_DIR: configDir() };
  asIdentities = { ...asOperator, LEDGER_TOKEN: daemon.identitiesKey };
});
afterAll(() => daemon?.stop());

const run = (args: string[], env = asOperator, stdin?: string) => ledgerctl(args, env, stdin);

/** Submits a one-leg transfer and returns its acknowledgement. */
async function transfer(from: string, to: string, amount: string, extra: string[] = []) {
  const r = await run(['transfers', 'create', '--from', from, '--to', to, '--amount', amount, '--asset', 'USD', '--no-wait', ...extra]);
  expect(withoutClientKey(r.stderr)).toBe('');
  expect(r.code).toBe(0);
  return r.json();
}

describe('connection, usage and refusals', () => {
  it('exits 3 with the address on stderr when the service cannot be reached', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const r = await run(['assets', 'list', '--url', closed]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`cannot reach ${closed}`);
  });

  it('exits 2 with one line and where the help is for a missing or unknown flag, argument or command', async () => {
    const missing = await run(['transfers', 'create', '--from', accounts.alice]);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toBe('error: a transfer needs --from, --to, --amount and --asset (or --legs FILE)\nhint: ledgerctl help transfers create\n');
    const unknown = await run(['movements', '--bogus']);
    expect(unknown.stderr).toBe("error: unknown option '--bogus'\nhint: ledgerctl help movements\n");
  });

  it('exits 0 for --help', async () => {
    const help = await run(['movements', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--all');
  });

  it('exits 1 with `ERR-Code: description` on stderr for a refusal, 4 for a missing token', async () => {
    const notOperator = await run(['trial-balance'], asIdentities);
    expect(notOperator.code).toBe(1);
    expect(notOperator.stderr).toMatch(/^ERR-NotAuthorised: .+\n$/);
    const noToken = await run(['assets', 'list'], { ...asOperator, LEDGER_TOKEN: '' });
    expect(noToken.code).toBe(4);
    expect(noToken.stderr).toMatch(/^ERR-CredentialInvalid: .+\n$/);
  });
});

describe('assets, aliases and accounts', () => {
  it('lists assets as the API returned them', async () => {
    const r = await run(['assets', 'list']);
    expect(r.code).toBe(0);
    expect(r.json().map((a: { id: string }) => a.id)).toEqual(['EUR', 'USD']);
  });

  it('looks up aliases, refusing unknown and archived ones', async () => {
    const found = await run(['aliases', 'lookup', '--source', 'ledger', '--name', 'treasury:USD']);
    expect(found.json()).toEqual({ account: accounts.treasury });
    const archived = await run(['aliases', 'lookup', '--source', 'legacy', '--name', 'gone-1']);
    expect(archived.code).toBe(1);
    expect(archived.stderr).toMatch(/^ERR-IdentifierArchived: /);
  });

  it('opens an account, waits for it and shows it', async () => {
    const opened = await run(['accounts', 'open', '--owner', 'did:ledger:id:bob', '--wait', '--field', 'result.account'], asIdentities);
    expect(opened.code).toBe(0);
    const account = opened.stdout.trim();
    expect(account).toMatch(/^did:ledger:acct:/);
    const shown = await run(['accounts', 'show', account]);
    expect(shown.json()).toMatchObject({ account, owner: 'did:ledger:id:bob', custody: 'delegated', kind: 'customer', status: 'active', closed: false });
  });
});

describe('transfers and operations', () => {
  it('prints the acknowledgement with its operation reference, then waits for the decision', async () => {
    const reply = await transfer(accounts.alice, accounts.bob, '250');
    expect(reply).toMatchObject({ client_key_derived: false, operation_reference: expect.any(String) });
    const waited = await run(['operations', 'wait', reply.operation_reference, '--timeout-ms', '20000']);
    expect(waited.code).toBe(0);
    expect(waited.json()).toMatchObject({ operation_reference: reply.operation_reference, command: 'transfer', state: 'Completed', terminal: true });
    const shown = await run(['operations', 'show', reply.operation_reference]);
    expect(shown.json().state).toBe('Completed');
  });

  it('takes legs from a JSON file or stdin', async () => {
    const legs = [
      { from: accounts.alice, to: accounts.bob, amount: '3', asset: 'USD' },
      { from: accounts.bob, to: accounts.alice, amount: '1', asset: 'USD' },
    ];
    const file = join(daemon.dataDir, '..', 'legs.json');
    writeFileSync(file, JSON.stringify(legs));
    const fromFile = await run(['transfers', 'create', '--legs', file, '--wait']);
    expect(fromFile.code).toBe(0);
    expect(fromFile.json().result.postings).toHaveLength(4);
    const fromStdin = await run(['transfers', 'create', '--legs', '-', '--wait', '--field', 'state'], asOperator, JSON.stringify(legs));
    expect(fromStdin.stdout).toBe('Completed\n');
  });

  it('retries safely under --client-key and refuses the key for another request', async () => {
    const first = await transfer(accounts.alice, accounts.bob, '7', ['--client-key', 'runbook-step-1']);
    expect(first).toMatchObject({ client_key: 'runbook-step-1', client_key_derived: false });
    await run(['operations', 'wait', first.operation_reference]);
    const repeat = await run(['transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '7', '--asset', 'USD', '--no-wait', '--client-key', 'runbook-step-1']);
    expect(repeat.code).toBe(0);
    expect(repeat.json()).toMatchObject({ operation_reference: first.operation_reference, terminal: true, state: 'Completed' });
    expect(repeat.stderr).toBe(`ledgerctl: replay: client key runbook-step-1 was taken before; this is ${first.operation_reference}'s reply, nothing was done again\n`);
    const reused = await run(['transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '8', '--asset', 'USD', '--client-key', 'runbook-step-1']);
    expect(reused.code).toBe(1);
    expect(reused.stderr).toMatch(/^ERR-ClientKeyReused: /);
  });

  it('prints a rejected decision and its error code, and exits 1', async () => {
    const r = await run(['transfers', 'create', '--from', accounts.bob, '--to', accounts.alice, '--amount', '999999999', '--asset', 'USD']);
    expect(r.code).toBe(1);
    expect(r.json()).toMatchObject({ state: 'Rejected', error: { error: 'ERR-InsufficientAvailable' } });
    expect(withoutClientKey(r.stderr)).toMatch(/^ERR-InsufficientAvailable: /);
  });

  it('passes amounts it does not read as text for the service to judge', async () => {
    const signed = await run(['transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '-5', '--asset', 'USD']);
    expect(signed.code).toBe(1);
    expect(withoutClientKey(signed.stderr)).toMatch(/^ERR-MalformedCommand: /);
  });
});

describe('reservations', () => {
  it('reserves, then captures one and releases another', async () => {
    let holds = 0;
    const reserve = async () => {
      const r = await run(['reservations', 'create', '--payer', accounts.alice, '--amount', '40', '--asset', 'USD', '--wait', '--client-key', `hold-${++holds}`]);
      expect(r.code).toBe(0);
      expect(r.json().state).toBe('Reserved');
      return r.json().operation_reference as string;
    };
    const captured = await run(['reservations', 'capture', await reserve(), '--to', accounts.bob, '--amount', '30', '--wait']);
    expect(captured.code).toBe(0);
    expect(captured.json().state).toBe('Completed');
    const held = await reserve();
    const released = await run(['reservations', 'release', held, '--wait', '--field', 'state']);
    expect(released.stdout).toBe('Completed\n');
    const twice = await run(['reservations', 'release', held, '--wait', '--client-key', 'release-again']);
    expect(twice.code).toBe(1);
    expect(withoutClientKey(twice.stderr)).toMatch(/^ERR-/);
  });
});

describe('queries', () => {
  it('reads a statement for a period', async () => {
    const r = await run(['statements', '--account', accounts.alice, '--asset', 'USD', '--from', '0', '--to', new Date(Date.now() + 60_000).toISOString()]);
    expect(r.code).toBe(0);
    const statement = r.json();
    expect(statement).toMatchObject({ account: accounts.alice, asset: 'USD', opening: { available: '0' } });
    expect(statement.movements.length).toBeGreaterThan(0);
    const unbounded = await run(['statements', '--account', accounts.alice, '--asset', 'USD', '--from', '10', '--to', '5']);
    expect(unbounded.code).toBe(1);
    expect(unbounded.stderr).toMatch(/^ERR-QueryUnbounded: /);
  });

  it('pages movements, follows next with --all as NDJSON', async () => {
    const page = await run(['movements', '--account', accounts.alice, '--limit', '1']);
    expect(page.json().movements).toHaveLength(1);
    expect(page.json().next).toMatch(/^[0-9a-f]+$/);
    const all = await run(['movements', '--account', accounts.alice, '--limit', '2', '--all', '--json']);
    expect(all.code).toBe(0);
    const lines = all.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThan(3);
    expect(lines.every((m) => m.account === accounts.alice && typeof m.amount === 'string')).toBe(true);
    expect(lines.map((m) => m.seq)).toEqual([...lines.map((m) => m.seq)].sort((a, b) => a - b));
    // --field picks one field out of each record of a stream.
    const seqs = await run(['movements', '--account', accounts.alice, '--limit', '2', '--all', '--field', 'seq']);
    expect(seqs.code).toBe(0);
    expect(seqs.stdout.trim().split('\n')).toEqual(lines.map((m) => String(m.seq)));
  });

  it('reads the trial balance', async () => {
    const r = await run(['trial-balance', '--asset', 'USD']);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ rows: [{ asset: 'USD', openings: '0' }], unbalanced: [] });
  });

  it('tails events from a position as NDJSON', async () => {
    const r = await run(['events', 'tail', '--after', '0', '--count', '2']);
    expect(r.code).toBe(0);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(events.map((e) => e.seq)).toEqual([1, 2]);
    expect(events[0]).toMatchObject({ event: 'operation', data: { operation_reference: expect.any(String) } });
    const refs = await run(['events', 'tail', '--after', '0', '--count', '2', '--field', 'data.operation_reference']);
    expect(refs.stdout.trim().split('\n')).toEqual(events.map((e) => e.data.operation_reference));
  });
});

describe('profiles', () => {
  it('saves a profile with its token in a 0600 file and connects with it', async () => {
    const env = { LEDGERCTL_CONFIG_DIR: configDir() };
    const add = await run(['profile', 'add', 'local', '--url', daemon.url, '--token', daemon.operatorKey], env);
    expect(add.code).toBe(0);
    expect(add.stderr).toContain('saved profile local (active)');
    await run(['profile', 'add', 'other', '--url', 'http://127.0.0.1:1'], env);
    const list = await run(['profile', 'list'], env);
    expect(list.json()).toEqual([
      { name: 'local', active: true, url: daemon.url, signed_in: true },
      { name: 'other', active: false, url: 'http://127.0.0.1:1', signed_in: false },
    ]);
    const shown = await run(['profile', 'show'], env);
    expect(shown.stdout).not.toContain(daemon.operatorKey);
    const { secrets_file: secretsFile } = shown.json();
    expect(statSync(secretsFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(secretsFile, '..', 'config.json')).mode & 0o777).toBe(0o600);
    expect((await run(['trial-balance'], env)).code).toBe(0);
    expect((await run(['profile', 'use', 'other'], env)).code).toBe(0);
    expect((await run(['trial-balance'], env)).code).toBe(3);
    expect((await run(['trial-balance', '--profile', 'local'], env)).code).toBe(0);
  });
});
