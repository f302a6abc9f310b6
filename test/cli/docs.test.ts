/**
 * The man pages and shell completion stay in step with the command trees, and the pages render
 * cleanly with `man -l`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { completionScript } from '../../cli/completion.js';
import { examples, examplesOf } from '../../cli/examples.js';
import { renderManPage } from '../../cli/manpage.js';
import { ProfileStore } from '../../cli/profiles.js';
import { buildProgram, version } from '../../cli/program.js';
import { groups, leaves, longOptions } from '../../cli/tree.js';
import { configSettings, configTable } from '../support/config-table.js';
import { repoRoot } from './support/daemon.js';
import { fakeIo, runInProcess } from './support/io.js';
import { configDir } from './support/ledgerctl.js';

const program = await buildProgram(fakeIo());
const manPath = (page: string) => join(repoRoot, 'man', page);

/** The page as `man -l` renders it, and what man and groff warned about. */
function rendered(page: string): { text: string; warnings: string } {
  const result = spawnSync('man', ['-l', '--warnings=w', manPath(page)], { env: { ...process.env, MANWIDTH: '100', MANPAGER: 'cat', PAGER: 'cat' }, encoding: 'utf8' });
  expect(result.status).toBe(0);
  // Undo the page's hyphenation at line ends so words and options are found whole.
  return { text: result.stdout.replace(/‐\n\s*/g, ''), warnings: result.stderr };
}

describe('man/ledgerctl.1', () => {
  it('is the page generated from the command tree (regenerate: npm run build && node dist/cli/manpage-write.js)', () => {
    expect(readFileSync(manPath('ledgerctl.1'), 'utf8')).toBe(renderManPage(program, version));
  });

  it('renders cleanly and documents every command, option and exit code', () => {
    const { text, warnings } = rendered('ledgerctl.1');
    expect(warnings).toBe('');
    expect(execFileSync('groff', ['-man', '-Tutf8', '-ww', '-z', manPath('ledgerctl.1')], { encoding: 'utf8' })).toBe('');
    const flat = text.replace(/\s+/g, ' ');
    for (const { path, command } of leaves(program)) {
      expect(flat).toContain(`ledgerctl ${path.join(' ')}`);
      for (const option of longOptions(program, command)) expect(flat).toContain(option);
    }
    for (const { path } of leaves(program)) for (const example of examplesOf(path)) expect(flat).toContain(example);
    for (const code of ['0 Success', '1 Refused by the service', '2 Usage error', '3 The service cannot be reached', '4 Not signed in']) expect(flat).toContain(code);
  });
});

