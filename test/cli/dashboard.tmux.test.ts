/**
 * `ledgerctl dashboard` in a real terminal (tmux) against a real `ledgerd` under load: it shows
 * the book, switches panes on keys, scrolls, filters and opens operations, survives the daemon
 * restarting, and quits on q with exit 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accounts, testGenesis } from './support/book.js';
import { type Daemon, repoRoot, startDaemon } from './support/daemon.js';
import { configDir } from './support/ledgerctl.js';
import { type Load, startLoad } from './support/load.js';
import { Tmux } from './support/tmux.js';
import { chromeLines } from '../../cli/views/dashboard.js';

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

/** Operation rows on the screen (each starts with its age). */
const rowsShown = (screen: string) => screen.split('\n').filter((l) => /^\s*\d+[smhd] ago\s+op_/.test(l)).length;

const eventSeq = (screen: string) => Number(/at event (\d+)/.exec(screen)?.[1] ?? -1);

describe('ledgerctl dashboard in tmux', () => {
  it('follows the book live, switches panes, reconnects after a restart and quits', async () => {
    const env = `LEDGER_URL=${daemon.url} LEDGER_TOKEN=${daemon.operatorKey} LEDGERCTL_CONFIG_DIR=${configDir()}`;
    tmux.start(`cd ${repoRoot} && env ${env} node bin/ledgerctl dashboard --refresh-ms 500; echo ledgerctl-exit=$?; sleep 600`);

    const book = await tmux.waitFor((s) => /● live at event \d+/.test(s) && /USD\s+1000\.00 USD\s+\d+\.\d\d USD\s+\d+\.\d\d USD\s+0\.00 USD\s+0\.00 USD\s+yes/.test(s), 'live trial balance with the treasury');
    // The status line reads ledgerd's /metrics.
    expect(book).toMatch(/^backlog \d+ · decision p50 .+ · rejected .+ · ledgerd \d+\.\d+\.\d+ · up .+$/m);

    tmux.sendKeys('2');
    // The pane fills the terminal: its height less the dashboard's other lines.
    const full = await tmux.waitFor((s) => rowsShown(s) === tmux.rows - chromeLines && / of 200\b/.test(s), 'a full operations pane', 30_000);
    expect(full).toMatch(/\d+s ago\s+op_\w+\s+transfer\s+Completed/);
    expect(full).toMatch(/1-\d+ of 200/);

    tmux.sendKeys('PageDown');
    tmux.sendKeys('PageDown');
    tmux.sendKeys('k');
    await tmux.waitFor((s) => /\b(\d+)-\d+ of 200/.exec(s)?.[1] !== '1', 'scrolled down');

    tmux.sendKeys('/');
    tmux.sendKeys('-l', 'reserve');
    const typing = await tmux.waitFor((s) => s.includes('/reserve▏') && /filtered from 200/.test(s), 'the filter being typed');
    expect(typing).not.toMatch(/op_\w+\s+transfer/);
    tmux.sendKeys('Enter');
    await tmux.waitFor((s) => s.includes('filter: reserve (Esc clears)'), 'the filter kept');
    tmux.sendKeys('Enter');
    const opened = await tmux.waitFor((s) => /operation op_\w+/.test(s) && /command\s+reserve/.test(s), 'an operation opened');
    expect(opened).toMatch(/client_key\s+\S+/);
    tmux.sendKeys('Escape');
    await tmux.waitFor((s) => s.includes('filter: reserve (Esc clears)') && !/command\s+reserve/.test(s), 'back to the list');
    tmux.sendKeys('Escape');
    await tmux.waitFor((s) => !s.includes('filter:') && /op_\w+\s+transfer/.test(s), 'the filter cleared');

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

  it('started while ledgerd is down, shows amounts in major units once it is up', async () => {
    const env = `LEDGER_URL=${daemon.url} LEDGER_TOKEN=${daemon.operatorKey} LEDGERCTL_CONFIG_DIR=${configDir()}`;
    const late = new Tmux();
    try {
      await daemon.restart(async () => {
        late.start(`cd ${repoRoot} && env ${env} node bin/ledgerctl dashboard --refresh-ms 500; sleep 600`);
        // Up and failing to read anything, the asset registry included.
        await late.waitFor((s) => /USD|unavailable|ECONNREFUSED|reconnecting|…/i.test(s), 'the dashboard without its service');
      });
      await late.waitFor((s) => /USD\s+1000\.00 USD\s+\d+\.\d\d USD/.test(s), 'the trial balance in major units', 30_000);
      expect(late.screen()).not.toMatch(/USD \(minor units\)|\b100000\b/);
    } finally {
      late.kill();
    }
  });
});
