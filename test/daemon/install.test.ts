/**
 * Install (issue 14): `npm pack` makes a package that works. It is packed (from the
 * built dist/; `prepack` builds it when packing by hand), installed with `npm install
 * -g --prefix` into a temp prefix, and the installed `ledgerd` and `ledgerctl` are run
 * against each other; `man` finds both pages under the prefix, and the systemd unit,
 * pointed at the installed ledgerd, passes `systemd-analyze verify` with its man page.
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, repoRoot, tempDir } from './support.js';

const run = promisify(execFile);
/** The environment without npm's own variables (`npm test` sets them; they would steer the inner npm). */
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
const dir = tempDir('ledger-install-');
const prefix = join(dir, 'prefix');
const installed = (name: string) => join(prefix, 'bin', name);

beforeAll(async () => {
  // --ignore-scripts: the suite built dist/ already, and other test files run from it meanwhile (a rebuild would rewrite it under them).
  await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: repoRoot, env: cleanEnv });
  const tarball = readdirSync(dir).find((name) => /^ledger-.*\.tgz$/.test(name));
  if (tarball === undefined) throw new Error('npm pack made no tarball');
  await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', join(dir, tarball)], { cwd: dir, env: cleanEnv, timeout: 120_000 });
}, 180_000);
afterAll(() => removeDir(dir));

describe('the installed package', () => {
  it('builds when packed by hand', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
    expect(pkg.scripts.prepack).toBe('npm run build');
  });

  it('runs ledgerd, and ledgerctl against it', async () => {
    const data = join(dir, 'data');
    const init = await run(installed('ledgerd'), ['init', '--data-dir', data], { env: cleanEnv });
    expect(init.stdout).toContain(`operator API key: ${join(data, 'operator.key')}`);
    const daemon = spawn(installed('ledgerd'), ['serve', '--data-dir', data, '--listen', '127.0.0.1:0', '--log-level', 'warn'], { env: cleanEnv, stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => daemon.once('exit', resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: daemon.stdout! }).on('line', (line) => {
          const m = /^ledgerd listening on (http:\/\/\S+)$/.exec(line);
          if (m) resolve(m[1]!);
        });
        void exited.then((code) => reject(new Error(`the installed ledgerd exited with ${code}`)));
      });
      const token = readFileSync(join(data, 'operator.key'), 'utf8').trim();
      const tb = await run(installed('ledgerctl'), ['trial-balance', '--json'], { env: { ...cleanEnv, LEDGER_URL: url, LEDGER_TOKEN: token, XDG_CONFIG_HOME: dir } });
      const body = JSON.parse(tb.stdout);
      expect(body.rows.map((row: { asset: string }) => row.asset).sort()).toEqual(['BTC', 'EUR', 'USD', 'USDC']);
      expect(body.unbalanced).toEqual([]);
    } finally {
      daemon.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  it('puts both man pages where man finds them', async () => {
    const env = { ...cleanEnv, MANPATH: join(prefix, 'share/man') };
    expect((await run('man', ['-w', '8', 'ledgerd'], { env })).stdout.trim()).toMatch(new RegExp(`^${prefix}/.*ledgerd\\.8`));
    expect((await run('man', ['-w', '1', 'ledgerctl'], { env })).stdout.trim()).toMatch(new RegExp(`^${prefix}/.*ledgerctl\\.1`));
  });

  it('has a systemd unit that runs the installed ledgerd and passes systemd-analyze verify with its man page', async () => {
    const unitText = readFileSync(join(repoRoot, 'daemon/ledgerd.service'), 'utf8');
    // No interpreter path: systemd's own search path finds ledgerd, and its shebang finds node.
    expect(unitText).toMatch(/^ExecStart=ledgerd serve$/m);
    for (const line of ['DynamicUser=yes', 'StateDirectory=ledgerd', 'NoNewPrivileges=yes', 'ProtectSystem=strict', 'Restart=on-failure', 'KillSignal=SIGTERM', 'Documentation=man:ledgerd(8)']) {
      expect(unitText).toContain(line);
    }
    // verify checks the command exists: here it is the temp prefix's (on a host, /usr/local/bin/ledgerd or /usr/bin/ledgerd).
    const unit = join(dir, 'ledgerd.service');
    writeFileSync(unit, unitText.replace(/^ExecStart=ledgerd /m, `ExecStart=${installed('ledgerd')} `));
    await run('systemd-analyze', ['verify', '--man=yes', unit], { env: { ...cleanEnv, MANPATH: join(prefix, 'share/man') } });
  });
});
