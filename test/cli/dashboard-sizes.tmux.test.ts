/**
 * `ledgerctl dashboard` at the sizes operators leave it open in: 80x24 and 120x40 (tmux), against a
 * real `ledgerd` whose operations were made before the dashboard started. It opens on them (the
 * recent past), every pane fits the width (nothing wrapped or cut), holds show payer, amount and
 * expiry, the layer pane its height, lag and pending instructions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accounts, testGenesis } from './support/book.js';
import { type Daemon, repoRoot, startDaemon } from './support/daemon.js';
import { configDir, ledgerctl } from './support/ledgerctl.js';
import { Tmux } from './support/tmux.js';

let daemon: Daemon;
let env: Record<string, string>;
const sessions: Tmux[] = [];

beforeAll(async () => {
  daemon = await startDaemon({ genesis: testGenesis });
  env = { LEDGER_URL: daemon.url, LEDGER_TOKEN: daemon.operatorKey, LEDGERCTL_CONFIG_DIR: configDir() };
  for (let i = 1; i <= 3; i++) expect((await ledgerctl(['transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', String(100 * i), '--asset', 'USD'], env)).code).toBe(0);
  expect((await ledgerctl(['reservations', 'create', '--payer', accounts.alice, '--amount', '1234', '--asset', 'USD'], env)).code).toBe(0);
  // An open proposal for the proposals pane (a second member would approve it).
  const proposed = await ledgerctl(['accounts', 'freeze', accounts.bob, '--propose', '--justification', 'fraud review 7', '--json'], env);
  expect(proposed.code, proposed.stderr).toBe(0);
});
afterAll(async () => {
  for (const tmux of sessions) tmux.kill();
  await daemon?.stop();
});

function open(columns: number, rows: number): Tmux {
  const tmux = new Tmux(columns, rows);
  sessions.push(tmux);
  const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ');
  tmux.start(`cd ${repoRoot} && env ${vars} node bin/ledgerctl dashboard --refresh-ms 500; echo ledgerctl-exit=$?; sleep 600`);
  return tmux;
}

/** No line was cut to fit (Ink ends a cut line with an ellipsis), and none is past the width. */
function fits(screen: string, columns: number): void {
  for (const line of screen.split('\n')) {
    expect(line.length, line).toBeLessThanOrEqual(columns);
    expect(line, 'a line cut short').not.toMatch(/…$/);
  }
}

describe('ledgerctl dashboard at 80x24 and 120x40', () => {
  it('fits 80x24 in its narrow forms, opening on the operations made before it started', async () => {
    const tmux = open(80, 24);
    const balance = await tmux.waitFor((s) => /● live at event \d+/.test(s) && /^USD\s+1000\.00\s+/m.test(s), 'the live trial balance');
    expect(balance).toContain(' 1 Balance  2 Ops  3 Rate  4 Holds  5 Layer  6 Props');
    fits(balance, 80);

    tmux.sendKeys('2');
    const operations = await tmux.waitFor((s) => /AGE\s+OP\s+CMD\s+STATE\s+AMOUNT\s+FROM\s+TO/.test(s), 'the operations pane');
    // Made before the dashboard started: the recent past, replayed.
    expect(operations).toMatch(/ago\s+op_\w+…\w+\s+xfer\s+Done\s+3\.00 USD\s+alice\s+bob/);
    expect(operations).toMatch(/ago\s+op_\w+…\w+\s+reserve\s+Held\s+12\.34 USD\s+alice\s+\(held\)/);
    expect(operations).toMatch(/\b1-\d+ of \d+/);
    fits(operations, 80);

    tmux.sendKeys('4');
    const holds = await tmux.waitFor((s) => /RESERVATION\s+PAYER\s+AMOUNT\s+EXPIRES\s+HELD/.test(s), 'the holds pane');
    expect(holds).toMatch(/op_\w+…\w+\s+alice\s+12\.34 USD\s+in 6d 23h\s+\d+[sm] ago/);
    expect(holds).toContain('1 held');
    fits(holds, 80);

    tmux.sendKeys('5');
    const layer = await tmux.waitFor((s) => /height \d+ · final \d+ · book took in \d+ · lag \d+/.test(s), 'the layer pane');
    expect(layer).toMatch(/serving until \d\d:\d\d:\d\d · pending instructions 0/);
    fits(layer, 80);

    tmux.sendKeys('6');
    const proposals = await tmux.waitFor((s) => /PROPOSAL\s+BY\s+ACT\s+WHY\s+AGE/.test(s), 'the proposals pane');
    expect(proposals).toMatch(/…\w+\s+root\s+accounts\/\S+\s+fraud review 7\s+\d+[sm] ago/);
    expect(proposals).toContain('1 open');
    fits(proposals, 80);

    tmux.sendKeys('q');
    await tmux.waitFor((s) => s.includes('ledgerctl-exit=0'), 'exit 0 after q');
  }, 90_000);

  it('uses 120x40: full titles, references and commands, the hold deadline', async () => {
    const tmux = open(120, 40);
    const balance = await tmux.waitFor((s) => /● live at event \d+/.test(s) && /USD\s+1000\.00 USD\s+/.test(s), 'the live trial balance');
    expect(balance).toContain(' 1 Trial balance  2 Operations  3 Decisions/s  4 Pending reservations  5 Settlement layer  6 Proposals');
    expect(balance).toMatch(/view \d+: every figure read at journal position \d+/);
    fits(balance, 120);

    tmux.sendKeys('2');
    const operations = await tmux.waitFor((s) => /AGE\s+OPERATION\s+COMMAND\s+STATE\s+AMOUNT\s+FROM\s+TO\s+BY/.test(s), 'the operations pane');
    expect(operations).toMatch(/ago\s+op_[0-9a-f]+\s+transfer\s+Completed\s+2\.00 USD\s+alice\s+bob\s+operator/);
    fits(operations, 120);

    tmux.sendKeys('4');
    const holds = await tmux.waitFor((s) => /RESERVATION\s+PAYER\s+AMOUNT\s+EXPIRES\s+DEADLINE\s+HELD\s+BY/.test(s), 'the holds pane');
    expect(holds).toMatch(/op_[0-9a-f]+\s+alice\s+12\.34 USD\s+in 6d 23h\s+\d{4}-\d\d-\d\dT[\d:.]+Z/);
    fits(holds, 120);

    tmux.sendKeys('6');
    const proposals = await tmux.waitFor((s) => /PROPOSAL\s+BY\s+ACT\s+WHY\s+AGE/.test(s), 'the proposals pane');
    expect(proposals).toMatch(/[0-9a-f]+\s+root\s+accounts\/did:ledger:acct:\S+\s+fraud review 7\s+\d+[sm] ago/);
    expect(proposals).toContain('1 open · approve with ledgerctl ops proposals approve');
    fits(proposals, 120);

    tmux.sendKeys('q');
    await tmux.waitFor((s) => s.includes('ledgerctl-exit=0'), 'exit 0 after q');
  }, 90_000);
});
