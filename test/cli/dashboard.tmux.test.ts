/**
 * `ledgerctl dashboard` in a real terminal (tmux) against a real `ledgerd` under load: it shows
 * the book, switches panes on keys, survives the daemon restarting, and quits on q with exit 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accounts, testGenesis } from './support/book.js';
import { type Daemon, repoRoot, startDaemon } from './support/daemon.js';
import { configDir } from './support/ledgerctl.js';
import { type Load, startLoad } from './support/load.js';
import { Tmux } from './support/tmux.js';

let daemon: Daemon;
let load: Load;
const tmux = new Tmux();

beforeAll(async () => {
  daemon = await startDaemon({ genesis: testGenesis });
  load = startLoad(daemon.url, daemon.operatorKey, { a: accounts.alice, b: accounts.bob, asset: 'USD' });
});
afterAll(async () => {
  tmux.kill();
  await load?.stop();
  await daemon?.stop();
});

const eventSeq = (screen: string) => Number(/at event (\d+)/.exec(screen)?.[1] ?? -1);

describe('ledgerctl dashboard in tmux', () => {
  it('follows the book live, switches panes, reconnects after a restart and quits', async () => {
    const env = `LEDGER_URL=${daemon.url} LEDGER_TOKEN=${daemon.operatorKey} LEDGERCTL_CONFIG_DIR=${configDir()}`;
    tmux.start(`cd ${repoRoot} && env ${env} node bin/ledgerctl dashboard --refresh-ms 500; echo ledgerctl-exit=$?; sleep 600`);

    await tmux.waitFor((s) => /● live at event \d+/.test(s) && /USD\s+0\s+yes/.test(s), 'live trial balance');

    tmux.sendKeys('2');
    await tmux.waitFor((s) => /op_\w+\s+transfer\s+Completed/.test(s), 'operations pane');

    tmux.sendKeys('3');
    const rate = await tmux.waitFor((s) => /peak [1-9]\d*\/s/.test(s), 'decisions per second');
    expect(rate).toContain('mean');

    tmux.sendKeys('Tab');
    await tmux.waitFor((s) => /\d+ held/.test(s) && /RESERVATION/.test(s), 'pending reservations pane');

    const before = eventSeq(tmux.screen());
    await daemon.restart();
    const after = await tmux.waitFor((s) => /resumed 1×/.test(s) && eventSeq(s) > before, 'reconnection and new events', 30_000);
    expect(after).toContain('● live');

    tmux.sendKeys('1');
    await tmux.waitFor((s) => /balanced \(\d+ accounts/.test(s), 'trial balance pane again');
    tmux.sendKeys('q');
    await tmux.waitFor((s) => s.includes('ledgerctl-exit=0'), 'exit 0 after q');
    expect(load.submitted()).toBeGreaterThan(50);
  });
});
