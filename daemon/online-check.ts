/**
 * The online check (POST /v1/ops/check): `ledgerd check`'s checks (daemon/check.ts) run on
 * one snapshot of the book while it is served, since `ledgerd check` cannot open a LevelDB
 * book that ledgerd holds. One at a time; the latest run (running or finished) is kept in
 * memory for GET /v1/ops/check, which is how its caller follows it: a check of a large
 * book outlasts any request timeout. A run reads for at most `checkTimeMaxMs` (checked
 * between passes and after each page of an account's entries), then stops `incomplete`;
 * it also stops when the daemon does.
 */
import type { IdSource } from '../src/model/ids.js';
import { DamagedRecord } from '../src/model/decode.js';
import type { Store } from '../src/store/port.js';
import { type CheckCounts, type CheckReport, checkBook } from './check.js';

/** `consistent` and `damaged` are the offline check's verdicts; `incomplete`: stopped by the time bound or shutdown; `failed`: the check itself broke. */
export type CheckState = 'running' | 'consistent' | 'damaged' | 'incomplete' | 'failed';

export interface CheckRun {
  readonly state: CheckState;
  readonly startedAtMs: number;
  readonly finishedAtMs: number | null;
  readonly counts: CheckCounts;
  /** The finished report (consistent or damaged). */
  readonly report: CheckReport | null;
  /** Why a run stopped `incomplete` or `failed`. */
  readonly reason: string | null;
}

/** Thrown from the check's watch to stop it. */
class Stopped extends Error {}

/** A run that threw: stopped, a record that does not decode outside any pass (damage, as `ledgerd check` says), or a failure of the check itself. */
function endedBy(error: unknown): Pick<CheckRun, 'state' | 'report' | 'reason'> {
  if (error instanceof Stopped) return { state: 'incomplete', report: null, reason: error.message };
  if (error instanceof DamagedRecord) return { state: 'damaged', report: null, reason: `the book cannot be read through: ${error.message}` };
  return { state: 'failed', report: null, reason: error instanceof Error ? error.message : String(error) };
}

export class OnlineCheck {
  private run: CheckRun | null = null;
  private ending: Promise<void> | null = null;
  private stopReason: string | null = null;

  constructor(
    private readonly clock: () => number,
    private readonly timeMaxMs: number,
  ) {}

  /** The latest run, null when none was started since the daemon started. */
  get latest(): CheckRun | null {
    return this.run;
  }

  get running(): boolean {
    return this.run?.state === 'running';
  }

  /**
   * Starts a check of `store` (its snapshot is taken now, before this returns) and
   * calls `done` when it ends, whatever the outcome. The caller checked `running`.
   */
  start(store: Store, ids: IdSource | null, done: () => void): CheckRun {
    const startedAtMs = this.clock();
    const stopAtMs = startedAtMs + this.timeMaxMs;
    this.stopReason = null;
    this.run = { state: 'running', startedAtMs, finishedAtMs: null, counts: { accounts: 0, balances: 0, postings: 0 }, report: null, reason: null };
    const watch = (counts: CheckCounts) => {
      this.run = { ...this.run!, counts };
      if (this.stopReason === null && this.clock() >= stopAtMs) this.stopReason = `stopped after checkTimeMaxMs (${this.timeMaxMs} ms)`;
      if (this.stopReason !== null) throw new Stopped(this.stopReason);
    };
    const finish = (fields: Pick<CheckRun, 'state' | 'report' | 'reason'>) => {
      this.run = { ...this.run!, ...fields, finishedAtMs: this.clock(), counts: fields.report ?? this.run!.counts };
    };
    // checkBook takes its snapshot before its first await: the book as of this request.
    const checking = checkBook(store, ids, watch);
    this.ending = checking
      .then(
        (report) => finish({ state: report.problemCount === 0 ? 'consistent' : 'damaged', report, reason: null }),
        (error: unknown) => finish(endedBy(error)),
      )
      .finally(done);
    return this.run;
  }

  /** Stops a running check at its next page and waits for it to end (the daemon is stopping). */
  async stop(): Promise<void> {
    if (this.running) this.stopReason = 'stopped: the daemon is shutting down';
    await this.ending;
  }
}
