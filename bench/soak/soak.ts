/**
 * The soak: a real `ledgerd` on a temp data dir under mixed HTTP load, killed with
 * SIGKILL at random instants `kills` times and restarted on the same data dir; after
 * each restart the checks of checks.ts, and at the end every acknowledged command
 * once more and a clean SIGTERM. Shared by the bounded test (test/faults/soak.test.ts)
 * and the long run (`npm run soak -- --kills 1000`).
 */
import { type Daemon, client, removeDir, startDaemon, tempDir, writeBook } from '../../test/daemon/support.js';
import { percentile } from '../percentile.js';
import { BookChecker, type Tally } from './checks.js';
import { type SoakCommand, commandSource, seededRandom } from './commands.js';
import { Findings } from './findings.js';
import { startLoad } from './load.js';

export interface SoakOptions {
  readonly kills: number;
  /** Concurrent clients posting commands. */
  readonly clients: number;
  /** The kill comes at a uniformly random instant this long after the load starts. */
  readonly killAfterMinMs: number;
  readonly killAfterMaxMs: number;
  readonly customers: number;
  readonly fundingMinor: bigint;
  readonly seed: number;
  /** Progress lines (one per kill). */
  readonly log?: (line: string) => void;
}

export const defaultSoakOptions: Omit<SoakOptions, 'kills' | 'seed'> = {
  clients: 12,
  killAfterMinMs: 50,
  killAfterMaxMs: 600,
  customers: 6,
  fundingMinor: 10_000n,
};

export interface SoakReport {
  readonly kills: number;
  readonly sent: number;
  /** Commands whose acknowledgement (200/202) the client saw, or learned by repeating a lost reply. */
  readonly acknowledged: number;
  /** Commands whose reply a kill took (each repeated after the restart). */
  readonly unknown: number;
  readonly tally: Tally;
  readonly refused: number;
  readonly lost: number;
  readonly doubled: number;
  readonly otherProblems: number;
  /** The first problems found, in words. */
  readonly problems: readonly string[];
  /** From spawn to readiness line, for each restart after a kill. */
  readonly restartMs: readonly number[];
  readonly elapsedMs: number;
  /** The exit code of the final SIGTERM (0 expected). */
  readonly finalExitCode: number | null;
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const startedMs = Date.now();
  const random = seededRandom(options.seed);
  const findings = new Findings();
  const customers = Array.from({ length: options.customers }, (_, i) => `soak${i}`);
  const dataDir = tempDir('ledgerd-soak-');
  const keys = await writeBook(dataDir, Object.fromEntries(customers.map((name) => [name, options.fundingMinor])));
  const tokenOf = (customer: string) => keys.customers[customer]!;
  const source = commandSource(customers, options.fundingMinor, random, `${options.seed}-${startedMs}`);
  const checker = new BookChecker({ customers, tokenOf, findings, random, reserved: source.offerReservation });
  const restartMs: number[] = [];
  let daemon = await startDaemon({ dataDir });
  // The operator's client of the daemon now running (each incarnation listens on a new port).
  let api = client(daemon.url, keys.operator);
  let finalExitCode: number | null = null;
  try {
    for (let kill = 1; kill <= options.kills; kill++) {
      const fresh: SoakCommand[] = [];
      const sentBefore = source.all.length;
      const load = startLoad({ api, tokenOf, source, clients: options.clients, findings, acknowledged: (c) => fresh.push(c) });
      await new Promise((resolve) => setTimeout(resolve, options.killAfterMinMs + random() * (options.killAfterMaxMs - options.killAfterMinMs)));
      load.halt();
      await daemon.stop('SIGKILL');
      await load.finished;
      const unknown = source.all.slice(sentBefore).filter((c) => c.outcome === 'unknown');
      const restartedAtMs = Date.now();
      const spawnedAt = performance.now();
      daemon = await startDaemon({ dataDir });
      restartMs.push(performance.now() - spawnedAt);
      api = client(daemon.url, keys.operator);
      await explained(daemon, `the checks after kill ${kill}`, () => checker.afterRestart(api, unknown, fresh, restartedAtMs));
      options.log?.(`kill ${kill}: ${source.all.length - sentBefore} sent, ${fresh.length} acknowledged, ${unknown.length} unknown, restart ${restartMs.at(-1)!.toFixed(0)} ms, ${findings.count} problems so far`);
    }
    await explained(daemon, 'the final check', () => checker.everyAcknowledged(api, source.all));
  } finally {
    finalExitCode = await daemon.stop('SIGTERM');
    await removeDir(dataDir);
  }
  const count = (outcome: SoakCommand['outcome']) => source.all.filter((c) => c.outcome === outcome).length;
  return {
    kills: options.kills,
    sent: source.all.length,
    acknowledged: count('acknowledged'),
    unknown: checker.tally.unknownFound + checker.tally.unknownAbsent + count('unknown'),
    tally: checker.tally,
    refused: count('refused'),
    lost: findings.lost,
    doubled: findings.doubled,
    otherProblems: findings.other,
    problems: findings.texts,
    restartMs,
    elapsedMs: Date.now() - startedMs,
    finalExitCode,
  };
}

/** Runs `task`; when it fails, says what the daemon was doing (a daemon that died, with the end of its log, is the usual cause). */
async function explained<T>(daemon: Daemon, what: string, task: () => Promise<T>): Promise<T> {
  try {
    return await task();
  } catch (error) {
    const state = daemon.process.exitCode !== null || daemon.process.signalCode !== null ? `ledgerd had exited (${daemon.process.exitCode ?? daemon.process.signalCode})` : 'ledgerd was running';
    throw new Error(`${what} failed: ${String(error)}; ${state}; its log ends:\n${daemon.stderr.slice(-20).join('\n')}`, { cause: error });
  }
}

/** The report as the lines the long run prints and the docs quote. */
export function describeReport(report: SoakReport): string[] {
  const sorted = [...report.restartMs].sort((a, b) => a - b);
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  return [
    `kills: ${report.kills} (SIGKILL at random instants under load, restart on the same data dir)`,
    `commands: ${report.sent} sent, ${report.acknowledged} acknowledged, ${report.unknown} with the reply lost to a kill (${report.tally.unknownFound} found decided once, ${report.tally.unknownAbsent} absent and submitted by the repeat), ${report.refused} refused`,
    `decided: ${[...report.tally.decided].sort(([a], [b]) => a.localeCompare(b)).map(([state, n]) => `${state} ${n}`).join(', ')}`,
    `lost: ${report.lost}, doubled: ${report.doubled}, other problems: ${report.otherProblems}`,
    `restart to readiness: p50 ${ms(percentile(sorted, 50))}, p99 ${ms(percentile(sorted, 99))}, max ${ms(sorted.at(-1) ?? Number.NaN)}`,
    `final SIGTERM exit code: ${report.finalExitCode}; elapsed ${(report.elapsedMs / 1000).toFixed(0)} s`,
    ...report.problems.map((p) => `problem: ${p}`),
  ];
}
