/**
 * The decider: the book's one writer of decisions. It takes durable commands in
 * submission order, with the reservation expiries due and the direct decisions waiting,
 * in rounds: each round is read (prefetch.ts), built in memory (round-builder.ts) and
 * written as one atomic batch (commit.ts). A round a poison decision trips is decided
 * again part by part; a failed write stops deciding until recovery (recovery.ts).
 * Schedules itself: on new work, and at the next reservation deadline.
 */
import { AssertionFailure, assert } from '../assert.js';
import * as bounds from '../constants.js';
import type { DirectCommand } from '../decide/decide-auth.js';
import { type Refusal, Refused } from '../errors.js';
import { keys, parseSeqHex, prefixEnd } from '../model/keys.js';
import type { Operation } from '../model/model.js';
import type { Store } from '../store/port.js';
import { type CommitHost, type DirectRequest, commitRound } from './commit.js';
import type { Intake } from './intake.js';
import type { PoisonReport } from './kernel-types.js';
import type { BookReader } from './prefetch.js';
import { type BuiltRound, type RoundContext, buildRound } from './round-builder.js';
import { readBacklog } from './command-chunks.js';

/** A decision of the round tripped an assertion: nothing of the round was written. */
class PoisonedRound extends Error {
  constructor(readonly failure: AssertionFailure) {
    super(failure.message);
  }
}

/** What the decider is given by the kernel. */
export interface DeciderHost extends CommitHost {
  readonly store: Store;
  readonly reader: BookReader;
  readonly intake: Intake;
  readonly clock: () => number;
  readonly onPoison: (report: PoisonReport) => void;
  /** What this round's decisions are given besides their reads. */
  roundContext(): RoundContext;
  notifyIdle(): void;
}

export class Decider {
  /** Durable commands waiting for a decision, in submission order. */
  decideQueue: Operation[] = [];
  private directQueue: DirectRequest[] = [];
  deciding = false;
  private nextExpiryMs = Number.POSITIVE_INFINITY;
  private expiryTimer: NodeJS.Timeout | null = null;

  constructor(private readonly host: DeciderHost) {}

  /** Nothing waits to be decided. */
  get idle(): boolean {
    return !this.deciding && this.decideQueue.length === 0 && this.directQueue.length === 0;
  }

  /** A durable command, decided after those before it. */
  enqueue(op: Operation): void {
    this.decideQueue.push(op);
  }

  /** Takes the first `count` commands off the decide queue once their decisions are written. */
  private dequeueDecided(count: number): void {
    for (const op of this.decideQueue.splice(0, count)) this.host.intake.countBacklog(op.actor.principal, -1);
  }

  /** The store is read back after a failure: the backlog and the next deadline with it. */
  async reload(): Promise<void> {
    this.decideQueue = [];
    await this.loadBacklog();
    await this.refreshNextExpiry();
  }

  close(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
  }

  schedule(): void {
    if (this.host.health.fatal || this.deciding || this.host.health.writeFailure) return;
    if (this.decideQueue.length > 0 || this.directQueue.length > 0 || this.nextExpiryMs <= this.host.clock()) {
      void this.decideLoop();
      return;
    }
    this.armExpiryTimer();
  }