describe('examples', () => {
  it("every command has some, each calling that command, shown under its --help", async () => {
    const paths = leaves(program).map(({ path }) => path.join(' '));
    expect(Object.keys(examples).sort()).toEqual(paths.filter((p) => p !== 'help').sort());
    for (const { path } of leaves(program)) {
      const shown = examplesOf(path);
      expect(shown.length, path.join(' ')).toBeGreaterThan(0);
      for (const example of shown) expect(example, path.join(' ')).toMatch(new RegExp(`ledgerctl (--profile \\S+ )?${path.join(' ')}( |$)`));
      const help = await runInProcess([...path, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`\nExamples:\n${shown.map((e) => `  ${e}\n`).join('')}`);
    }
  });
});

describe('man/ledgerd.8', () => {
  const help = (...args: string[]) => execFileSync(process.execPath, ['bin/ledgerd', ...args, '--help'], { cwd: repoRoot, encoding: 'utf8' });

  it('renders cleanly and documents every ledgerd command and option', () => {
    const { text, warnings } = rendered('ledgerd.8');
    expect(warnings).toBe('');
    expect(execFileSync('groff', ['-man', '-Tutf8', '-ww', '-z', manPath('ledgerd.8')], { encoding: 'utf8' })).toBe('');
    const flat = text.replace(/\s+/g, ' ');
    const commands = [...help().matchAll(/^ {2}(\w+) /gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    expect(commands).toEqual(['init', 'serve', 'restore', 'migrate', 'check', 'config']);
    for (const command of ['', ...commands]) {
      const options = [...(command === '' ? help() : help(command)).matchAll(/(--[a-z-]+)/g)].map((m) => m[1]!);
      expect(options.length).toBeGreaterThan(0);
      for (const option of options) expect(flat).toContain(option);
    }
    for (const variable of readFileSync(join(repoRoot, 'daemon', 'config.ts'), 'utf8').matchAll(/env\.(LEDGERD_[A-Z_]+)/g)) expect(flat).toContain(variable[1]!);
  });

  it("lists every setting of the config file with docs/daemon.md's default and bounds (which test/daemon/docs-defaults holds to the config)", () => {
    const { text } = rendered('ledgerd.8');
    const section = text.slice(text.indexOf('\nCONFIGURATION\n'), text.indexOf('\nHTTP\n'));
    const flat = section.replace(/\s+/g, ' ');
    // The page as written in docs/daemon.md's cells: code in backticks is bold, "…" is "...".
    const asRendered = (cell: string) => cell.replaceAll('`', '').replaceAll('…', '...').replace(/\s+/g, ' ');
    const rows = configTable(repoRoot);
    const { config, settings } = configSettings();
    expect(rows.map((r) => r.setting).sort()).toEqual(settings.sort());
    for (const row of rows) {
      const bounds = row.boundsText === '' ? '' : ` Bounds: ${asRendered(row.boundsText)}.`;
      expect(flat, row.setting).toContain(` ${row.setting} Default: ${asRendered(row.defaultText)}.${bounds}`);
    }
    // The members of the settings that are objects, each with its bounds.
    for (const setting of ['store', 'settlement', 'recovery', 'backup']) {
      for (const member of Object.keys(config[setting] as object)) expect(flat, `${setting}.${member}`).toContain(member);
    }
  });
});

describe('shell completion', () => {
  const script = join(configDir(), 'ledgerctl.bash');
  writeFileSync(script, completionScript(program, 'bash'));
  // A profile store with two profiles, saved account names and cached asset symbols, one of them hostile.
  const store = configDir();
  const pwned = join(store, 'pwned');
  const env: NodeJS.ProcessEnv = { ...process.env, LEDGERCTL_CONFIG_DIR: store };
  delete env.LEDGER_PROFILE;
  beforeAll(async () => {
    const profiles = await ProfileStore.open(store);
    const base = { url: 'http://127.0.0.1:1', rpId: 'localhost', origin: 'http://localhost:8470' };
    profiles.put('prod', { ...base, accounts: { savings: 'did:ledger:acct:s', shop: 'did:ledger:acct:m' }, assets: ['EUR', 'USD', `$(touch ${pwned})`] });
    profiles.put('staging', { ...base, accounts: { test: 'did:ledger:acct:t' }, assets: ['BTC'] });
    profiles.use('prod');
  });
  /** ledgerctl as the completion scripts call it: the built one. */
  const shellLedgerctl = `ledgerctl() { '${process.execPath}' '${join(repoRoot, 'bin', 'ledgerctl')}' "$@"; }`;

  /** What bash completes after `words` (the last one being typed). */
  function complete(...words: string[]): string[] {
    const line = ['ledgerctl', ...words].map((w) => `'${w}'`).join(' ');
    const out = execFileSync('bash', ['-c', `${shellLedgerctl}; source '${script}'; COMP_WORDS=(${line}); COMP_CWORD=${words.length}; _ledgerctl; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8', env });
    return out.split('\n').filter((w) => w !== '');
  }

  it('completes nouns, verbs and every command\'s options in bash', () => {
    expect(complete('tr')).toEqual(['transfers', 'trial-balance']);
    for (const group of groups(program)) expect(complete(...group.name.split(' '), '')).toEqual(group.verbs);
    for (const { path, command } of leaves(program)) {
      if (path[0] === 'help') continue;
      expect(complete(...path, '--json', '--')).toEqual(expect.arrayContaining(longOptions(program, command)));
    }
    expect(complete('--url', 'http://x', 'transfers', 'create', '--from', 'did:ledger:acct:a', '--am')).toEqual(['--amount']);
  });

  it('completes profiles, cached assets and saved account names in bash, never expanding a served value', () => {
    expect(complete('--profile', '')).toEqual(['prod', 'staging']);
    expect(complete('transfers', 'create', '--profile', 'st')).toEqual(['staging']);
    expect(complete('transfers', 'create', '--from', '')).toEqual(['savings', 'shop']);
    expect(complete('transfers', 'create', '--from', 'savings', '--to', 'sh')).toEqual(['shop']);
    expect(complete('reservations', 'create', '--payer', '')).toEqual(['savings', 'shop']);
    expect(complete('movements', '--account', '')).toEqual(['savings', 'shop']);
    expect(complete('transfers', 'create', '--asset', '')).toEqual(['EUR', 'USD']);
    expect(complete('--profile', 'staging', 'transfers', 'create', '--asset', '')).toEqual(['BTC']);
    expect(complete('transfers', 'create', '--from', 'x', '--profile', 'staging', '--to', '')).toEqual(['test']);
    // --from of movements is a time, not an account: no names offered.
    expect(complete('movements', '--from', '')).not.toContain('savings');
    expect(existsSync(pwned)).toBe(false);
  });

  it('completes -o and --output with the output formats in every shell', () => {
    expect(complete('assets', 'list', '-o', '')).toEqual(['json', 'ndjson', 'table', 'yaml']);
    expect(complete('-o', 'nd')).toEqual(['ndjson']);
    expect(complete('trial-balance', '--output', 'y')).toEqual(['yaml']);
  });

  it('completes verbs, options and values in zsh (compadd stubbed to print what it is given)', () => {
    const zshScript = join(configDir(), '_ledgerctl');
    writeFileSync(zshScript, completionScript(program, 'zsh'));
    const complete = (...words: string[]) =>
      execFileSync('zsh', ['-c', `${shellLedgerctl}; compdef() { :; }; compadd() { print -l -- \${(P)2}; }; source '${zshScript}'; words=(ledgerctl ${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length + 1}; _ledgerctl`], { encoding: 'utf8', env })
        .split('\n')
        .filter((w) => w !== '');
    expect(complete('reservations', '')).toEqual(['create', 'list', 'capture', 'release']);
    expect(complete('operations', 'list', '--')).toEqual(expect.arrayContaining(['--state', '--command', '--principal', '--from', '--to', '--limit', '--cursor', '--all']));
    expect(complete('--json', 'operations', 'wait', 'op_1', '--')).toEqual(expect.arrayContaining(['--timeout-ms', '--url', '--json']));
    expect(complete('--profile', '')).toEqual(['prod', 'staging']);
    expect(complete('reservations', 'capture', 'op_1', '--to', '')).toEqual(['savings', 'shop']);
    expect(complete('--profile', 'staging', 'trial-balance', '--asset', '')).toEqual(['BTC']);
    expect(complete('assets', 'list', '-o', '')).toEqual(['json', 'ndjson', 'table', 'yaml']);
    // No values is no candidate at all, not one empty one.
    const count = execFileSync('zsh', ['-c', `${shellLedgerctl}; compdef() { :; }; compadd() { print -- \${#\${(P)2}}; }; source '${zshScript}'; words=(ledgerctl --profile nosuch trial-balance --asset ''); CURRENT=6; _ledgerctl`], { encoding: 'utf8', env });
    expect(count).toBe('0\n');
    expect(existsSync(pwned)).toBe(false);
  });

  it('completes commands, options and values in fish', () => {
    const fishScript = join(configDir(), 'ledgerctl.fish');
    writeFileSync(fishScript, completionScript(program, 'fish'));
    const fishLedgerctl = `function ledgerctl; '${process.execPath}' '${join(repoRoot, 'bin', 'ledgerctl')}' $argv; end`;
    const complete = (line: string) =>
      execFileSync('fish', ['--no-config', '-c', `${fishLedgerctl}; source '${fishScript}'; complete -C ${JSON.stringify(`ledgerctl ${line}`).replaceAll('$', '\\$')}`], { encoding: 'utf8', env })
        .split('\n')
        .filter((w) => w !== '')
        .map((w) => w.split('\t')[0]);
    expect(complete('tr')).toEqual(['transfers', 'trial-balance']);
    expect(complete('reservations ')).toEqual(['capture', 'create', 'list', 'release']);
    expect(complete('identities ')).toEqual(['create', 'list', 'recovery-terms']);
    expect(complete('accounts list --asset ')).toEqual(['EUR', 'USD']);
    expect(complete('transfers create --am')).toEqual(['--amount']);
    expect(complete('--json operations wait op_1 --')).toEqual(expect.arrayContaining(['--timeout-ms', '--url', '--json']));
    expect(complete('--profile ')).toEqual(['prod', 'staging']);
    expect(complete('transfers create --from ')).toEqual(['savings', 'shop']);
    expect(complete('--profile staging transfers create --asset ')).toEqual(['BTC']);
    expect(complete('transfers create --asset ')).toEqual(['EUR', 'USD']);
    expect(complete('assets list -o ')).toEqual(['json', 'ndjson', 'table', 'yaml']);
    expect(complete('--output ')).toEqual(['json', 'ndjson', 'table', 'yaml']);
    expect(complete('movements --from ')).not.toContain('savings');
    expect(existsSync(pwned)).toBe(false);
  });

  it('is printed by `ledgerctl completion`, bash and zsh sharing the same word and value tables', async () => {
    const bash = completionScript(program, 'bash');
    const zsh = completionScript(program, 'zsh');
    expect(zsh.startsWith('#compdef ledgerctl\n')).toBe(true);
    const tables = (s: string) => s.slice(s.indexOf('_ledgerctl_words() {'), s.indexOf('_ledgerctl_values()'));
    expect(tables(zsh)).toBe(tables(bash));
    expect(zsh).toContain('compdef _ledgerctl ledgerctl');
    expect(zsh).not.toMatch(/\blocal path\b/);
    for (const shell of ['bash', 'zsh', 'fish'] as const) expect((await runInProcess(['completion', shell])).stdout).toBe(completionScript(program, shell));
    expect((await runInProcess(['completion', 'tcsh'])).code).toBe(2);
  });

  it('values come from the profile store alone, plain words only, and never fail', async () => {
    expect(await runInProcess(['__complete', 'accounts'], { env: { LEDGERCTL_CONFIG_DIR: store } })).toEqual({ code: 0, stdout: 'savings\nshop\n', stderr: '' });
    expect((await runInProcess(['__complete', 'assets'], { env: { LEDGERCTL_CONFIG_DIR: store, LEDGER_PROFILE: 'staging' } })).stdout).toBe('BTC\n');
    expect((await runInProcess(['__complete', 'assets', 'nosuch'], { env: { LEDGERCTL_CONFIG_DIR: store } })).stdout).toBe('');
    expect(await runInProcess(['__complete', 'bogus'], { env: { LEDGERCTL_CONFIG_DIR: store } })).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});
