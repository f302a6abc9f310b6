/**
 * The man pages and shell completion stay in step with the command trees, and the pages render
 * cleanly with `man -l`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { completionScript } from '../../cli/completion.js';
import { renderManPage } from '../../cli/manpage.js';
import { buildProgram, version } from '../../cli/program.js';
import { groups, leaves, longOptions } from '../../cli/tree.js';
import { repoRoot } from './support/daemon.js';
import { fakeIo } from './support/io.js';
import { configDir } from './support/ledgerctl.js';

const program = buildProgram(fakeIo());
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
    for (const code of ['0 Success', '1 Refused by the service', '2 Usage error', '3 The service cannot be reached', '4 Not signed in']) expect(flat).toContain(code);
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
    expect(commands).toEqual(['init', 'serve', 'restore', 'check']);
    for (const command of ['', ...commands]) {
      const options = [...(command === '' ? help() : help(command)).matchAll(/(--[a-z-]+)/g)].map((m) => m[1]!);
      expect(options.length).toBeGreaterThan(0);
      for (const option of options) expect(flat).toContain(option);
    }
    for (const variable of readFileSync(join(repoRoot, 'daemon', 'config.ts'), 'utf8').matchAll(/env\.(LEDGERD_[A-Z_]+)/g)) expect(flat).toContain(variable[1]!);
  });
});

describe('shell completion', () => {
  const script = join(configDir(), 'ledgerctl.bash');
  writeFileSync(script, completionScript(program, 'bash'));

  /** What bash completes after `words` (the last one being typed). */
  function complete(...words: string[]): string[] {
    const line = ['ledgerctl', ...words].map((w) => `'${w}'`).join(' ');
    const out = execFileSync('bash', ['-c', `source '${script}'; COMP_WORDS=(${line}); COMP_CWORD=${words.length}; _ledgerctl; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
    return out.split('\n').filter((w) => w !== '');
  }

  it('completes nouns, verbs and every command\'s options in bash', () => {
    expect(complete('tr')).toEqual(['transfers', 'trial-balance']);
    for (const group of groups(program)) expect(complete(group.name, '')).toEqual(group.verbs);
    for (const { path, command } of leaves(program)) {
      if (path[0] === 'help') continue;
      expect(complete(...path, '--json', '--')).toEqual(expect.arrayContaining(longOptions(program, command)));
    }
    expect(complete('--url', 'http://x', 'transfers', 'create', '--from', 'did:ledger:acct:a', '--am')).toEqual(['--amount']);
  });

  const hasZsh = spawnSync('zsh', ['-c', 'true']).status === 0;
  it.skipIf(!hasZsh)('completes verbs and options in zsh (compadd stubbed to print what it is given)', () => {
    const zshScript = join(configDir(), '_ledgerctl');
    writeFileSync(zshScript, completionScript(program, 'zsh'));
    const complete = (...words: string[]) =>
      execFileSync('zsh', ['-c', `compdef() { :; }; compadd() { print -l -- \${(P)2}; }; source '${zshScript}'; words=(ledgerctl ${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length + 1}; _ledgerctl`], { encoding: 'utf8' })
        .split('\n')
        .filter((w) => w !== '');
    expect(complete('reservations', '')).toEqual(['create', 'capture', 'release']);
    expect(complete('--json', 'operations', 'wait', 'op_1', '--')).toEqual(expect.arrayContaining(['--timeout-ms', '--url', '--json']));
  });

  it('is printed by `ledgerctl completion`, the zsh one sharing the same word lists', () => {
    const bash = completionScript(program, 'bash');
    const zsh = completionScript(program, 'zsh');
    expect(zsh.startsWith('#compdef ledgerctl\n')).toBe(true);
    const words = (s: string) => s.slice(s.indexOf('_ledgerctl_words() {'), s.indexOf('\n}\n'));
    expect(words(zsh)).toBe(words(bash));
    expect(zsh).toContain('compdef _ledgerctl ledgerctl');
    expect(zsh).not.toMatch(/\blocal path\b/);
  });
});
