/**
 * Intake: commands acknowledged, never decided here. Submissions wait in their
 * principal's own queue and are taken in turn (round-robin, one each per turn), each
 * principal holding at most `admittedPerPrincipalMax` commands accepted and not yet
 * decided: a principal flooding commands fills its own queue, not the decider's rounds,
 * and another principal's command is accepted into the next round. A submission waits
 * for its turn at most `admissionWaitMs`, then is refused (ERR-DecisionUnavailable).
 * Submissions are taken in rounds:
 * each round reads every client-key record and everything the prechecks need in one
 * store round trip each, answers repeats from their first submission, prechecks the
 * rest, and accepts them into the next submission write (many per fsync). Once that is
 * durable the caller is answered and the commands go to the decider, in order. The
 * backlog (commands submitted and not yet decided) is bounded, in all and per principal.
 */
import { operationIndexPuts } from '../queries/operation-index.js';
import { AssertionFailure, assert } from '../assert.js';
import type { Principals } from '../auth/authority.js';
import * as bounds from '../constants.js';
import type { RecoveryTerms } from '../custody/terms.js';
import { restrictable } from '../custody/decide-custody.js';
import { recordNeeds } from '../decide/decide-auth.js';
import { precheck, precheckNeeds } from '../decide/precheck.js';
import { type Refusal, Refused, refusal, refuse } from '../errors.js';
import { decodeAccount, decodeIdentity } from '../model/codec.js';
import { DamagedRecord } from '../model/decode.js';
import type { IdSource } from '../model/ids.js';
import { keys } from '../model/keys.js';
import type { Asset, Authority, Operation } from '../model/model.js';
import type { AccountId, IdentityId } from '../model/values.js';
import type { BatchOp, Store } from '../store/port.js';
import type { Acknowledgement, PoisonReport, RoundPart, Submission } from './kernel-types.js';
import { Overlay } from './overlay.js';
import type { BookReader } from './prefetch.js';
import type { StoreHealth } from './recovery.js';
import { type CommandChunk, commandChunkWrites } from './command-chunks.js';
import { type ClientKeyRecord, decodeClientKeyRecord, encodeClientKeyRecord } from './client-key-record.js';

/** A submission waiting for its intake round. */
interface IntakeItem {
  readonly sub: Submission;
  /** When its wait for its turn ends (performance.now(), ms): refused if it is still waiting then. */
  readonly waitEndsMs: number;
  readonly clientKey: string;
  readonly ckKey: string;
  /** Prechecked only, never accepted: a proposal's request checked at its submission (CONTRACT 13). */
  readonly checkOnly: boolean;
  resolve(ack: Acknowledgement | null): void;
  reject(error: unknown): void;
}

/** An accepted submission waiting for its durable write. */
interface PendingSubmission {
  readonly op: Operation;
  readonly ckKey: string;
  readonly digest: string;
  /** Its submitter, answered once it is durable. */
  readonly item: IntakeItem;
  /** Repeats of its client key waiting for it to be durable (made only when one comes: most never do). */
  repeats: { resolve(): void; reject(error: unknown): void }[] | null;
}

/** Answers a submission and the repeats waiting on it: durable (error null), or not written. */
function settle(p: PendingSubmission, error: unknown | null): void {
  if (error === null) p.item.resolve({ operation: p.op, repeat: false });
  else p.item.reject(error);
  if (p.repeats === null) return;
  for (const repeat of p.repeats) {
    if (error === null) repeat.resolve();
    else repeat.reject(error);
  }
}

/** Resolves once `p` is durable. */
function durableOf(p: PendingSubmission): Promise<void> {
  return new Promise((resolve, reject) => (p.repeats ??= []).push({ resolve, reject }));
}

/** What intake is given by the kernel. */
export interface IntakeHost {
  readonly store: Store;
  readonly reader: BookReader;
  readonly health: StoreHealth;
  readonly principals: Principals;
  readonly recoveryTerms: RecoveryTerms;
  readonly clock: () => number;
  readonly ids: IdSource;
  readonly backlogMax: number;
  readonly backlogPerPrincipalMax: number;
  /** Commands of one principal accepted and not yet decided, at most: more wait their turn. */
  readonly admittedPerPrincipalMax: number;
  /** How long a submission waits for its turn before it is refused. */
  readonly admissionWaitMs: number;
  readonly beforeDecide: (part: RoundPart) => void;
  readonly onPoison: (report: PoisonReport) => void;
  /** The registered assets as committed now. */
  assets(): ReadonlyMap<string, Asset>;
  /** An intake write's `cmd/` chunks are durable (before its commands are accepted). */
  commandChunksWritten(chunks: readonly CommandChunk[]): void;
  /** A durable command, for the decider (in submission order). */
  accepted(op: Operation): void;
  /** Durable commands are waiting: let the decider run. */
  schedule(): void;
  decideQueueLength(): number;
  notifyIdle(): void;
}

