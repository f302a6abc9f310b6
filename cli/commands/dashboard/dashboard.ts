import type { Command } from 'commander';
import type { TrialBalance, Whoami } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { metricsBytesMax } from '../../dashboard/metrics.js';
import { readLayer } from '../../dashboard/layer.js';
import { readProposals } from '../../dashboard/proposals.js';
import { readTreasuries } from '../../dashboard/treasuries.js';
import { UsageError } from '../../errors.js';
import { followEvents, latestEventSeq } from '../../events.js';
import { isTerminal } from '../../io.js';
import { renderLiveOnTerminal } from '../../live.js';
import { Money } from '../../money.js';
import { integer } from '../../parse.js';

export interface DashboardOptions {
  after?: string;
  recent?: string;
  refreshMs?: string;
}

/** Events replayed at start by default: the recent past, so the panes open full (an operation is two or three events). */
const recentEventsDefault = 1000;
/** The most `--recent` replays: ledgerd keeps up to a million events, and each is held in view until the panes drop it. */
const recentEventsMax = 100_000;

const refreshMsMin = 100;
const refreshMsMax = 60_000;

export function buildDashboard(parent: Command, make: MakeContext): Command {
  return parent
    .command('dashboard')
    .description("a live view of the book: trial balance and treasuries, recent operations (scroll, filter, open), decisions per second, pending reservations, the settlement layer, ledgerd's metrics")
    .option('--after <seq>', 'replay events after this sequence number first (0: all retained)')
    .option('--recent <events>', `without --after: replay this many of the latest events first, so the panes open on the recent past (0: none; at most ${recentEventsMax})`, String(recentEventsDefault))
    .option('--refresh-ms <ms>', 'how often the trial balance is read', '1000')
    .action(action(make, runDashboard));
}

export async function runDashboard(ctx: Context, options: DashboardOptions): Promise<void> {
  if (!isTerminal(ctx.io.stdout) || !isTerminal(ctx.io.stdin)) throw new UsageError('the dashboard needs a terminal; for scripts use: ledgerctl events tail --json');
  const given = options.after === undefined ? null : integer('--after', options.after, 0, Number.MAX_SAFE_INTEGER);
  const recent = integer('--recent', options.recent ?? String(recentEventsDefault), 0, recentEventsMax);
  const refreshMs = integer('--refresh-ms', options.refreshMs ?? '1000', refreshMsMin, refreshMsMax);
  // Polls for as long as it runs: each request is bounded by --timeout-ms, not the whole.
  const client = ctx.client().withoutDeadline();
  // Amounts in major units, the registry read again while it lacks one (the service down at start, an asset registered since).
  const amount = Money.following(client);
  // The recent past: the latest position less --recent (ledgerd down at start: live events only, from when it is back).
  const latest = given !== null || recent === 0 ? null : await latestEventSeq(client).catch(() => null);
  const after = given ?? (latest === null ? null : Math.max(0, latest - recent));
  let principal: string | undefined;
  const sources = {
    events: (signal: AbortSignal) => followEvents(client, { after, signal, reconnect: true }),
    trialBalance: () => client.get<TrialBalance>('/v1/trial-balance'),
    treasuries: async () => readTreasuries(client, (principal ??= (await client.get<Whoami>('/v1/whoami')).principal)),
    layer: () => readLayer(client),
    proposals: () => readProposals(client),
    metrics: () => client.getText('/metrics', metricsBytesMax),
    now: () => Date.now(),
  };
  renderLiveOnTerminal();
  const [{ render }, { createElement }, { DashboardApp }] = await Promise.all([import('ink'), import('react'), import('../../views/dashboard-app.js')]);
  const app = render(createElement(DashboardApp, { sources, url: client.baseUrl.origin, refreshMs, liveAfterSeq: latest ?? given, amount }), {
    stdout: ctx.io.stdout as NodeJS.WriteStream,
    stdin: ctx.io.stdin as NodeJS.ReadStream,
    stderr: ctx.io.stderr as NodeJS.WriteStream,
    exitOnCtrlC: true,
    patchConsole: false,
  });
  await app.waitUntilExit();
}
