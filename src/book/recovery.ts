/**
 * Whether the kernel may write, and its way back after a store failure. A failed write
 * (full disk, I/O) is an operating error: nothing more is written, new commands are
 * refused, and every retryAfterWriteFailureMs the store is mended and the kernel's state
 * read back from it before deciding again. A failed assertion is fatal: the kernel stops.
 */
import { AssertionFailure } from '../assert.js';
import * as bounds from '../constants.js';
import type { BatchOp, Store } from '../store/port.js';

/** What recovery asks of the rest of the kernel. */
export interface RecoveryHost {
  /** Intake, a submission write or the decider is running: the store is not recovered under them. */
  busy(): boolean;
  /** Reads the kernel's state back from the mended store. */
  reload(): Promise<void>;
  /** The store writes again: resume deciding. */
  resumed(): void;
  /** The kernel has stopped for good: answer what waits. */
  stopped(): void;
}

export class StoreHealth {
  writeFailure: Error | null = null;
  fatal: Error | null = null;
  closing = false;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly sync: boolean,
    private readonly onFatal: (error: Error) => void,
    private readonly onStoreFailure: (error: Error | null) => void,
    private readonly host: RecoveryHost,
  ) {}

  /** Writes one atomic batch, or notes the failure (and writes nothing while one stands). False when not written. */
  async writeOrNote(ops: readonly BatchOp[]): Promise<boolean> {
    if (this.writeFailure || this.fatal) return false;
    try {
      await this.store.write(ops, this.sync);
      return true;
    } catch (error) {
      this.noteWriteFailure(error as Error);
      return false;
    }
  }

  noteWriteFailure(error: Error): void {
    if (error instanceof AssertionFailure) return this.stopFatally(error);
    // An operating error (full disk, I/O): refuse new commands, write nothing, recover and retry later.
    if (this.writeFailure === null) this.onStoreFailure(error);
    this.writeFailure = error;
    this.armRecovery();
  }

  private armRecovery(): void {
    if (this.retryTimer || this.closing) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.recover();
    }, bounds.retryAfterWriteFailureMs);
    this.retryTimer.unref();
  }

  /**
   * Mends the store, then makes the kernel's state follow it before deciding again:
   * a write reported failed may still have landed (an fsync error), so the head, the
   * backlog under cmd/ and the counters are read back and the cache is dropped. Until
   * both succeed the failure stands and it is tried again later.
   */
  private async recover(): Promise<void> {
    if (this.fatal || this.closing) return;
    // Intake, submission writes and the decider stop at the failure; the store is not closed under them.
    if (this.host.busy()) return this.armRecovery();
    try {
      await this.store.recover();
      await this.host.reload();
    } catch (error) {
      if (error instanceof AssertionFailure) return this.stopFatally(error);
      return this.armRecovery();
    }
    this.writeFailure = null;
    this.onStoreFailure(null);
    this.host.resumed();
  }

  stopFatally(error: Error): void {
    if (this.fatal) return;
    this.fatal = error;
    this.host.stopped();
    this.onFatal(error);
  }

  close(): void {
    this.closing = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }
}
