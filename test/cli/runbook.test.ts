/**
 * The README's runbook, from an empty data dir to an identity, accounts, an issuance, a transfer,
 * a grant, a reclaim into owned custody and a trial balance: every line of its `sh` block run in order in one bash, with the
 * built `ledgerd` and `ledgerctl`, on a free port.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, repoRoot } from './support/daemon.js';
import { configDir } from './support/ledgerctl.js';

/** Some thirty ledgerctl and ledgerd processes, on a shared machine; the test's own bound is above it. */
const runTimeoutMs = 100_000;
const testTimeoutMs = runTimeoutMs + 20_000;

/** The lines of the first `sh` block under the README's "## Runbook" heading. */
export function runbookLines(readme: string): string[] {
  const section = readme.slice(readme.indexOf('\n## Runbook'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (block === null) throw new Error('README.md has no ```sh block under "## Runbook"');
  return block[1]!.split('\n').filter((line) => line.trim() !== '');
}

/**
 * Runs the lines in one bash (`set -euo pipefail`, traced) in `work`, whose bin/ holds the built
 * commands as the repository's does, on `port`; then stops the daemon the runbook started.
 */
async function runInBash(lines: readonly string[], work: string, port: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = ['set -euo pipefail', 'set -x', ...lines.map((l) => l.replaceAll('8470', String(port))), 'kill -TERM $!', 'wait $!'].join('\n');
  // Its own process group, so a run out of time takes the daemon it started down with it.
  const child = spawn('bash', ['-c', script], {
    detached: true,
    cwd: work,
    env: { PATH: process.env.PATH, HOME: work, LEDGERCTL_CONFIG_DIR: join(work, 'config') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), runTimeoutMs);
  const code = await new Promise<number | null>((done) => child.once('close', done));
  clearTimeout(timer);
  // A line that failed stopped the script before it stopped its daemon: stop what is left of the group.
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    // Nothing left.
  }
  return { code, stdout, stderr };
}

/** The JSON document the last command printed (the trial balance). */
const lastJson = (stdout: string) => JSON.parse(stdout.slice(stdout.lastIndexOf('\n{') + 1));

describe("the README's runbook", () => {
  it('runs every line from an empty data dir to a balanced trial balance', { timeout: testTimeoutMs }, async () => {
    const lines = runbookLines(readFileSync(join(repoRoot, 'README.md'), 'utf8'));
    expect(lines.some((l) => l.includes('identities create'))).toBe(true);
    const work = configDir();
    mkdirSync(join(work, 'bin'));
    for (const name of ['ledgerd', 'ledgerctl']) symlinkSync(join(repoRoot, 'bin', name), join(work, 'bin', name));
    const port = await freePort();

    const run = await runInBash(lines, work, port);
    expect(run.stderr).not.toMatch(/^(ledgerctl: |ERR-)/m);
    expect(run.code).toBe(0);
    // bash traces each line as it runs it: every line ran, and the values it captured are real.
    expect(run.stderr).toMatch(/^\+ ALICE=did:ledger:id:\S+$/m);
    expect(run.stderr).toMatch(/^\+ BOB_USD=did:ledger:acct:\S+$/m);
    expect(run.stderr).toMatch(/^\+ ledgerctl trial-balance$/m);
    // The operator's listings ran and saw the book: both accounts opened (one line each with --all), Alice's transfer, Bob's grant.
    expect(run.stderr).toMatch(/^\+ ledgerctl accounts list --all$/m);
    const aliceUsd = /^\+ ALICE_USD=(\S+)$/m.exec(run.stderr)![1]!;
    expect(run.stdout).toContain(`{"account":"${aliceUsd}",`);
    expect(run.stdout).toMatch(/"command": "transfer",\s+"principal": "did:ledger:id:/);
    expect(run.stdout).toMatch(/"state": "live"/);
    // Alice's account was reclaimed: its custody view says owned, at epoch 1.
    expect(run.stdout).toMatch(/"custody": "owned",\s+"epoch": 1,/);
    const trialBalance = lastJson(run.stdout);
    expect(trialBalance.unbalanced).toEqual([]);
    const usd = trialBalance.rows.find((r: { asset: string }) => r.asset === 'USD');
    // The treasury's issued value is the debits, what customers hold the credits: equal, the book balanced.
    expect(usd).toEqual({ asset: 'USD', openings: '0', layers: { available: '0', reserved: '0', encumbered: '0' }, debits: usd.credits, credits: expect.stringMatching(/^[1-9]\d*$/) });
  });

  it('writes only files git ignores when run in a clone (the data dir holds the API keys)', () => {
    const lines = runbookLines(readFileSync(join(repoRoot, 'README.md'), 'utf8'));
    const dataDirs = [...new Set(lines.flatMap((l) => [...l.matchAll(/--data-dir (\S+)/g)].map((m) => m[1]!)))];
    const logs = lines.flatMap((l) => [...l.matchAll(/> (\S+\.log)/g)].map((m) => m[1]!));
    expect(dataDirs.length).toBeGreaterThan(0);
    for (const path of [...dataDirs.map((d) => join(d, 'operator.key')), ...logs]) {
      expect(spawnSync('git', ['check-ignore', '--quiet', '--no-index', path], { cwd: repoRoot }).status, path).toBe(0);
    }
  });
});
