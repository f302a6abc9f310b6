/**
 * The operator runbook, from an empty data dir to an identity, accounts, an issuance, a transfer,
 * a grant and a trial balance, run line by line in bash with the built `ledgerd` and `ledgerctl`
 * on PATH. The README gets this runbook once every route it uses is served; until then the lines
 * whose routes exist run here, and the rest waits (see `pending`).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, repoRoot } from './support/daemon.js';
import { configDir } from './support/ledgerctl.js';

/** Served now: the daemon's own routes. */
export const runbookServed = [
  'export LEDGER_URL=http://127.0.0.1:8470',
  'ledgerd init --data-dir ./book',
  'ledgerd serve --data-dir ./book --listen 127.0.0.1:8470 > ledgerd.log 2>&1 &',
  'ledgerctl profile add operator --url "$LEDGER_URL" --token "$(cat ./book/operator.key)" --use',
  'ledgerctl profile add identities --url "$LEDGER_URL" --token "$(cat ./book/identities.key)"',
  'until ledgerctl assets list > /dev/null 2>&1; do sleep 0.2; done',
  'TREASURY=$(ledgerctl aliases lookup --source ledger --name treasury:USD --field account)',
  'ledgerctl trial-balance',
];

/** Waiting for POST /v1/identities, /v1/ops/issuance-grants and /v1/grants (issue 4's routes). */
export const pending = [
  'ALICE=$(ledgerctl --profile identities identities create --scheme api-key --save-as alice --client-key create-alice --field result.identity)',
  'BOB=$(ledgerctl --profile identities identities create --scheme api-key --save-as bob --client-key create-bob --field result.identity)',
  'ALICE_USD=$(ledgerctl --profile identities accounts open --owner "$ALICE" --wait --field result.account)',
  'BOB_USD=$(ledgerctl --profile identities accounts open --owner "$BOB" --wait --field result.account)',
  'ledgerctl ops issuance-grant --principal did:ledger:id:operator --subject-account "$TREASURY" --ops transfer --per-operation 1000000 --justification "opening float" --wait',
  'ledgerctl transfers create --from "$TREASURY" --to "$ALICE_USD" --amount 50000 --asset USD --client-key issue-1 --wait',
  'ledgerctl --profile alice transfers create --from "$ALICE_USD" --to "$BOB_USD" --amount 1250 --asset USD --client-key pay-1 --wait',
  'ledgerctl --profile alice grants issue --principal "$BOB" --subject-account "$ALICE_USD" --ops transfer --per-operation 500 --wait',
  'ledgerctl trial-balance',
];

const runTimeoutMs = 60_000;

/** Runs the lines in one bash (`set -eu`, traced), in a fresh directory, on a free port; stops the daemon it started. */
async function runRunbook(lines: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const work = configDir();
  const bin = join(work, 'bin');
  mkdirSync(bin);
  for (const name of ['ledgerd', 'ledgerctl']) symlinkSync(join(repoRoot, 'bin', name), join(bin, name));
  const port = String(await freePort());
  const script = ['set -euo pipefail', 'set -x', ...lines.map((l) => l.replaceAll('8470', port)), 'kill -TERM $!', 'wait $!'].join('\n');
  const child = spawn('bash', ['-c', script], {
    cwd: work,
    env: { PATH: `${bin}:${process.env.PATH}`, HOME: work, LEDGERCTL_CONFIG_DIR: join(work, 'config') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), runTimeoutMs);
  const code = await new Promise<number | null>((done) => child.once('close', done));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

describe('the runbook', () => {
  it('runs every served line from an empty data dir to a trial balance', async () => {
    const r = await runRunbook(runbookServed);
    expect(r.stderr).not.toMatch(/^ledgerctl: |^ERR-/m);
    expect(r.code).toBe(0);
    // bash traced each line as it ran it (`+ ...`): every line ran.
    const traced = r.stderr.split('\n').filter((l) => l.startsWith('+ ') || l.startsWith('++ '));
    expect(traced.some((l) => l.includes('ledgerd init'))).toBe(true);
    expect(traced.some((l) => l.includes('ledgerctl trial-balance'))).toBe(true);
    expect(traced.some((l) => l.startsWith('+ TREASURY=did:ledger:acct:'))).toBe(true);
    expect(JSON.parse(r.stdout.slice(r.stdout.indexOf('{')))).toMatchObject({ unbalanced: [] });
  });

  it.todo(`runs the rest once POST /v1/identities, /v1/ops/issuance-grants and /v1/grants are served: ${pending.length} lines`);
});