export class Intake {
  /** Submissions waiting for their turn, per principal; the map's order is the round-robin's (a principal served moves to the back). */
  private readonly queues = new Map<string, IntakeItem[]>();
  private queued = 0;
  /**
   * The same submissions in the order they came, so in the order their waits end: one
   * timer, for the first of them, refuses those whose wait is over (not a timer each).
   */
  private readonly waiting = new Set<IntakeItem>();
  private waitTimer: NodeJS.Timeout | null = null;
  intaking = false;
  /** Submissions not yet durable, by client-key store key (a repeat waits on the first). */
  private readonly inFlightKeys = new Map<string, PendingSubmission>();
  private submitQueue: PendingSubmission[] = [];
  submitting = false;
  /** Commands submitted and not yet decided (or refused), by submitting principal. */
  private readonly backlogByPrincipal = new Map<string, number>();
  /** The actor of the last command accepted (actorOf). */
  private lastActor: Authority | null = null;

  constructor(
    private readonly host: IntakeHost,
    /** The next command sequence number to draw. */
    private nextCseq: number,
  ) {}

  /** Nothing waits for intake or a submission write. */
  get idle(): boolean {
    return !this.intaking && !this.submitting && this.queued === 0 && this.submitQueue.length === 0;
  }

  /** The kernel has stopped: submissions waiting for their turn or their write are refused. */
  stopped(): void {
    const stopped = new Refused('ERR-DecisionUnavailable', 'the service has stopped deciding');
    for (const q of this.queues.values()) for (const item of q) this.unqueue(item).reject(stopped);
    this.queues.clear();
    if (this.waitTimer !== null) clearTimeout(this.waitTimer);
    this.waitTimer = null;
    for (const p of this.submitQueue) settle(p, stopped);
    this.submitQueue = [];
  }

  /**
   * The store is read back after a failure (intake idle): the backlog is counted again
   * from cmd/, beside the submissions still waiting for their turn.
   */
  clearBacklog(): void {
    this.backlogByPrincipal.clear();
    for (const [principal, q] of this.queues) this.backlogByPrincipal.set(principal, q.length);
  }

  /** Acknowledges a command (durably) or refuses it. Never decides it here. */
  submit(sub: Submission): Promise<Acknowledgement> {
    return this.enqueue(sub, false) as Promise<Acknowledgement>;
  }

  /** Prechecks a submission as `submit` would, in an intake round, and stores nothing: refused (rejected) or not (null). */
  check(sub: Submission): Promise<null> {
    return this.enqueue(sub, true) as Promise<null>;
  }

  private enqueue(sub: Submission, checkOnly: boolean): Promise<Acknowledgement | null> {
    const clientKey = sub.clientKey ?? sub.requestDigest;
    assert(clientKey.length > 0 && clientKey.length <= bounds.clientKeyLengthMax, 'client key length checked at the edge');
    return new Promise((resolve, reject) => {
      // Refusals always arrive as a rejected promise, never as a synchronous throw.
      const principal = sub.actor.principal;
      this.ensureAccepting(principal);
      this.countBacklog(principal, 1);
      const item: IntakeItem = { sub, clientKey, ckKey: keys.clientKey(principal, clientKey), checkOnly, resolve, reject, waitEndsMs: performance.now() + this.host.admissionWaitMs };
      this.waiting.add(item);
      this.armWaitTimer();
      const q = this.queues.get(principal);
      if (q === undefined) this.queues.set(principal, [item]);
      else q.push(item);
      this.queued++;
      this.wake();
    });
  }

  /** Starts an intake run unless one is on (the submissions of this turn of the event loop gather into one round). */
  private wake(): void {
    if (this.intaking || this.queued === 0) return;
    this.intaking = true;
    setImmediate(() => void this.runIntake());
  }

  /** Takes a submission off its queue's count (it is in a round now, or refused). */
  private unqueue(item: IntakeItem): IntakeItem {
    this.waiting.delete(item);
    this.queued--;
    return item;
  }

