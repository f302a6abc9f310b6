/**
 * `accounts reclaim` on a real terminal (tmux): it shows the recovery mechanisms the account
 * will keep and asks before acknowledging them; anything but yes sends nothing (exit 2), yes
 * reclaims the account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from './support/daemon.js';
import { configDir, ledgerctl } from './support/ledgerctl.js';
import { Tmux } from './support/tmux.js';
import { useBook } from './support/use-book.js';

const book = useBook();
const tmuxes: Tmux[] = [];
let env: Record<string, string> = {};

beforeAll(async () => {
  env = { LEDGERCTL_CONFIG_DIR: configDir() };
  const ok = async (...args: string[]) => {
    const r = await ledgerctl(args, env);
    expect(r.code, r.stderr).toBe(0);
    return r;
  };
  await ok('profile', 'add', 'identities', '--url', book.daemon.url, '--token', book.daemon.identitiesKey);
  const identity = (await ok('--profile', 'identities', 'identities', 'create', '--scheme', 'api-key', '--save-as', 'hana')).json().result.identity;
  await ok('--profile', 'hana', 'accounts', 'open', '--owner', identity, '--save-as', 'savings');
  await ok('--profile', 'hana', 'credentials', 'register', '--scheme', 'key');
});
afterAll(() => tmuxes.forEach((t) => t.kill()));

/** `ledgerctl --profile hana accounts reclaim savings` in a new tmux, up to its question. */
async function reclaimOnTerminal(): Promise<Tmux> {
  const tmux = new Tmux(160, 40);
  tmuxes.push(tmux);
  tmux.start(`cd ${repoRoot} && env LEDGERCTL_CONFIG_DIR=${env.LEDGERCTL_CONFIG_DIR} node bin/ledgerctl --profile hana accounts reclaim savings; echo ledgerctl-exit=$?; sleep 600`);
  const screen = await tmux.waitFor((s) => s.includes('Acknowledge them and reclaim? [y/N]'), 'the question');
  expect(screen).toMatch(/recovery_authority\s+did:ledger:id:identities\s+259200000 ms \(72\.0 h\)/);
  expect(screen).toMatch(/digest\s+[0-9a-f]{64}/);
  return tmux;
}

describe('accounts reclaim on a terminal', () => {
  it('sends nothing unless the mechanisms are acknowledged, and reclaims once they are', async () => {
    const declined = await reclaimOnTerminal();
    declined.sendKeys('n', 'Enter');
    expect(await declined.waitFor((s) => s.includes('ledgerctl-exit='), 'the exit')).toMatch(/not acknowledged: nothing was sent[\s\S]*ledgerctl-exit=2/);
    const custody = async () => (await ledgerctl(['--profile', 'hana', 'accounts', 'custody', 'savings'], env)).json();
    expect(await custody()).toMatchObject({ custody: 'delegated', epoch: 0 });

    const accepted = await reclaimOnTerminal();
    accepted.sendKeys('y', 'Enter');
    expect(await accepted.waitFor((s) => s.includes('ledgerctl-exit='), 'the exit')).toMatch(/Completed[\s\S]*ledgerctl-exit=0/);
    expect(await custody()).toMatchObject({ custody: 'owned', epoch: 1 });
  });
});
