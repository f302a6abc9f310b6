/**
 * Issue 25 item 10: a call of the built ledgerctl loads only what it runs. Every module the process
 * loads is listed by a module hook; `--version` loads no command, a noun's verb loads that noun's
 * modules only, and neither loads undici, conf (ajv), Ink or React. What this buys in time is
 * measured by bench/cli-start (docs/performance.md), not here.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, repoRoot } from './support/daemon.js';
import { configDir, ledgerctl } from './support/ledgerctl.js';

/** The modules a ledgerctl call loads (file URLs made relative to the repository, and node: builtins), with its result. */
async function loadedBy(args: readonly string[], env: Record<string, string> = {}) {
  const dir = configDir();
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(hooks, 'export async function load(url, context, next) { process._rawDebug(`loaded ${url}`); return next(url, context); }\n');
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${hooks}`)});\n`);
  const run = await ledgerctl(args, { NODE_OPTIONS: `--import=${register}`, LEDGERCTL_CONFIG_DIR: dir, ...env });
  const modules = [...run.stderr.matchAll(/^loaded (\S+)$/gm)].map((m) => m[1]!.replace(`file://${repoRoot}/`, ''));
  return { run, modules };
}

const packagesOf = (modules: readonly string[]) => [...new Set(modules.flatMap((m) => /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(m)?.[1] ?? []))].sort();
const commandModules = (modules: readonly string[]) => modules.filter((m) => m.startsWith('dist/cli/commands/'));

describe('what a ledgerctl call loads', () => {
  it('--version loads no command and no package but commander', async () => {
    const { run, modules } = await loadedBy(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('0.1.0\n');
    expect(modules).toContain('dist/cli/program.js');
    expect(commandModules(modules)).toEqual([]);
    expect(packagesOf(modules)).toEqual(['commander']);
    // Nor Node's HTTP: the first request loads it.
    expect(modules).not.toContain('node:http');
  });

  it("a noun's verb loads that noun's commands only, with Node's own HTTP (no undici, conf, Ink or React)", async () => {
    // A closed port: the call goes as far as its request (exit 3), so the client and its transport are loaded.
    const { run, modules } = await loadedBy(['assets', 'list', '--url', `http://127.0.0.1:${await freePort()}`], { LEDGER_TOKEN: 'ledger_ak_x' });
    expect(run.code, run.stderr).toBe(3);
    expect(modules).toContain('dist/cli/transport.js');
    expect(modules).toContain('node:http');
    expect(modules).not.toContain('node:https');
    expect(commandModules(modules).length).toBeGreaterThan(0);
    expect(commandModules(modules).filter((m) => !m.startsWith('dist/cli/commands/assets/'))).toEqual([]);
    expect(packagesOf(modules)).toEqual(['commander']);
  });

  it('a read verb of a noun that also submits and verifies loads neither the event stream nor the proof checker', async () => {
    const { run, modules } = await loadedBy(['accounts', 'balance', 'did:ledger:acct:x', '--url', `http://127.0.0.1:${await freePort()}`], { LEDGER_TOKEN: 'ledger_ak_x' });
    expect(run.code, run.stderr).toBe(3);
    expect(modules).toContain('dist/cli/commands/accounts/balance.js');
    // Loaded by the calls that wait for a decision (or retry a command), by verify-liabilities, and to ask before a reclaim.
    for (const module of ['dist/cli/events.js', 'dist/cli/sse.js', 'dist/src/checkpoints/verify-proofs.js', 'dist/cli/verifiable.js', 'node:readline/promises', 'node:fs/promises', 'node:timers/promises']) expect(modules).not.toContain(module);
    // Amounts in major units without the kernel's table of bounds; help's examples only for help.
    expect(modules).toContain('dist/src/major-units.js');
    expect(modules).not.toContain('dist/src/constants.js');
    expect(modules).not.toContain('dist/cli/examples.js');
  });

  it('help, asked for in any of its forms, still shows the examples', async () => {
    for (const args of [['accounts', 'balance', '--help'], ['help', 'accounts', 'balance'], ['accounts', 'help', 'balance']]) {
      const { run, modules } = await loadedBy(args);
      expect(run.code, args.join(' ')).toBe(0);
      expect(run.stdout).toContain('Examples:\n  ledgerctl accounts balance ');
      expect(modules).toContain('dist/cli/examples.js');
    }
  });

  it("finds the noun past the global options and their values, even a value that names another noun", async () => {
    const { run, modules } = await loadedBy(['-o', 'json', '--profile', 'accounts', 'assets', 'list']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no profile named accounts');
    expect(commandModules(modules).filter((m) => !m.startsWith('dist/cli/commands/assets/'))).toEqual([]);
  });

  it('reads the token from a saved profile without loading a package for it', async () => {
    const dir = configDir();
    const port = await freePort();
    const add = await ledgerctl(['profile', 'add', 'ops', '--url', `http://127.0.0.1:${port}`, '--token', 'ledger_ak_x', '--use'], { LEDGERCTL_CONFIG_DIR: dir });
    expect(add.code, add.stderr).toBe(0);
    const { run, modules } = await loadedBy(['assets', 'list'], { LEDGERCTL_CONFIG_DIR: dir });
    expect(run.stderr).toContain(`cannot reach http://127.0.0.1:${port}`);
    expect(packagesOf(modules)).toEqual(['commander']);
  });
});