  private armExpiryTimer(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = null;
    if (!Number.isFinite(this.nextExpiryMs) || this.host.health.closing) return;
    const delayMs = Math.min(Math.max(0, this.nextExpiryMs - this.host.clock() + 1), 2 ** 31 - 1);
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = null;
      this.schedule();
    }, delayMs);
    this.expiryTimer.unref();
  }

  private async decideLoop(): Promise<void> {
    this.deciding = true;
    let direct: readonly DirectRequest[] = [];
    try {
      while (!this.host.health.fatal && !this.host.health.writeFailure) {
        const atMs = Math.max(this.host.clock(), this.host.state.head.lastAtMs);
        const expiring = this.nextExpiryMs <= atMs ? await this.dueExpiries(atMs) : [];
        if (this.decideQueue.length === 0 && this.directQueue.length === 0 && expiring.length === 0) break;
        direct = this.directQueue.splice(0, bounds.directDecisionsPerWriteMax);
        const batch = this.decideQueue.slice(0, bounds.decisionsPerWriteMax - expiring.length);
        const written = await this.decideRoundOrApart(atMs, batch, expiring, direct);
        if (!written) break;
        direct = [];
      }
    } catch (error) {
      // An assertion here (after a write, or refusing a poison) is fatal; anything else is the store failing a read.
      this.host.health.noteWriteFailure(error instanceof PoisonedRound ? error.failure : (error as Error));
    } finally {
      // Direct decisions of a round that did not complete are answered, never left waiting (settling twice is a no-op).
      for (const d of direct) d.reject(new Refused('ERR-DecisionUnavailable', 'the store cannot write right now'));
      this.deciding = false;
      if (!this.host.health.fatal && !this.host.health.writeFailure && (this.decideQueue.length > 0 || this.directQueue.length > 0)) void this.decideLoop();
      else {
        this.armExpiryTimer();
        this.host.notifyIdle();
      }
    }
  }

  private async dueExpiries(atMs: number): Promise<Operation[]> {
    const refs: string[] = [];
    for await (const [key] of this.host.store.entries({ gte: keys.expiryPrefix, lt: keys.expiry(atMs + 1, ''), limit: bounds.expiriesPerWriteMax })) {
      refs.push(key.slice(keys.expiryPrefix.length + 17));
    }
    const ops = await Promise.all(refs.map((ref) => this.host.reader.operation(ref)));
    return ops.filter((op): op is Operation => op !== undefined && op.state === 'Reserved');
  }

  /**
   * Decides a round as one write. When a decision in it trips an assertion (a poison
   * command), nothing of the round is written: its parts are decided again one at a
   * time, each alone, and the one that trips it again is refused with ERR-Internal
   * (an expiry's index entry is dropped instead); the others are decided as usual.
   * False when a write failed (retried later).
   */
  private async decideRoundOrApart(atMs: number, batch: readonly Operation[], expiring: readonly Operation[], direct: readonly DirectRequest[]): Promise<boolean> {
    const alone = async (b: readonly Operation[], e: readonly Operation[], d: readonly DirectRequest[]): Promise<boolean | PoisonedRound> => {
      try {
        return await this.decideRound(atMs, b, e, d);
      } catch (error) {
        if (error instanceof PoisonedRound) return error;
        throw error;
      }
    };
    const whole = await alone(batch, expiring, direct);
    if (!(whole instanceof PoisonedRound)) {
      if (whole) this.dequeueDecided(batch.length);
      return whole;
    }
    for (const reservation of expiring) {
      const outcome = await alone([], [reservation], []);
      if (outcome instanceof PoisonedRound) {
        this.host.onPoison({ operation: reservation.ref, what: 'expiry', error: outcome.failure });
        // Its hold stays until it is captured or released; only the automatic expiry is given up.
        if (!(await this.host.health.writeOrNote([{ type: 'del', key: keys.expiry(reservation.hold!.deadlineMs, reservation.ref) }]))) return false;
        await this.refreshNextExpiry();
      } else if (!outcome) return false;
    }
    for (const op of batch) {
      let outcome = await alone([op], [], []);
      if (outcome instanceof PoisonedRound) {
        this.host.onPoison({ operation: op.ref, what: op.command.type, error: outcome.failure });
        outcome = await this.decideRound(atMs, [op], [], [], op.ref);
      }
      if (!outcome) return false;
      assert(this.decideQueue[0] === op, 'a round decides the head of the queue');
      this.dequeueDecided(1);
    }
    for (const d of direct) {
      const outcome = await alone([], [], [d]);
      if (outcome instanceof PoisonedRound) {
        this.host.onPoison({ operation: null, what: d.command.type, error: outcome.failure });
        d.reject(new Refused('ERR-Internal'));
      } else if (!outcome) return false;
    }
    return true;
  }

  /**
   * Decides one round and writes it as one batch. False when the write failed (retried
   * later); PoisonedRound when a decision tripped an assertion (nothing written).
   * `poisonRef` names a command already found to be poison: it is refused with ERR-Internal.
   */
  private async decideRound(atMs: number, batch: readonly Operation[], expiring: readonly Operation[], direct: readonly DirectRequest[], poisonRef: string | null = null): Promise<boolean> {
    let round: BuiltRound;
    try {
      round = await this.planRound(atMs, batch, expiring, direct, poisonRef);
    } catch (error) {
      if (error instanceof AssertionFailure) throw new PoisonedRound(error);
      throw error;
    }
    return commitRound(this.host, this, round, direct);
  }

  /** Reads what the round needs (prefetch.ts), then builds it in memory (round-builder.ts). Writes nothing. */
  private async planRound(atMs: number, batch: readonly Operation[], expiring: readonly Operation[], direct: readonly DirectRequest[], poisonRef: string | null): Promise<BuiltRound> {
    const { state } = this.host;
    const commands = direct.map((d) => d.command);
    // Expired challenges and sessions are pruned at most once a second, a bounded number each time.
    const pruneAuth = atMs - state.authPrunedAtMs >= bounds.authPruneIntervalMs;
    const reads = await this.host.reader.roundReads(state.assets, atMs, batch, expiring, commands, pruneAuth);
    const commandChunks = state.commandChunks.decidedThrough(batch.length > 0 ? batch[batch.length - 1]!.cseq : state.head.decidedCseq);
    const round = buildRound({ atMs, batch, expiring, direct: commands, head: state.head, totals: state.totals, reads, poisonRef, commandChunks }, this.host.roundContext());
    if (pruneAuth) state.authPrunedAtMs = atMs;
    return round;
  }

  /** Takes up every command acknowledged and not decided (the `cmd/` chunks: command-chunks.ts), in order. */
  async loadBacklog(): Promise<void> {
    const { state } = this.host;
    const backlog = await readBacklog(this.host.store, state.head.decidedCseq);
    state.commandChunks.reset(backlog.chunks);
    for (const op of backlog.ops) {
      this.decideQueue.push(op);
      this.host.intake.countBacklog(op.actor.principal, 1);
    }
  }

  async refreshNextExpiry(): Promise<void> {
    this.nextExpiryMs = Number.POSITIVE_INFINITY;
    for await (const [key] of this.host.store.entries({ gte: keys.expiryPrefix, lt: prefixEnd(keys.expiryPrefix), limit: 1 })) {
      this.nextExpiryMs = parseSeqHex(key.slice(keys.expiryPrefix.length, keys.expiryPrefix.length + 16));
    }
  }

  /**
   * Decides a sign-in in the next round and resolves with
   * null (done) or the refusal. Not an acknowledged command: nothing is durable until
   * the round's write, and a caller that loses its answer starts a new ceremony.
   */
  decideDirect(command: DirectCommand): Promise<Refusal | null> {
    return new Promise((resolve, reject) => {
      this.host.intake.ensureAccepting();
      this.directQueue.push({ command, resolve, reject });
      this.schedule();
    });
  }
}
