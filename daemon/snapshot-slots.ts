/**
 * Every read of the book that draws on the store's pool takes one of `slotsMax` slots
 * while it lasts: queries and operation views, disclosures' snapshots, settlement
 * reads, credential lookups, backups, and the daemon's own reads (settlement intake,
 * checkpoints: `internal`). On PostgreSQL a slot is a pooled connection; on
 * LevelDB an open snapshot (memory, and compaction held back while it is open).
 *
 * Each principal runs at most `perPrincipalMax` reads at once, and all but the
 * operator together at most `slotsMax - operatorReserved`, so the operator can always
 * read its book. A read over its principal's share waits in that principal's own
 * queue (at most `queuePerPrincipalMax` long, at most `queueWaitMs`) and runs when a
 * slot frees; only a full queue or a wait run out is refused (ERR-DecisionUnavailable,
 * Retry-After). Freed slots go to the principals with waiting reads in turn
 * (round-robin, one read each), so a principal's flood delays only its own reads
 * (docs/daemon.md, "Reads under load").
 */
import type { Kernel } from '../src/book/kernel.js';
import type { Config } from './config.js';
import { assert } from '../src/assert.js';
import { refuse } from '../src/errors.js';
import type { BookView } from '../src/queries/queries.js';

export interface SlotBounds {
  readonly slotsMax: number;
  readonly perPrincipalMax: number;
  readonly operatorReserved: number;
  readonly queuePerPrincipalMax: number;
  readonly queueWaitMs: number;
}

/** The slots' bounds as the config gives them. */
export function readSlotBounds(config: Config): SlotBounds {
  return {
    slotsMax: config.snapshotsMax,
    perPrincipalMax: config.snapshotsPerPrincipalMax,
    operatorReserved: config.snapshotsOperatorReserved,
    queuePerPrincipalMax: config.snapshotQueuePerPrincipalMax,
    queueWaitMs: config.snapshotQueueWaitMs,
  };
}

/** Runs a read in a slot: what the daemon's own work (settlement intake, automatic checkpoints) reads through. */
export type ReadGate = <T>(read: () => Promise<T>) => Promise<T>;

/** Whose read it is: a principal, or before authentication the source address (`source:ADDRESS`). */
export interface Reader {
  readonly key: string;
  readonly operator: boolean;
}

/** The operator's share, or every other principal's (metrics are by share, not by principal: bounded labels). */
export type Share = 'operator' | 'principals';
export type RefusalReason = 'queue_full' | 'wait_expired';

/** What the slots report (daemon/metrics.ts), all optional. */
export interface SlotObserver {
  queued?(share: Share, delta: number): void;
  waited?(share: Share, waitedMs: number): void;
  refused?(share: Share, reason: RefusalReason): void;
}

export interface Held {
  /** How long the read waited in its queue for the slot (0: a slot was free). */
  readonly waitedMs: number;
  release(): void;
}

interface Waiter {
  readonly reader: Reader;
  readonly sinceMs: number;
  readonly grant: (held: Held) => void;
  readonly timer: NodeJS.Timeout;
}

export class SnapshotSlots {
  /** Reads running, per reader key. */
  private readonly running = new Map<string, number>();
  private othersRunning = 0;
  /** Waiting reads per reader key; the map's order is the round-robin's (a served key moves to the back). */
  private readonly queues = new Map<string, Waiter[]>();

  constructor(
    private readonly kernel: Kernel,
    readonly bounds: SlotBounds,
    private readonly observer: SlotObserver = {},
    private readonly clock: () => number = Date.now,
  ) {
    assert(bounds.perPrincipalMax < bounds.slotsMax - bounds.operatorReserved, 'a principal\'s share is a fraction of the slots it shares (config.ts checks)');
  }

  /**
   * The daemon's own reads (settlement intake, automatic checkpoints): in the operator's
   * reserved share under a key of their own, so no principal's reads, nor the operator's
   * own queue, starve them, and they never take the slots the principals share.
   */
  readonly internal: Reader = { key: 'internal', operator: true };

  /** Reads run as `reader`, each in a slot. */
  gate(reader: Reader): ReadGate {
    return (read) => this.hold(reader, read);
  }

  /** The reader a principal is. */
  principal(principal: string): Reader {
    return { key: principal, operator: principal === this.kernel.principals.operator };
  }

