/**
 * The CLI's conventions with the built `ledgerctl` against a real `ledgerd`: flags beat the
 * environment, which beats the profile; profiles added, renamed and removed; output formats;
 * field paths; help and usage errors; colour off; accounts named by alias and by saved name.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { accounts } from './support/book.js';
import { freePort } from './support/daemon.js';
import { configDir, ledgerctl, withoutClientKey } from './support/ledgerctl.js';
import { ledgerctlOnTerminal } from './support/terminal.js';
import { useBook } from './support/use-book.js';

const book = useBook();
let closedUrl: string;

beforeAll(async () => {
  closedUrl = `http://127.0.0.1:${await freePort()}`;
});

/** A fresh profile directory holding a profile `good` (active) for the daemon, as the operator. */
async function withGoodProfile(): Promise<Record<string, string>> {
  const dir = { LEDGERCTL_CONFIG_DIR: configDir() };
  const add = await ledgerctl(['profile', 'add', 'good', '--url', book.daemon.url, '--token', book.daemon.operatorKey, '--use'], dir);
  expect(add.code).toBe(0);
  return dir;
}

describe('where the connection comes from', () => {
  it('an explicit --profile beats $LEDGER_URL and $LEDGER_TOKEN; the environment beats the active profile; --url beats both', async () => {
    const dir = await withGoodProfile();
    const hostileEnv = { ...dir, LEDGER_URL: closedUrl, LEDGER_TOKEN: 'not-a-key' };
    expect((await ledgerctl(['--profile', 'good', 'trial-balance'], hostileEnv)).code).toBe(0);
    expect((await ledgerctl(['trial-balance'], hostileEnv)).code).toBe(3);
    expect((await ledgerctl(['trial-balance'], { ...dir, LEDGER_TOKEN: 'not-a-key' })).code).toBe(4);
    expect((await ledgerctl(['trial-balance'], dir)).code).toBe(0);
    expect((await ledgerctl(['--profile', 'good', '--url', closedUrl, 'trial-balance'], dir)).code).toBe(3);
  });

  it('refuses a profile that does not exist, naming those that do', async () => {
    const dir = await withGoodProfile();
    const r = await ledgerctl(['--profile', 'nosuch', 'trial-balance'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: no profile named nosuch; saved: good\nhint: ledgerctl help trial-balance\n');
    expect((await ledgerctl(['trial-balance'], { ...dir, LEDGER_PROFILE: 'nosuch' })).code).toBe(2);
    // Names an object inherits are no profile's, and no saved account's.
    expect((await ledgerctl(['--profile', 'constructor', 'trial-balance'], dir)).code).toBe(2);
    expect((await ledgerctl(['accounts', 'show', 'constructor'], dir)).stderr).toMatch(/^ERR-UnknownAccount: account constructor: /);
    const none = await ledgerctl(['--profile', 'nosuch', 'trial-balance'], { LEDGERCTL_CONFIG_DIR: configDir() });
    expect(none.stderr).toContain('none is saved (ledgerctl profile add NAME --url URL)');
  });
});

describe('profiles', () => {
  it('refuses to overwrite a profile without --force', async () => {
    const dir = await withGoodProfile();
    const again = await ledgerctl(['profile', 'add', 'good', '--url', closedUrl], dir);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('a profile named good exists already; --force replaces it');
    expect((await ledgerctl(['trial-balance'], dir)).code).toBe(0);
    expect((await ledgerctl(['profile', 'add', 'good', '--url', closedUrl, '--force'], dir)).code).toBe(0);
    expect((await ledgerctl(['profile', 'show', 'good'], dir)).json().url).toBe(closedUrl);
  });

  it('renames a profile with its token, and removes one with its secrets', async () => {
    const dir = await withGoodProfile();
    expect((await ledgerctl(['profile', 'rename', 'good', 'better'], dir)).code).toBe(0);
    expect((await ledgerctl(['profile', 'list'], dir)).json()).toEqual([{ name: 'better', active: true, url: book.daemon.url, signed_in: true }]);
    expect((await ledgerctl(['--profile', 'better', 'trial-balance'], dir)).code).toBe(0);
    expect((await ledgerctl(['--profile', 'good', 'trial-balance'], dir)).code).toBe(2);
    expect((await ledgerctl(['profile', 'rename', 'nosuch', 'x'], dir)).code).toBe(2);
    expect((await ledgerctl(['profile', 'remove', 'better'], dir)).code).toBe(0);
    expect((await ledgerctl(['profile', 'list'], dir)).json()).toEqual([]);
    // Names with dots are names, not paths: removing `prod` leaves `prod.eu` and its token.
    await ledgerctl(['profile', 'add', 'prod', '--url', book.daemon.url, '--token', book.daemon.operatorKey], dir);
    await ledgerctl(['profile', 'add', 'prod.eu', '--url', book.daemon.url, '--token', book.daemon.identitiesKey], dir);
    expect((await ledgerctl(['profile', 'remove', 'prod'], dir)).code).toBe(0);
    expect((await ledgerctl(['--profile', 'prod.eu', 'auth', 'whoami', '--field', 'principal'], dir)).stdout).toBe('did:ledger:id:identities\n');
    expect((await ledgerctl(['profile', 'remove', 'prod.eu'], dir)).code).toBe(0);
    // Added again under the old name, it holds no token of the removed one.
    await ledgerctl(['profile', 'add', 'better', '--url', book.daemon.url], dir);
    expect((await ledgerctl(['--profile', 'better', 'trial-balance'], dir)).code).toBe(4);
  });
});

describe('output', () => {
  it('prints json, ndjson, yaml or a table with -o, whatever stdout is', async () => {
    expect((await ledgerctl(['assets', 'list', '-o', 'json'], book.env)).json().map((a: { id: string }) => a.id)).toEqual(['EUR', 'USD']);
    const ndjson = await ledgerctl(['assets', 'list', '-o', 'ndjson'], book.env);
    expect(ndjson.stdout.trim().split('\n').map((l) => JSON.parse(l).id)).toEqual(['EUR', 'USD']);
    const yaml = await ledgerctl(['trial-balance', '--output', 'yaml'], book.env);
    expect(yaml.stdout).toMatch(/^accounts: 3\nrows:\n {2}- asset: EUR\n {4}openings: "0"\n/);
    const table = await ledgerctl(['assets', 'list', '-o', 'table'], book.env);
    expect(table.stdout).toMatch(/^ASSET\s+KIND\s+PRECISION/);
    expect((await ledgerctl(['assets', 'list', '-o', 'xml'], book.env)).code).toBe(2);
    expect((await ledgerctl(['assets', 'list', '--json', '-o', 'table'], book.env)).code).toBe(2);
  });

  it('takes array indexes in --field paths', async () => {
    expect((await ledgerctl(['trial-balance', '--field', 'rows[1].asset'], book.env)).stdout).toBe('USD\n');
    expect((await ledgerctl(['assets', 'list', '--field', '[0].precision'], book.env)).stdout).toBe('2\n');
    expect((await ledgerctl(['trial-balance', '--field', 'rows[5].asset'], book.env)).code).toBe(2);
    expect((await ledgerctl(['trial-balance', '--field', 'rows[x]'], book.env)).code).toBe(2);
  });

  it('honours NO_COLOR and --no-color on a terminal', async () => {
    const coloured = await ledgerctlOnTerminal(['trial-balance'], book.env);
    expect(coloured.screen).toContain('\u001b[32m');
    for (const run of [ledgerctlOnTerminal(['trial-balance'], { ...book.env, NO_COLOR: '1' }), ledgerctlOnTerminal(['trial-balance', '--no-color'], book.env)]) {
      const plain = await run;
      expect(plain.code).toBe(0);
      expect(plain.screen).toContain('balanced');
      expect(plain.screen).not.toContain('\u001b[');
    }
  });
});

describe('values for shell completion', () => {
  it('assets list keeps the asset symbols in the saved profile of its service, and only there', async () => {
    const dir = await withGoodProfile();
    expect((await ledgerctl(['__complete', 'assets'], dir)).stdout).toBe('');
    expect((await ledgerctl(['assets', 'list'], dir)).code).toBe(0);
    expect((await ledgerctl(['__complete', 'assets'], dir)).stdout).toBe('EUR\nUSD\n');
    // Another service through --url is not the profile's: its assets are not kept there.
    const other = await withGoodProfile();
    expect((await ledgerctl(['--url', book.daemon.url.replace('127.0.0.1', 'localhost'), 'assets', 'list'], other)).code).toBe(0);
    expect((await ledgerctl(['__complete', 'assets'], other)).stdout).toBe('');
    // The environment alone saves no profile.
    const bare = { ...book.env, LEDGERCTL_CONFIG_DIR: configDir() };
    expect((await ledgerctl(['assets', 'list'], bare)).code).toBe(0);
    expect((await ledgerctl(['profile', 'list'], bare)).json()).toEqual([]);
  });
});

describe('help', () => {
  it("`ledgerctl help NOUN VERB` shows that command's help", async () => {
    const r = await ledgerctl(['help', 'transfers', 'create'], book.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: ledgerctl transfers create \[options\]/);
    expect(r.stdout).toContain('--no-wait');
    expect(r.stdout).toContain('\nExamples:\n  ledgerctl transfers create --from treasury:USD --to savings --amount 1000 --asset USD\n');
  });

  it('a noun without its verb is one line naming its verbs and where the help is (exit 2)', async () => {
    const r = await ledgerctl(['accounts'], book.env);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: accounts needs a verb: open, show, balance, list, custody, recovery-mechanisms, reclaim, freeze, unfreeze, close, liabilities, verify-liabilities\nhint: ledgerctl help accounts\n');
    const globals = await ledgerctl(['--json', 'reservations'], book.env);
    expect(globals.code).toBe(2);
    expect(globals.stderr).toBe('error: reservations needs a verb: create, list, capture, release\nhint: ledgerctl help reservations\n');
    const help = await ledgerctl(['help', 'accounts'], book.env);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: ledgerctl accounts/);
    expect((await ledgerctl(['accounts', '--help'], book.env)).stdout).toBe(help.stdout);
  });
});

describe('accounts by name', () => {
  it('takes a ledger alias where a flag takes an account', async () => {
    const grant = await ledgerctl(['ops', 'issuance-grant', '--principal', 'did:ledger:id:operator', '--subject-account', 'treasury:USD', '--ops', 'transfer', '--per-operation', '100000', '--justification', 'float'], book.env);
    expect(grant.code).toBe(0);
    expect(grant.json().state).toBe('Completed');
    const issued = await ledgerctl(['transfers', 'create', '--from', 'treasury:USD', '--to', accounts.bob, '--amount', '5', '--asset', 'USD'], book.env);
    expect(issued.code).toBe(0);
    expect(issued.json().state).toBe('Completed');
    expect((await ledgerctl(['accounts', 'show', 'treasury:USD', '--field', 'account'], book.env)).stdout).toBe(`${accounts.treasury}\n`);
    const unknown = await ledgerctl(['transfers', 'create', '--from', 'treasury:XYZ', '--to', accounts.bob, '--amount', '5', '--asset', 'USD'], book.env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^ERR-UnknownAccount: --from treasury:XYZ: not an account identifier, a name saved in this profile, or a ledger alias/);
  });

  it('keeps names for accounts it opens in the profile, for every flag that takes an account', async () => {
    const dir = await withGoodProfile();
    const opened = await ledgerctl(['accounts', 'open', '--owner', 'did:ledger:id:bob', '--save-as', 'savings', '--field', 'result.account'], dir);
    expect(opened.code).toBe(0);
    const account = opened.stdout.trim();
    expect(withoutClientKey(opened.stderr)).toBe(`saved ${account} as savings in profile good\n`);
    const paid = await ledgerctl(['transfers', 'create', '--from', accounts.alice, '--to', 'savings', '--amount', '250', '--asset', 'USD'], dir);
    expect(paid.code).toBe(0);
    expect((await ledgerctl(['accounts', 'balance', 'savings'], dir)).json()).toMatchObject({ account, balances: [{ asset: 'USD', available: '250' }] });
    expect((await ledgerctl(['movements', '--account', 'savings'], dir)).json().movements).toHaveLength(1);
    expect((await ledgerctl(['profile', 'show'], dir)).json().accounts).toEqual({ savings: account });
    // List flags too: an issuance grant limited to the saved account as counterparty.
    const grant = await ledgerctl(['ops', 'issuance-grant', '--principal', 'did:ledger:id:operator', '--subject-account', 'treasury:USD', '--ops', 'transfer', '--per-operation', '10', '--counterparties', 'savings', '--justification', 'savings only'], dir);
    expect(grant.code).toBe(0);
    const listed = (await ledgerctl(['grants', 'list', '--account', 'treasury:USD'], dir)).json().items;
    expect(listed.find((g: { grant: string }) => g.grant === grant.json().result.grant).terms.counterparties).toEqual([account]);
    // Another profile does not know the name.
    expect((await ledgerctl(['accounts', 'balance', 'savings'], book.env)).code).toBe(1);
    expect((await ledgerctl(['accounts', 'open', '--owner', 'did:ledger:id:bob', '--save-as', 'a:b'], dir)).code).toBe(2);
    expect((await ledgerctl(['accounts', 'open', '--owner', 'did:ledger:id:bob', '--save-as', 'later', '--no-wait'], dir)).code).toBe(2);
  });
});