  /** Arms the timer for the first waiting submission's end of wait, unless armed. */
  private armWaitTimer(): void {
    if (this.waitTimer !== null) return;
    const first = this.waiting.values().next();
    if (first.done) return;
    this.waitTimer = setTimeout(() => {
      this.waitTimer = null;
      const nowMs = performance.now();
      // In the order they came: the first whose wait is not over ends the sweep.
      for (const item of this.waiting) {
        if (item.waitEndsMs > nowMs) break;
        this.expire(item);
      }
      this.armWaitTimer();
    }, Math.max(1, Math.ceil(first.value.waitEndsMs - performance.now())));
    // A waiting submission keeps no stopped process alive (stopped() refuses it first).
    this.waitTimer.unref();
  }

  /** A submission that waited its whole `admissionWaitMs` for its turn: refused, as a full backlog share is. */
  private expire(item: IntakeItem): void {
    const principal = item.sub.actor.principal;
    const q = this.queues.get(principal);
    const at = q?.indexOf(item) ?? -1;
    if (q === undefined || at < 0) return;
    q.splice(at, 1);
    if (q.length === 0) this.queues.delete(principal);
    this.unqueue(item);
    this.countBacklog(principal, -1);
    item.reject(new Refused('ERR-DecisionUnavailable', `the command waited ${this.host.admissionWaitMs} ms for its turn behind the caller's own commands; retry later`));
  }

  /** Commands of `principal` taken for a round and not yet decided (its backlog less what still waits its turn). */
  private admittedOf(principal: string): number {
    return (this.backlogByPrincipal.get(principal) ?? 0) - (this.queues.get(principal)?.length ?? 0);
  }

  /**
   * The next round's submissions, one per principal in turn while its admitted commands
   * are under their bound; a principal served goes to the back of the turn. Which
   * commands are taken, and so their order, is decided here; their decisions are not.
   */
  private nextRound(): IntakeItem[] {
    const round: IntakeItem[] = [];
    let took = true;
    while (took && round.length < bounds.submissionsPerWriteMax) {
      took = false;
      for (const principal of [...this.queues.keys()]) {
        if (round.length === bounds.submissionsPerWriteMax) break;
        if (this.admittedOf(principal) >= this.host.admittedPerPrincipalMax) continue;
        const q = this.queues.get(principal)!;
        round.push(this.unqueue(q.shift()!));
        this.queues.delete(principal);
        if (q.length > 0) this.queues.set(principal, q);
        took = true;
      }
    }
    return round;
  }

  /**
   * Takes submissions in rounds: reads every client-key record and everything the
   * prechecks need in one store round trip each, then handles each submission in
   * order, synchronously. New commands go to the next submission write.
   */
  private async runIntake(): Promise<void> {
    try {
      for (let round = this.nextRound(); round.length > 0; round = this.nextRound()) {
        try {
          await this.intakeRound(round);
        } catch (error) {
          for (const item of round) {
            this.countBacklog(item.sub.actor.principal, -1);
            item.reject(error);
          }
          // A damaged record met reading for the prechecks refuses the round (nothing of it is taken); deciding goes on.
          if (error instanceof AssertionFailure && !(error instanceof DamagedRecord)) this.host.health.stopFatally(error);
        }
      }
    } finally {
      this.intaking = false;
      this.host.notifyIdle();
    }
  }

