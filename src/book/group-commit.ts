import type { BatchOp, Store } from '../store/port.js';

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
 * After a failed write nothing queued behind it is written (each is failed with the
 * same error): LevelDB can lose writes made on the handle after a failed one until it
 * is reopened (docs/reliability.md), and the kernel recovers the store before writing
 * again.
 */
export class GroupCommit {
  private writing = false;
  private next: { parts: (readonly BatchOp[])[]; waiters: Waiter[] } | null = null;

  constructor(
    private readonly store: Store,
    private readonly sync: boolean,
  ) {}

  /** Applies `ops` atomically, with whatever else is waiting; resolves once they are durable (when syncing). */
  write(ops: readonly BatchOp[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.next ??= { parts: [], waiters: [] };
      this.next.parts.push(ops);
      this.next.waiters.push({ resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    let failure: { readonly error: unknown } | null = null;
    try {
      while (this.next !== null) {
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
      }
    } finally {
      this.writing = false;
    }
  }
}
