import type { Command } from 'commander';
import type { TrialBalance, Whoami } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { metricsBytesMax } from '../../dashboard/metrics.js';
import { readLayer } from '../../dashboard/layer.js';
import { readTreasuries } from '../../dashboard/treasuries.js';
import { UsageError } from '../../errors.js';
import { followEvents } from '../../events.js';
import { isTerminal } from '../../io.js';
import { renderLiveOnTerminal } from '../../live.js';
import { Money } from '../../money.js';
import { integer } from '../../parse.js';

export interface DashboardOptions {
  after?: string;
  refreshMs?: string;
}

const refreshMsMin = 100;
const refreshMsMax = 60_000;

export function buildDashboard(parent: Command, make: MakeContext): Command {
  return parent
    .command('dashboard')
    .description("a live view of the book: trial balance and treasuries, recent operations (scroll, filter, open), decisions per second, pending reservations, the settlement layer, ledgerd's metrics")
    .option('--after <seq>', 'replay events after this sequence number first (0: all retained)')
    .option('--refresh-ms <ms>', 'how often the trial balance is read', '1000')
    .action(action(make, runDashboard));
}

export async function runDashboard(ctx: Context, options: DashboardOptions): Promise<void> {
  if (!isTerminal(ctx.io.stdout) || !isTerminal(ctx.io.stdin)) throw new UsageError('the dashboard needs a terminal; for scripts use: ledgerctl events tail --json');
  const after = options.after === undefined ? null : integer('--after', options.after, 0, Number.MAX_SAFE_INTEGER);
  const refreshMs = integer('--refresh-ms', options.refreshMs ?? '1000', refreshMsMin, refreshMsMax);
  // Polls for as long as it runs: each request is bounded by --timeout-ms, not the whole.
  const client = ctx.client().withoutDeadline();
  // Amounts in major units, the registry read again while it lacks one (the service down at start, an asset registered since).
  const amount = Money.following(client);
  let principal: string | undefined;
  const sources = {
    events: (signal: AbortSignal) => followEvents(client, { after, signal, reconnect: true }),
    trialBalance: () => client.get<TrialBalance>('/v1/trial-balance'),
    treasuries: async () => readTreasuries(client, (principal ??= (await client.get<Whoami>('/v1/whoami')).principal)),
    layer: () => readLayer(client),
    metrics: () => client.getText('/metrics', metricsBytesMax),
    now: () => Date.now(),
  };
  renderLiveOnTerminal();
  const [{ render }, { createElement }, { DashboardApp }] = await Promise.all([import('ink'), import('react'), import('../../views/dashboard-app.js')]);
  const app = render(createElement(DashboardApp, { sources, url: client.baseUrl.origin, refreshMs, amount }), {
    stdout: ctx.io.stdout as NodeJS.WriteStream,
    stdin: ctx.io.stdin as NodeJS.ReadStream,
    stderr: ctx.io.stderr as NodeJS.WriteStream,
    exitOnCtrlC: true,
    patchConsole: false,
  });
  await app.waitUntilExit();
}