  /** Reads waiting now, over all queues. */
  get queuedCount(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  /** Runs `read` on one consistent view of the book, in one of `reader`'s slots, and always closes it. */
  withView<T>(reader: Reader, read: (view: BookView) => Promise<T>, onWait?: (waitedMs: number) => void): Promise<T> {
    return this.hold(
      reader,
      async () => {
        const view = await this.kernel.openView();
        try {
          return await read(view);
        } finally {
          await view.close();
        }
      },
      onWait,
    );
  }

  /** Runs `read` (which reads the store itself) in one of `reader`'s slots, given back however it ends. */
  async hold<T>(reader: Reader, read: () => Promise<T>, onWait?: (waitedMs: number) => void): Promise<T> {
    const held = await this.acquire(reader);
    if (held.waitedMs > 0) onWait?.(held.waitedMs);
    try {
      return await read();
    } finally {
      held.release();
    }
  }

  /**
   * A slot for `reader`: at once when its share and the pool allow, else after waiting
   * its turn. Refused (thrown ERR-DecisionUnavailable) when its queue is full or the
   * wait runs out. The caller must `release` what it is given exactly once.
   */
  acquire(reader: Reader): Promise<Held> {
    const queue = this.queues.get(reader.key);
    // Behind its own waiting reads, a read waits too: a principal's reads keep their order.
    if (queue === undefined && this.mayRun(reader)) return Promise.resolve(this.take(reader, 0));
    const share = shareOf(reader);
    if ((queue?.length ?? 0) >= this.bounds.queuePerPrincipalMax) {
      this.observer.refused?.(share, 'queue_full');
      refuse('ERR-DecisionUnavailable', `a principal may run ${this.bounds.perPrincipalMax} reads of the book at once and queue ${this.bounds.queuePerPrincipalMax} more; retry later`);
    }
    return new Promise<Held>((resolve, reject) => {
      const waiter: Waiter = {
        reader,
        sinceMs: this.clock(),
        grant: resolve,
        timer: setTimeout(() => {
          this.dequeue(waiter);
          this.observer.refused?.(share, 'wait_expired');
          try {
            refuse('ERR-DecisionUnavailable', `the read waited ${this.bounds.queueWaitMs} ms for a slot behind the caller's own reads; retry later`);
          } catch (error) {
            reject(error);
          }
        }, this.bounds.queueWaitMs),
      };
      const q = this.queues.get(reader.key);
      if (q === undefined) this.queues.set(reader.key, [waiter]);
      else q.push(waiter);
      this.observer.queued?.(share, 1);
    });
  }

  private mayRun(reader: Reader): boolean {
    if ((this.running.get(reader.key) ?? 0) >= this.bounds.perPrincipalMax) return false;
    return reader.operator || this.othersRunning < this.bounds.slotsMax - this.bounds.operatorReserved;
  }

  private take(reader: Reader, waitedMs: number): Held {
    this.running.set(reader.key, (this.running.get(reader.key) ?? 0) + 1);
    if (!reader.operator) this.othersRunning += 1;
    let released = false;
    return {
      waitedMs,
      release: () => {
        if (released) return;
        released = true;
        const left = this.running.get(reader.key)! - 1;
        if (left === 0) this.running.delete(reader.key);
        else this.running.set(reader.key, left);
        if (!reader.operator) this.othersRunning -= 1;
        this.serveWaiting();
      },
    };
  }

  private dequeue(waiter: Waiter): void {
    const q = this.queues.get(waiter.reader.key);
    if (q === undefined) return;
    const at = q.indexOf(waiter);
    if (at < 0) return;
    q.splice(at, 1);
    if (q.length === 0) this.queues.delete(waiter.reader.key);
    this.observer.queued?.(shareOf(waiter.reader), -1);
  }

  /** Gives free slots to waiting reads, one per principal in turn; a principal served goes to the back of the turn. */
  private serveWaiting(): void {
    let served = true;
    while (served) {
      served = false;
      for (const [key, q] of this.queues) {
        const waiter = q[0]!;
        if (!this.mayRun(waiter.reader)) continue;
        clearTimeout(waiter.timer);
        q.shift();
        this.queues.delete(key);
        if (q.length > 0) this.queues.set(key, q);
        const share = shareOf(waiter.reader);
        this.observer.queued?.(share, -1);
        const waitedMs = Math.max(1, this.clock() - waiter.sinceMs);
        this.observer.waited?.(share, waitedMs);
        waiter.grant(this.take(waiter.reader, waitedMs));
        served = true;
        break;
      }
    }
  }
}

const shareOf = (reader: Reader): Share => (reader.operator ? 'operator' : 'principals');
