import { setTimeout as delay } from 'node:timers/promises';
import type { BatchOp, Store } from '../store/port.js';

/** One turn of the event loop: what I/O has arrived is read first. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit across the kernel's writers. Intake (submissions) and the decider each
 * write one batch at a time, and the store would take them one after the other, each
 * with its own fsync: an acknowledgement could wait behind a decision write, then for
 * its own. Here a write that arrives while another is in flight joins the next group,
 * and every write waiting then goes out as one atomic batch with one fsync (their ops
 * in arrival order, as if applied one after the other). Each caller's ops stay
 * all-or-nothing, and each caller is answered only once its group is durable. A group
 * holds at most one write per writer (each awaits its write before the next), so it is
 * bounded by theirs (submissionsPerWriteMax, decisionsPerWriteMax).
 *
 * With two writers, though, a write only ever finds the other's in flight, never
 * waiting: intake's then the decider's would still alternate, and an acknowledgement
 * wait for a decision write and then its own. So a decision round's write, when nothing
 * is in flight or when the write it queued behind is done, holds back up to
 * decisionWriteJoinWaitMs for an intake write to join it.
 *
 * After a failed write nothing queued behind it is written (each is failed with the
 * same error): LevelDB can lose writes made on the handle after a failed one until it
 * is reopened (docs/reliability.md), and the kernel recovers the store before writing
 * again.
 */
export class GroupCommit {
  private writing = false;
  /** The next group; `mayWait`: every write in it may wait for company (a decision round's). */
  private next: { parts: (readonly BatchOp[])[]; waiters: Waiter[]; mayWait: boolean } | null = null;
  /** Ends the hold of a write waiting for company, once another joins it (null: none holds). */
  private joined: (() => void) | null = null;

  constructor(
    private readonly store: Store,
    private readonly sync: boolean,
    /** How long a group of writes that may wait holds back, before it is written, for another to join it. */
    private readonly joinWaitMs: number,
  ) {}

  /**
   * Applies `ops` atomically, with whatever else is waiting; resolves once they are
   * durable (when syncing). A write that `mayWait` (a decision round's: nobody's
   * acknowledgement waits on it) holds back up to joinWaitMs when nothing is in flight,
   * and again when the write it queued behind is done (requests keep being read
   * meanwhile), so that an intake write arriving meanwhile shares its fsync instead of
   * queueing behind it, and ends the wait at once; any other write starts its group at
   * once, taking what waits along.
   */
  write(ops: readonly BatchOp[], mayWait = false): Promise<void> {
    return new Promise((resolve, reject) => {
      this.next ??= { parts: [], waiters: [], mayWait: true };
      this.next.parts.push(ops);
      this.next.waiters.push({ resolve, reject });
      this.next.mayWait &&= mayWait;
      if (!this.writing) void this.drain();
      else this.joined?.();
    });
  }

  /**
   * Resolves once another write joins the one waiting, or after `holdMs`. A timer of
   * node:timers/promises, not the global setTimeout: a few milliseconds of batching on the
   * machine's clock, which tests faking the kernel's deadlines must not freeze.
   */
  private async hold(holdMs: number): Promise<void> {
    const joined = new AbortController();
    this.joined = () => joined.abort();
    try {
      await delay(holdMs, undefined, { signal: joined.signal });
    } catch {
      // Aborted: a write joined.
    } finally {
      this.joined = null;
    }
  }

  private async drain(): Promise<void> {
    this.writing = true;
    let failure: { readonly error: unknown } | null = null;
    try {
      while (this.next !== null) {
        // A group of decision writes alone, whether nothing was in flight or the write it
        // queued behind is done, waits for an intake write: below saturation each fsync saved
        // is ~300 µs of CPU here (docs/performance.md, Acknowledgements below saturation).
        // Held on a timer, not by turning the event loop until the time is up (which spent
        // CPU whenever no intake write came); requests are read meanwhile.
        if (this.next.mayWait && failure === null && this.joinWaitMs > 0) await this.hold(this.joinWaitMs);
        const group = this.next;
        this.next = null;
        if (failure === null) {
          try {
            await this.store.write(group.parts.length === 1 ? group.parts[0]! : group.parts.flat(), this.sync);
          } catch (error) {
            failure = { error };
          }
        }
        for (const waiter of group.waiters) {
          if (failure === null) waiter.resolve();
          else waiter.reject(failure.error);
        }
        // Let the callers just answered issue their next writes (intake's next batch is
        // ready by then) so they join what waits, rather than queue behind it alone.
        await nextTurn();
      }
    } finally {
      this.writing = false;
    }
  }
}