  private async intakeRound(round: readonly IntakeItem[]): Promise<void> {
    const lookups = [...new Set(round.filter((i) => !i.checkOnly && !this.inFlightKeys.has(i.ckKey)).map((i) => i.ckKey))];
    const recordTexts = lookups.length === 0 ? [] : await this.host.store.getMany(lookups);
    const records = new Map<string, ClientKeyRecord>();
    for (const [i, key] of lookups.entries()) if (recordTexts[i] !== undefined) records.set(key, decodeClientKeyRecord(recordTexts[i]!));

    // The prechecks read the committed book through an overlay of their own, never written.
    const reads = new Overlay(this.host.assets());
    const fresh = round.filter((item) => item.checkOnly || !records.has(item.ckKey));
    const accountIds = new Set<AccountId>();
    const opRefs = new Set<string>();
    const identityIds = new Set<string>();
    const recordKeys = new Set<string>();
    for (const item of fresh) {
      const needs = precheckNeeds(item.sub.command);
      for (const id of needs.accounts) accountIds.add(id);
      for (const ref of needs.operations) opRefs.add(ref);
      // The actor's own identity: a restricted one's commands are refused (CONTRACT 10).
      if (restrictable(item.sub.actor.principal, this.host.principals)) identityIds.add(item.sub.actor.principal);
      for (const id of needs.identities ?? []) identityIds.add(id);
      for (const key of recordNeeds(item.sub.command)) recordKeys.add(key);
    }
    await this.host.reader.load(reads.identities, [...identityIds].map(keys.identity), decodeIdentity);
    await this.host.reader.loadRecords(reads, [...recordKeys]);
    for (const ref of opRefs) {
      const op = await this.host.reader.operation(ref);
      if (op === undefined) continue;
      reads.operations.set(ref, op);
      if (op.command.type === 'reserve') accountIds.add(op.command.payer);
    }
    await this.host.reader.load(reads.accounts, [...accountIds].map((id) => reads.accountKey(id)), decodeAccount);
    for (const item of fresh) await this.host.reader.loadGrantNeeds(reads, item.sub.command, item.sub.actor, null);

    let accepted = false;
    for (const item of round) {
      if (item.checkOnly) {
        this.countBacklog(item.sub.actor.principal, -1);
        const refused = this.precheckOne(item, reads);
        if (refused) item.reject(new Refused(refused.error, refused.description));
        else item.resolve(null);
        continue;
      }
      const inFlight = this.inFlightKeys.get(item.ckKey);
      const record = records.get(item.ckKey);
      if (inFlight || record) {
        this.countBacklog(item.sub.actor.principal, -1);
        this.answerRepeat(item, inFlight, record);
        continue;
      }
      const refused = this.precheckOne(item, reads);
      if (refused) {
        this.countBacklog(item.sub.actor.principal, -1);
        item.reject(new Refused(refused.error, refused.description));
        continue;
      }
      this.accept(item);
      accepted = true;
    }
    if (accepted) void this.flushSubmissions();
  }

  /** The precheck of one submission; one that throws (a bug its input trips) is refused with ERR-Internal alone. */
  private precheckOne(item: IntakeItem, reads: Overlay): Refusal | null {
    try {
      this.host.beforeDecide({ kind: 'precheck', sub: item.sub });
      return precheck(item.sub.command, item.sub.actor, reads, this.host.principals, this.host.clock(), this.host.recoveryTerms);
    } catch (error) {
      const failure = error instanceof AssertionFailure ? error : new AssertionFailure(`the precheck threw: ${(error as Error).message}`);
      this.host.onPoison({ operation: null, what: item.sub.command.type, error: failure });
      return refusal('ERR-Internal');
    }
  }

  /** A repeat is answered from the first submission once that is durable: the latest state, decided once decided. */
  private answerRepeat(item: IntakeItem, inFlight: PendingSubmission | undefined, record: ClientKeyRecord | undefined): void {
    const digest = inFlight ? inFlight.digest : record!.digest;
    if (digest !== item.sub.requestDigest) {
      item.reject(new Refused('ERR-ClientKeyReused', 'the client key was already used for a different request'));
      return;
    }
    const ref = inFlight ? inFlight.op.ref : record!.ref;
    void (inFlight ? durableOf(inFlight) : Promise.resolve())
      .then(() => this.host.reader.operation(ref))
      .then((op) => {
        assert(op !== undefined, 'a client-key record names a stored operation');
        item.resolve({ operation: op, repeat: true });
      })
      .catch(item.reject);
  }

  private accept(item: IntakeItem): void {
    const cseq = this.nextCseq++;
    const ref = this.host.ids.operationRef(cseq);
    assert(this.host.ids.cseqOf(ref) === cseq, 'an operation reference leads back to its command');
    const { sub } = item;
    const op: Operation = {
      ref,
      cseq,
      command: sub.command,
      actor: this.actorOf(sub.actor),
      scope: sub.actor.scope ?? null,
      state: 'Received',
      submittedAtMs: this.host.clock(),
      decidedAtMs: null,
      clientKey: item.clientKey,
      clientKeyDerived: sub.clientKey === null,
      reference: sub.reference,
      result: null,
      error: null,
      hold: null,
      ...(sub.act === undefined ? {} : { act: sub.act }),
      ...(sub.approval === undefined ? {} : { approval: sub.approval }),
      ...(sub.unapproved ? { unapproved: true as const } : {}),
    };
    const pending: PendingSubmission = { op, ckKey: item.ckKey, digest: sub.requestDigest, item, repeats: null };
    this.inFlightKeys.set(item.ckKey, pending);
    this.submitQueue.push(pending);
  }

  /** An operation's actor; consecutive commands of one credential share one (so its text is encoded once: codec.ts encodeOperation). */
  private actorOf(actor: Submission['actor']): Authority {
    const last = this.lastActor;
    // The kind follows from the principal.
    if (last !== null && last.principal === actor.principal && last.credential === actor.credential && last.onBehalfOf === actor.onBehalfOf) return last;
    const kind = actor.principal === this.host.principals.operator ? 'operator' : 'owner';
    return (this.lastActor = { principal: actor.principal, credential: actor.credential, onBehalfOf: actor.onBehalfOf, grant: null, kind });
  }

  ensureAccepting(principal: string | null = null): void {
    this.ensureHealthy();
    if (principal !== null && (this.backlogByPrincipal.get(principal) ?? 0) >= this.host.backlogPerPrincipalMax) {
      refuse('ERR-DecisionUnavailable', `this caller's share of the decision backlog is at its bound of ${this.host.backlogPerPrincipalMax} commands`);
    }
    if (this.backlog >= this.host.backlogMax) refuse('ERR-DecisionUnavailable', `the decision backlog is at its bound of ${this.host.backlogMax} commands`);
  }

  /** The kernel is deciding and its store writable: what any command needs, whichever path decides it. */
  ensureHealthy(): void {
    if (this.host.health.fatal || this.host.health.closing) refuse('ERR-DecisionUnavailable', 'the service is stopping or has stopped deciding');
    if (this.host.health.writeFailure) refuse('ERR-DecisionUnavailable', 'the store cannot write right now');
  }

  countBacklog(principal: string, delta: 1 | -1): void {
    const count = (this.backlogByPrincipal.get(principal) ?? 0) + delta;
    assert(count >= this.queuedOf(principal), 'a principal\'s backlog count covers what it has waiting');
    if (count === 0) this.backlogByPrincipal.delete(principal);
    else this.backlogByPrincipal.set(principal, count);
    // A command decided (or refused) frees its principal's turn: waiting ones may go on.
    if (delta < 0 && this.queues.has(principal)) this.wake();
  }

  private queuedOf(principal: string): number {
    return this.queues.get(principal)?.length ?? 0;
  }

  /** Commands submitted and not yet decided. */
  get backlog(): number {
    return this.queued + this.inFlightKeys.size + this.host.decideQueueLength();
  }

  /** Of the backlog, the commands `principal` submitted (what its share is measured against). */
  backlogOf(principal: string): number {
    return this.backlogByPrincipal.get(principal) ?? 0;
  }

  private async flushSubmissions(): Promise<void> {
    if (this.submitting) return;
    this.submitting = true;
    try {
      while (this.submitQueue.length > 0) {
        const batch = this.submitQueue.splice(0, bounds.submissionsPerWriteMax);
        const ops: BatchOp[] = [];
        const commands = commandChunkWrites(batch.map((p) => p.op));
        ops.push(...commands.writes, ...operationIndexPuts(batch.map((p) => p.op)));
        for (const p of batch) ops.push({ type: 'put', key: p.ckKey, value: encodeClientKeyRecord({ digest: p.digest, ref: p.op.ref }) });
        ops.push({ type: 'put', key: keys.cseq, value: String(batch[batch.length - 1]!.op.cseq) });
        if (!(await this.host.health.writeOrNote(ops))) {
          const unavailable = new Refused('ERR-DecisionUnavailable', 'the store cannot write right now');
          for (const p of batch) {
            this.inFlightKeys.delete(p.ckKey);
            this.countBacklog(p.op.actor.principal, -1);
            settle(p, unavailable);
          }
          continue;
        }
        this.host.commandChunksWritten(commands.chunks);
        for (const p of batch) {
          this.host.accepted(p.op);
          this.inFlightKeys.delete(p.ckKey);
          settle(p, null);
        }
        this.host.schedule();
      }
    } finally {
      this.submitting = false;
      this.host.notifyIdle();
    }
  }

  /** Whether `principal` submitted a command under `clientKey` (durable or on its way). */
  async tookClientKey(principal: IdentityId, clientKey: string): Promise<boolean> {
    const key = keys.clientKey(principal, clientKey);
    return this.inFlightKeys.has(key) || (await this.host.store.get(key)) !== undefined;
  }
}
