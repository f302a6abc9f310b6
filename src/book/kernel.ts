/**
 * The kernel: the book's only writer. Commands are acknowledged, then decided.
 *
 * - `submit` checks a command against the committed book, then makes it durable
 *   together with its client-key record (many submissions per write) and answers
 *   with the operation in state Received.
 * - One decider takes durable commands in submission order, prefetches what they
 *   read, decides each synchronously (decide.ts), and writes every decision of the
 *   round, with the reservation expiries due, as one atomic batch (group commit).
 *
 * A crash at any instant leaves either a whole write or none of it: commands
 * acknowledged but not decided are still under `cmd/` and are decided on reopen, and
 * a decided command's `cmd/` entry goes in the same batch as its decision, so none is
 * decided twice. The clock and id sources are passed in.
 */
import { assert, AssertionFailure, fail } from '../assert.js';
import { LruCache } from './cache.js';
import { check, recordJson, recordJsonList } from '../model/decode.js';
import {
  decodeAccount,
  decodeBalanceText,
  decodeHead,
  decodeIdentity,
  decodeOperation,
  decodeOperationJson,
  encodeAccount,
  encodeAsset,
  encodeBalance,
  encodeHead,
  encodeIdentity,
  encodeIndexedPosting,
  encodeJournalChunk,
  encodeLeaf,
  encodeOperation,
  keys,
  parseSeqHex,
  prefixEnd,
  storeLayout,
} from '../model/codec.js';
import * as bounds from '../constants.js';
import { type Decision, type Entry, decideExpiry, availableFloorMinor } from '../decide/decide.js';
import { type SettlementInput, decideCommand } from '../decide/decide-settlement.js';
import { depositRefOf, settlementKeys } from '../settlement/book.js';
import { settlementNeeds, settlementFollowUps } from '../settlement/prefetch.js';
import { type ChallengeGate, type DirectCommand, decideSignIn, recordNeeds } from '../decide/decide-auth.js';
import { challengeMacKeyBytes, challengesOutstandingMax } from '../auth/constants.js';
import { type ChallengePurpose, type ChallengeRecord, challengeKey, issueChallenge, openChallenge } from '../auth/challenges.js';
import { expiryHash, expiryScanEnd } from '../auth/expiry.js';
import { type Credential, credentialKey, decodeCredential, tokenKey } from '../auth/credentials.js';
import { type Refusal, Refused, refusal, refuse } from '../errors.js';
import { type Actor, type Principals, actingAuthority, authorityToDebit, builtInPrincipals, opensAccountFor } from '../auth/authority.js';
import { type RecoveryTerms, recoveryTerms } from '../custody/terms.js';
import { custodyNeeds, restrictable } from '../custody/decide-custody.js';
import {
  type Account,
  type Asset,
  type Balance,
  type Command,
  type Head,
  type Identity,
  type Operation,
  type Posting,
  isCustodyCommand,
  moved,
  zeroBalance,
} from '../model/model.js';
import { Overlay } from './overlay.js';
import type { BatchOp, Store } from '../store/port.js';
import type { AccountId, AssetSymbol, CredentialId, GrantId, IdentityId, ReferenceJson } from '../model/values.js';
import { loadAssets } from './assets.js';
import { BookView, readOperation } from '../queries/queries.js';
import { plusBalance, readTotals, totalMinor, totalsWrite } from './totals.js';
import { precheck, precheckNeeds } from '../decide/precheck.js';
import { loadHeldGrants, loadIssuance, loadList, loadRevocation } from '../auth/grant-loader.js';
import { partyPrefix } from '../decide/decide-parties.js';
import { resolveToken } from '../auth/credentials.js';
import type { IdSource } from '../model/ids.js';

export interface KernelOptions {
  readonly store: Store;
  readonly clock: () => number;
  readonly ids: IdSource;
  readonly principals?: Principals;
  /** The key challenges are MAC'd under (the daemon's, kept in its data dir); without it no challenge verifies. */
  readonly challengeMacKey?: Uint8Array;
  readonly cacheEntries?: number;
  readonly backlogMax?: number;
  /** Undecided commands one principal may hold; by default backlogCommandsPerPrincipalMax (at most `backlogMax`). */
  readonly backlogPerPrincipalMax?: number;
  /** fsync each write (durable acknowledgements). Only benchmarks of the difference turn it off. */
  readonly sync?: boolean;
  /** Called once when an invariant breaks; the kernel has stopped deciding. */
  readonly onFatal?: (error: Error) => void;
  /** Called for each poison found: a decision that tripped an assertion alone (its command refused with ERR-Internal). */
  readonly onPoison?: (report: PoisonReport) => void;
  /** Called when the store starts failing (the error) and when the kernel has recovered from it (null). */
  readonly onStoreFailure?: (error: Error | null) => void;
  /** The recovery terms (CONTRACT 8): the authority (default the identities principal) and the delay (default 72 h). */
  readonly recovery?: { readonly authority?: IdentityId; readonly delayMs?: number };
  /** The settlement layer as decisions need it: this deployment's instance, an instruction's lifetime in blocks, the layer's head height now. */
  readonly settlement?: KernelSettlement;
  /** Test seam, called before each precheck and each part of a round is decided: what it throws, they threw. Production passes none. */
  readonly beforeDecide?: (part: RoundPart) => void;
}

export interface KernelSettlement {
  readonly instance: number;
  readonly instructionExpiryBlocks: number;
  readonly layerHeight: () => number;
}

/** One part of a decision round, or a submission's precheck. */
export type RoundPart =
  | { readonly kind: 'command' | 'expiry'; readonly op: Operation }
  | { readonly kind: 'direct'; readonly command: DirectCommand }
  | { readonly kind: 'precheck'; readonly sub: Submission };

export interface PoisonReport {
  /** The operation refused (or whose expiry was given up); null for a direct decision. */
  readonly operation: string | null;
  /** The command type, or 'expiry'. */
  readonly what: string;
  readonly error: Error;
}

export interface Submission {
  readonly command: Command;
  readonly actor: Actor;
  /** The caller's client key, or null to use `requestDigest` as the derived key. */
  readonly clientKey: string | null;
  /** Lowercase hex SHA-256 identifying the request (CONTRACT 4); a reused key must match it. */
  readonly requestDigest: string;
  readonly reference: ReferenceJson | null;
}

export interface Acknowledgement {
  readonly operation: Operation;
  /** True when this is a repeat of an earlier submission under the same client key. */
  readonly repeat: boolean;
}

export interface DecisionEvent {
  readonly seq: number;
  readonly operation: Operation;
}

/** A submission waiting for its intake round. */
interface Intake {
  readonly sub: Submission;
  readonly clientKey: string;
  readonly ckKey: string;
  resolve(ack: Acknowledgement): void;
  reject(error: unknown): void;
}

/** An accepted submission waiting for its durable write. */
interface PendingSubmission {
  readonly op: Operation;
  readonly ckKey: string;
  readonly digest: string;
  readonly durable: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

/** A direct decision waiting for its round. */
interface DirectRequest {
  readonly command: DirectCommand;
  resolve(outcome: Refusal | null): void;
  reject(error: unknown): void;
}

interface ClientKeyRecord {
  readonly digest: string;
  readonly ref: string;
}

/** A stored client-key record (`ck/`), checked. */
function decodeClientKeyRecord(text: string): ClientKeyRecord {
  const j = recordJson(text, 'client key');
  return { digest: check.string(j, 'digest', 'client key'), ref: check.string(j, 'ref', 'client key') };
}

/** A decision of the round tripped an assertion: nothing of the round was written. */
class PoisonedRound extends Error {
  constructor(readonly failure: AssertionFailure) {
    super(failure.message);
  }
}

/** A round decided in memory, waiting for its write. */
interface PlannedRound {
  readonly writes: readonly BatchOp[];
  readonly head: Head;
  readonly overlay: Overlay;
  /** The per-asset totals this round changes, as they stand after it. */
  readonly totals: ReadonlyMap<string, Balance>;
  readonly events: readonly Operation[];
  readonly eventStart: number;
  readonly directOutcomes: readonly (Refusal | null)[];
  /** Challenges issued less those pruned. */
  readonly challengesAdded: number;
  readonly expiring: readonly Operation[];
  /** Assets registered or changed. */
  readonly assets: ReadonlyMap<string, Asset>;
}

export class Kernel {
  readonly principals: Principals;
  /** What every identity is shown before owned custody, and what a reclaim fixes on its account. */
  readonly recoveryTerms: RecoveryTerms;
  private readonly store: Store;
  private readonly clock: () => number;
  private readonly ids: IdSource;
  private readonly sync: boolean;
  private readonly backlogMax: number;
  private readonly backlogPerPrincipalMax: number;
  /** Commands submitted and not yet decided (or refused), by submitting principal. */
  private readonly backlogByPrincipal = new Map<string, number>();
  private readonly onFatal: (error: Error) => void;
  private readonly onPoison: (report: PoisonReport) => void;
  private readonly onStoreFailure: (error: Error | null) => void;
  private readonly beforeDecide: (part: RoundPart) => void;
  private readonly settlement: KernelSettlement;
  private readonly cache: LruCache<Account | Balance | Identity>;
  private assets: ReadonlyMap<string, Asset>;
  private head: Head;
  private nextCseq: number;
  private intakeQueue: Intake[] = [];
  private directQueue: DirectRequest[] = [];
  /** Entries of the used-set (challenges taken, not yet pruned). */
  private challengesOutstanding = 0;
  private readonly challengeMacKey: Uint8Array | null;
  private authPrunedAtMs = 0;
  private intaking = false;
  /** Submissions not yet durable, by client-key store key (a repeat waits on the first). */
  private readonly inFlightKeys = new Map<string, PendingSubmission>();
  private submitQueue: PendingSubmission[] = [];
  private submitting = false;
  /** Durable commands waiting for a decision, in submission order. */
  private decideQueue: Operation[] = [];
  private deciding = false;
  private nextExpiryMs = Number.POSITIVE_INFINITY;
  private expiryTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private writeFailure: Error | null = null;
  private fatal: Error | null = null;
  private closing = false;
  private idleWaiters: (() => void)[] = [];
  private readonly listeners = new Set<(event: DecisionEvent) => void>();
  /** The event chunk read last, parsed: a replay pages through one chunk (up to a round's events) many times. */
  private lastEventChunk: { readonly key: string; readonly events: readonly Record<string, unknown>[] } | null = null;
  /** Per asset, the sum of every balance layer by layer (as stored under tb/); their sum must stay zero (the trial balance). */
  private totals = new Map<string, Balance>();

  private constructor(options: KernelOptions, assets: ReadonlyMap<string, Asset>, head: Head, nextCseq: number) {
    this.store = options.store;
    this.clock = options.clock;
    this.ids = options.ids;
    this.sync = options.sync ?? true;
    this.principals = options.principals ?? builtInPrincipals;
    this.recoveryTerms = recoveryTerms(options.recovery?.authority ?? this.principals.identities, options.recovery?.delayMs ?? bounds.recoveryDelayDefaultMs);
    this.challengeMacKey = options.challengeMacKey ?? null;
    assert(this.challengeMacKey === null || this.challengeMacKey.length === challengeMacKeyBytes, 'a challenge key is 32 bytes');
    this.backlogMax = options.backlogMax ?? bounds.backlogCommandsMax;
    this.backlogPerPrincipalMax = options.backlogPerPrincipalMax ?? Math.min(bounds.backlogCommandsPerPrincipalMax, this.backlogMax);
    assert(this.backlogPerPrincipalMax >= 1 && this.backlogPerPrincipalMax <= this.backlogMax, 'a principal\'s share of the backlog is within it');
    this.onFatal = options.onFatal ?? (() => {});
    this.onPoison = options.onPoison ?? (() => {});
    this.onStoreFailure = options.onStoreFailure ?? (() => {});
    this.beforeDecide = options.beforeDecide ?? (() => {});
    this.settlement = options.settlement ?? { instance: 0, instructionExpiryBlocks: 0, layerHeight: () => 0 };
    const cacheEntries = options.cacheEntries ?? bounds.cacheEntriesDefault;
    assert(cacheEntries >= bounds.cacheEntriesMin, `cache holds at least ${bounds.cacheEntriesMin} entries`);
    this.cache = new LruCache(cacheEntries);
    this.assets = assets;
    this.head = head;
    this.nextCseq = nextCseq;
  }

  /** Opens a sealed book, checks it, and resumes deciding what was acknowledged before. */
  static async open(options: KernelOptions): Promise<Kernel> {
    const { store } = options;
    const sealed = await store.get(keys.sealed);
    if (sealed === undefined) refuse('ERR-InitialStateNotSealed', 'the book has no sealed initial state');
    const layout = (await store.get(keys.layout)) ?? '1';
    if (layout !== storeLayout) fail(`the book is in store layout ${layout}; this ledgerd reads layout ${storeLayout}${layout === '1' ? ': run ledgerd migrate on it (docs/operations.md, Upgrades)' : ''}`);
    const headText = await store.get(keys.head);
    assert(headText !== undefined, 'a sealed book has a head');
    const head = decodeHead(headText);
    const cseqText = await store.get(keys.cseq);
    const nextCseq = Math.max(head.decidedCseq, cseqText === undefined ? 0 : Number(cseqText)) + 1;
    const kernel = new Kernel(options, await loadAssets(store), head, nextCseq);
    await kernel.loadTotals();
    await kernel.countChallenges();
    await kernel.loadBacklog();
    await kernel.refreshNextExpiry();
    kernel.schedule();
    return kernel;
  }

  // ---------------------------------------------------------------- submission

  /** Acknowledges a command (durably) or refuses it. Never decides it here. */
  submit(sub: Submission): Promise<Acknowledgement> {
    const clientKey = sub.clientKey ?? sub.requestDigest;
    assert(clientKey.length > 0 && clientKey.length <= bounds.clientKeyLengthMax, 'client key length checked at the edge');
    return new Promise((resolve, reject) => {
      // Refusals always arrive as a rejected promise, never as a synchronous throw.
      this.ensureAccepting(sub.actor.principal);
      this.countBacklog(sub.actor.principal, 1);
      this.intakeQueue.push({ sub, clientKey, ckKey: keys.clientKey(sub.actor.principal, clientKey), resolve, reject });
      if (!this.intaking) {
        this.intaking = true;
        // Let the submissions of this turn of the event loop gather into one intake round.
        setImmediate(() => void this.runIntake());
      }
    });
  }

  /**
   * Takes submissions in rounds: reads every client-key record and everything the
   * prechecks need in one store round trip each, then handles each submission in
   * order, synchronously. New commands go to the next submission write.
   */
  private async runIntake(): Promise<void> {
    try {
      while (this.intakeQueue.length > 0) {
        const round = this.intakeQueue.splice(0, bounds.submissionsPerWriteMax);
        try {
          await this.intakeRound(round);
        } catch (error) {
          for (const item of round) {
            this.countBacklog(item.sub.actor.principal, -1);
            item.reject(error);
          }
          if (error instanceof AssertionFailure) this.stopFatally(error);
        }
      }
    } finally {
      this.intaking = false;
      this.notifyIdle();
    }
  }

  private async intakeRound(round: readonly Intake[]): Promise<void> {
    const lookups = [...new Set(round.filter((i) => !this.inFlightKeys.has(i.ckKey)).map((i) => i.ckKey))];
    const recordTexts = lookups.length === 0 ? [] : await this.store.getMany(lookups);
    const records = new Map<string, ClientKeyRecord>();
    for (const [i, key] of lookups.entries()) if (recordTexts[i] !== undefined) records.set(key, decodeClientKeyRecord(recordTexts[i]!));

    // The prechecks read the committed book through an overlay of their own, never written.
    const reads = new Overlay(this.assets);
    const fresh = round.filter((item) => !records.has(item.ckKey));
    const accountIds = new Set<AccountId>();
    const opRefs = new Set<string>();
    const identityIds = new Set<string>();
    const recordKeys = new Set<string>();
    for (const item of fresh) {
      const needs = precheckNeeds(item.sub.command);
      for (const id of needs.accounts) accountIds.add(id);
      for (const ref of needs.operations) opRefs.add(ref);
      // The actor's own identity: a restricted one's commands are refused (CONTRACT 10).
      if (restrictable(item.sub.actor.principal, this.principals)) identityIds.add(item.sub.actor.principal);
      for (const id of needs.identities ?? []) identityIds.add(id);
      for (const key of recordNeeds(item.sub.command)) recordKeys.add(key);
    }
    await this.load(reads.identities, [...identityIds].map(keys.identity), decodeIdentity);
    await this.loadRecords(reads, [...recordKeys]);
    for (const ref of opRefs) {
      const op = await this.operation(ref);
      if (op === undefined) continue;
      reads.operations.set(ref, op);
      if (op.command.type === 'reserve') accountIds.add(op.command.payer);
    }
    await this.load(reads.accounts, [...accountIds].map(keys.account), decodeAccount);
    for (const item of fresh) await this.loadGrantNeeds(reads, item.sub.command, item.sub.actor, null);

    let accepted = false;
    for (const item of round) {
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
      const pending = this.accept(item);
      void pending.durable.then(() => item.resolve({ operation: pending.op, repeat: false }), item.reject);
      accepted = true;
    }
    if (accepted) void this.flushSubmissions();
  }

  /** The precheck of one submission; one that throws (a bug its input trips) is refused with ERR-Internal alone. */
  private precheckOne(item: Intake, reads: Overlay): Refusal | null {
    try {
      this.beforeDecide({ kind: 'precheck', sub: item.sub });
      return precheck(item.sub.command, item.sub.actor, reads, this.principals, this.clock(), this.recoveryTerms);
    } catch (error) {
      const failure = error instanceof AssertionFailure ? error : new AssertionFailure(`the precheck threw: ${(error as Error).message}`);
      this.onPoison({ operation: null, what: item.sub.command.type, error: failure });
      return refusal('ERR-Internal');
    }
  }

  /** A repeat is answered from the first submission once that is durable: the latest state, decided once decided. */
  private answerRepeat(item: Intake, inFlight: PendingSubmission | undefined, record: ClientKeyRecord | undefined): void {
    const digest = inFlight ? inFlight.digest : record!.digest;
    if (digest !== item.sub.requestDigest) {
      item.reject(new Refused('ERR-ClientKeyReused', 'the client key was already used for a different request'));
      return;
    }
    const ref = inFlight ? inFlight.op.ref : record!.ref;
    void (inFlight ? inFlight.durable : Promise.resolve())
      .then(() => this.operation(ref))
      .then((op) => {
        assert(op !== undefined, 'a client-key record names a stored operation');
        item.resolve({ operation: op, repeat: true });
      })
      .catch(item.reject);
  }

  private accept(item: Intake): PendingSubmission {
    const cseq = this.nextCseq++;
    const ref = this.ids.operationRef(cseq);
    assert(this.ids.cseqOf(ref) === cseq, 'an operation reference leads back to its command');
    const { sub } = item;
    const op: Operation = {
      ref,
      cseq,
      command: sub.command,
      actor: { principal: sub.actor.principal, credential: sub.actor.credential, onBehalfOf: sub.actor.onBehalfOf, grant: null, kind: sub.actor.principal === this.principals.operator ? 'operator' : 'owner' },
      scope: sub.actor.scope ?? null,
      state: 'Received',
      submittedAtMs: this.clock(),
      decidedAtMs: null,
      clientKey: item.clientKey,
      clientKeyDerived: sub.clientKey === null,
      reference: sub.reference,
      result: null,
      error: null,
      hold: null,
    };
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const durable = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const pending: PendingSubmission = { op, ckKey: item.ckKey, digest: sub.requestDigest, durable, resolve, reject };
    this.inFlightKeys.set(item.ckKey, pending);
    this.submitQueue.push(pending);
    return pending;
  }

  private ensureAccepting(principal: string | null = null): void {
    if (this.fatal || this.closing) refuse('ERR-DecisionUnavailable', 'the service is stopping or has stopped deciding');
    if (this.writeFailure) refuse('ERR-DecisionUnavailable', 'the store cannot write right now');
    if (principal !== null && (this.backlogByPrincipal.get(principal) ?? 0) >= this.backlogPerPrincipalMax) {
      refuse('ERR-DecisionUnavailable', `this caller's share of the decision backlog is at its bound of ${this.backlogPerPrincipalMax} commands`);
    }
    if (this.backlog >= this.backlogMax) refuse('ERR-DecisionUnavailable', `the decision backlog is at its bound of ${this.backlogMax} commands`);
  }

  private countBacklog(principal: string, delta: 1 | -1): void {
    const count = (this.backlogByPrincipal.get(principal) ?? 0) + delta;
    assert(count >= 0, 'a principal\'s backlog count stays non-negative');
    if (count === 0) this.backlogByPrincipal.delete(principal);
    else this.backlogByPrincipal.set(principal, count);
  }

  /** Takes the first `count` commands off the decide queue once their decisions are written. */
  private dequeueDecided(count: number): void {
    for (const op of this.decideQueue.splice(0, count)) this.countBacklog(op.actor.principal, -1);
  }

  /** Commands submitted and not yet decided. */
  get backlog(): number {
    return this.intakeQueue.length + this.inFlightKeys.size + this.decideQueue.length;
  }

  private async flushSubmissions(): Promise<void> {
    if (this.submitting) return;
    this.submitting = true;
    try {
      while (this.submitQueue.length > 0) {
        const batch = this.submitQueue.splice(0, bounds.submissionsPerWriteMax);
        const ops: BatchOp[] = [];
        for (const p of batch) {
          ops.push({ type: 'put', key: keys.command(p.op.cseq), value: encodeOperation(p.op) });
          ops.push({ type: 'put', key: p.ckKey, value: JSON.stringify({ digest: p.digest, ref: p.op.ref } satisfies ClientKeyRecord) });
        }
        ops.push({ type: 'put', key: keys.cseq, value: String(batch[batch.length - 1]!.op.cseq) });
        if (!(await this.writeOrNote(ops))) {
          const unavailable = new Refused('ERR-DecisionUnavailable', 'the store cannot write right now');
          for (const p of batch) {
            this.inFlightKeys.delete(p.ckKey);
            this.countBacklog(p.op.actor.principal, -1);
            p.reject(unavailable);
          }
          continue;
        }
        for (const p of batch) {
          this.decideQueue.push(p.op);
          this.inFlightKeys.delete(p.ckKey);
          p.resolve();
        }
        this.schedule();
      }
    } finally {
      this.submitting = false;
      this.notifyIdle();
    }
  }

  // ---------------------------------------------------------------- deciding

  private schedule(): void {
    if (this.fatal || this.deciding || this.writeFailure) return;
    if (this.decideQueue.length > 0 || this.directQueue.length > 0 || this.nextExpiryMs <= this.clock()) {
      void this.decideLoop();
      return;
    }
    this.armExpiryTimer();
  }

  private armExpiryTimer(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = null;
    if (!Number.isFinite(this.nextExpiryMs) || this.closing) return;
    const delayMs = Math.min(Math.max(0, this.nextExpiryMs - this.clock() + 1), 2 ** 31 - 1);
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
      while (!this.fatal && !this.writeFailure) {
        const atMs = Math.max(this.clock(), this.head.lastAtMs);
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
      this.noteWriteFailure(error instanceof PoisonedRound ? error.failure : (error as Error));
    } finally {
      // Direct decisions of a round that did not complete are answered, never left waiting (settling twice is a no-op).
      for (const d of direct) d.reject(new Refused('ERR-DecisionUnavailable', 'the store cannot write right now'));
      this.deciding = false;
      if (!this.fatal && !this.writeFailure && (this.decideQueue.length > 0 || this.directQueue.length > 0)) void this.decideLoop();
      else {
        this.armExpiryTimer();
        this.notifyIdle();
      }
    }
  }

  private async dueExpiries(atMs: number): Promise<Operation[]> {
    const refs: string[] = [];
    for await (const [key] of this.store.entries({ gte: keys.expiryPrefix, lt: keys.expiry(atMs + 1, ''), limit: bounds.expiriesPerWriteMax })) {
      refs.push(key.slice(keys.expiryPrefix.length + 17));
    }
    const ops = await Promise.all(refs.map((ref) => this.operation(ref)));
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
        this.onPoison({ operation: reservation.ref, what: 'expiry', error: outcome.failure });
        // Its hold stays until it is captured or released; only the automatic expiry is given up.
        if (!(await this.writeOrNote([{ type: 'del', key: keys.expiry(reservation.hold!.deadlineMs, reservation.ref) }]))) return false;
        await this.refreshNextExpiry();
      } else if (!outcome) return false;
    }
    for (const op of batch) {
      let outcome = await alone([op], [], []);
      if (outcome instanceof PoisonedRound) {
        this.onPoison({ operation: op.ref, what: op.command.type, error: outcome.failure });
        outcome = await this.decideRound(atMs, [op], [], [], op.ref);
      }
      if (!outcome) return false;
      assert(this.decideQueue[0] === op, 'a round decides the head of the queue');
      this.dequeueDecided(1);
    }
    for (const d of direct) {
      const outcome = await alone([], [], [d]);
      if (outcome instanceof PoisonedRound) {
        this.onPoison({ operation: null, what: d.command.type, error: outcome.failure });
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
    let round: PlannedRound;
    try {
      round = await this.planRound(atMs, batch, expiring, direct, poisonRef);
    } catch (error) {
      if (error instanceof AssertionFailure) throw new PoisonedRound(error);
      throw error;
    }
    return this.commitRound(round, direct);
  }

  /** Decides a round in memory: the batch to write and what follows it. Writes nothing. */
  private async planRound(atMs: number, batch: readonly Operation[], expiring: readonly Operation[], direct: readonly DirectRequest[], poisonRef: string | null): Promise<PlannedRound> {
    const overlay = await this.prefetch(batch, expiring, direct);
    const writes: BatchOp[] = [];
    const events: Operation[] = [];
    let postingSeq = this.head.postingSeq;
    const deltas = new Map<string, Balance>();
    /** The round's journal entries, written in chunks. */
    const leaves: string[] = [];
    let accountsOpened = 0;

    const post = (op: Operation, entries: readonly Entry[]): number[] => {
      const seqs: number[] = [];
      const perAsset = new Map<string, bigint>();
      for (const entry of entries) {
        const seq = ++postingSeq;
        const signed = entry.direction === 'credit' ? entry.amountMinor : -entry.amountMinor;
        perAsset.set(entry.asset, (perAsset.get(entry.asset) ?? 0n) + signed);
        deltas.set(entry.asset, moved(deltas.get(entry.asset) ?? zeroBalance, entry.layer, signed));
        const after = moved(overlay.balance(entry.account, entry.asset), entry.layer, signed);
        this.assertWithinFloor(overlay.account(entry.account), entry.asset, after);
        overlay.setBalance(entry.account, entry.asset, after);
        const posting: Posting = {
          seq,
          atMs,
          account: entry.account,
          asset: entry.asset,
          amountMinor: entry.amountMinor,
          direction: entry.direction,
          layer: entry.layer,
          kind: entry.kind,
          status: entry.status,
          operation: op.ref,
          counterparty: entry.counterparty,
          authorities: entry.authorities,
          reference: op.reference,
          after,
        };
        const leaf = encodeLeaf(posting);
        leaves.push(leaf);
        writes.push({ type: 'put', key: keys.accountAsset(entry.account, entry.asset, seq), value: encodeIndexedPosting(leaf, posting.reference) });
        seqs.push(seq);
      }
      for (const [asset, sum] of perAsset) if (sum !== 0n) fail(`operation ${op.ref} balances in ${asset} (off by ${sum})`);
      return seqs;
    };
    const record = (op: Operation) => {
      overlay.setOperation(op);
      events.push(op);
    };

    for (const reservation of expiring) {
      this.beforeDecide({ kind: 'expiry', op: reservation });
      const postings = post(reservation, decideExpiry(reservation));
      writes.push({ type: 'del', key: keys.expiry(reservation.hold!.deadlineMs, reservation.ref) });
      record({ ...reservation, state: 'Expired', hold: null, result: { postings: [...(reservation.result?.postings ?? []), ...postings] } });
    }

    for (const op of batch) {
      const decision: Decision = this.decideCommand(op, overlay, atMs, poisonRef);
      writes.push({ type: 'del', key: keys.command(op.cseq) });
      if (!decision.ok) {
        record({ ...op, state: decision.state, decidedAtMs: atMs, error: decision.error });
        continue;
      }
      const postings = post(op, decision.entries);
      for (const r of decision.records) overlay.setRecord(r.key, r.value);
      if (decision.newIdentity) overlay.setIdentity(decision.newIdentity);
      let result: Operation['result'] = decision.entries.length > 0 ? { ...decision.result, postings } : decision.result;
      for (const asset of decision.assets ?? []) overlay.setAsset(asset);
      for (const account of decision.accounts ?? []) {
        if (overlay.account(account.id) === undefined) accountsOpened++;
        overlay.setAccount(account);
      }
      for (const identity of decision.identities ?? []) overlay.setIdentity(identity);
      if (decision.openAccount) {
        const account = decision.openAccount;
        overlay.setAccount(account);
        // Deposits on the settlement layer name the account by its deposit reference.
        overlay.setRecord(settlementKeys.depositRef(depositRefOf(account.id)), account.id);
        const owner = overlay.identity(account.owner)!;
        overlay.setIdentity({ ...owner, accounts: [...owner.accounts, account.id] });
        accountsOpened++;
        result = { account: account.id };
      }
      if (decision.hold) writes.push({ type: 'put', key: keys.expiry(decision.hold.deadlineMs, op.ref), value: '' });
      record({ ...op, state: decision.state, decidedAtMs: atMs, result, hold: decision.hold });
      for (const move of decision.moves ?? []) {
        const moving = overlay.operation(move.ref)!;
        const movedPostings = post(moving, move.entries);
        record({ ...moving, state: move.state, result: { ...moving.result, postings: [...(moving.result?.postings ?? []), ...movedPostings] } });
      }
      if (decision.follow) {
        const reservation = overlay.operation(decision.follow.ref)!;
        writes.push({ type: 'del', key: keys.expiry(reservation.hold!.deadlineMs, reservation.ref) });
        record({ ...reservation, state: decision.follow.state, hold: null, result: { postings: [...(reservation.result?.postings ?? []), ...postings] } });
      }
    }

    const directOutcomes = direct.map((d) => {
      this.beforeDecide({ kind: 'direct', command: d.command });
      const outcome = decideSignIn(d.command, overlay, atMs, this.challengeGate());
      if (!('error' in outcome)) for (const r of outcome) overlay.setRecord(r.key, r.value);
      return 'error' in outcome ? outcome : null;
    });
    // Challenges taken this round: each adds its expiry index entry to the used-set.
    const challengesTaken = [...overlay.dirtyRecords].filter((key) => key.startsWith('chalx/') && overlay.records.get(key) !== undefined).length;
    const pruned = await this.expiredAuthRecords(atMs, overlay);
    for (const key of overlay.dirtyRecords) {
      const value = overlay.records.get(key);
      writes.push(value === undefined ? { type: 'del', key } : { type: 'put', key, value });
    }

    for (let i = 0; i < leaves.length; i += bounds.journalChunkEntriesMax) {
      const firstSeq = this.head.postingSeq + 1 + i;
      writes.push({ type: 'put', key: keys.journal(firstSeq), value: encodeJournalChunk(leaves.slice(i, i + bounds.journalChunkEntriesMax)) });
      writes.push({ type: 'put', key: keys.journalTime(atMs, firstSeq), value: '' });
    }
    const totals = new Map<string, Balance>();
    for (const [symbol, asset] of overlay.dirtyAssets) {
      writes.push({ type: 'put', key: keys.asset(symbol), value: encodeAsset(asset) });
      // A new asset's totals start at zero (a sealed book keeps totals for every registered asset).
      if (!this.totals.has(symbol)) {
        totals.set(symbol, zeroBalance);
        writes.push(totalsWrite(symbol, zeroBalance));
      }
    }
    for (const [asset, delta] of deltas) {
      assert(totalMinor(delta) === 0n, `the round balances in ${asset}`);
      // A round of transfers alone moves no layer's total: nothing to write.
      if (delta.available === 0n && delta.reserved === 0n && delta.encumbered === 0n) continue;
      const total = plusBalance(totals.get(asset) ?? this.totals.get(asset)!, delta);
      totals.set(asset, total);
      writes.push(totalsWrite(asset, total));
    }
    for (const key of overlay.dirtyBalances) writes.push({ type: 'put', key, value: JSON.stringify(encodeBalance(overlay.balances.get(key)!)) });
    for (const key of overlay.dirtyAccounts) writes.push({ type: 'put', key, value: encodeAccount(overlay.accounts.get(key)!) });
    for (const key of overlay.dirtyIdentities) writes.push({ type: 'put', key, value: encodeIdentity(overlay.identities.get(key)!) });
    // Every changed operation has an event; each is encoded once, for its event and its record.
    const encoded = events.map(encodeOperation);
    const latest = new Map<string, string>();
    for (const [i, op] of events.entries()) latest.set(op.ref, encoded[i]!);
    assert(latest.size === overlay.dirtyOperations.size, 'every changed operation has an event');
    for (const [ref, text] of latest) writes.push({ type: 'put', key: keys.operation(ref), value: text });
    const eventStart = this.head.eventSeq;
    if (events.length > 0) {
      writes.push({ type: 'put', key: keys.eventChunk(eventStart + 1), value: `[${encoded.join(',')}]` });
      const expired = await this.expiredEventChunk(eventStart + events.length);
      if (expired !== null) writes.push({ type: 'del', key: expired });
    }
    const head: Head = {
      decidedCseq: batch.length > 0 ? batch[batch.length - 1]!.cseq : this.head.decidedCseq,
      postingSeq,
      eventSeq: eventStart + events.length,
      lastAtMs: atMs,
      accounts: this.head.accounts + accountsOpened,
    };
    writes.push({ type: 'put', key: keys.head, value: encodeHead(head) });
    return { writes, head, overlay, totals, events, eventStart, directOutcomes, challengesAdded: challengesTaken - pruned.challenges, expiring, assets: overlay.dirtyAssets };
  }

  /** Writes a planned round; once it is durable, the cache, head and listeners follow. False when the write failed. */
  private async commitRound(round: PlannedRound, direct: readonly DirectRequest[]): Promise<boolean> {
    const { writes, head, overlay, totals, events, eventStart, directOutcomes, challengesAdded, expiring, assets } = round;
    if (!(await this.writeOrNote(writes))) return false;
    if (assets.size > 0) this.assets = new Map([...this.assets, ...assets]);
    this.challengesOutstanding += challengesAdded;
    for (const [i, d] of direct.entries()) d.resolve(directOutcomes[i]!);

    // Committed: the cache and the in-memory head now follow the store.
    for (const key of overlay.dirtyBalances) this.cache.set(key, overlay.balances.get(key)!);
    for (const key of overlay.dirtyAccounts) this.cache.set(key, overlay.accounts.get(key)!);
    for (const key of overlay.dirtyIdentities) this.cache.set(key, overlay.identities.get(key)!);
    for (const [asset, total] of totals) {
      this.totals.set(asset, total);
      assert(totalMinor(total) === 0n, `the trial balance is zero in ${asset}`);
    }
    this.head = head;
    if (expiring.length > 0 || events.some((op) => op.command.type === 'reserve')) await this.refreshNextExpiry();
    for (const [i, op] of events.entries()) this.emit({ seq: eventStart + i + 1, operation: op });
    return true;
  }

  /** One command's decision; a command found to be poison is refused with ERR-Internal. */
  private decideCommand(op: Operation, overlay: Overlay, atMs: number, poisonRef: string | null): Decision {
    if (op.ref === poisonRef) return { ok: false, state: 'Rejected', error: refusal('ERR-Internal') };
    try {
      this.beforeDecide({ kind: 'command', op });
      return decideCommand(op, overlay, this.decisionInput(atMs, op.cseq));
    } catch (error) {
      // A pure decision reads only the overlay: whatever it throws is a bug, like a failed assertion.
      if (error instanceof AssertionFailure) throw error;
      throw new AssertionFailure(`deciding ${op.ref} threw: ${(error as Error).message}`);
    }
  }

  private decisionInput(atMs: number, cseq: number): SettlementInput {
    return {
      atMs,
      layerHeight: this.settlement.layerHeight(),
      instance: this.settlement.instance,
      instructionExpiryBlocks: this.settlement.instructionExpiryBlocks,
      principals: this.principals,
      newAccountId: this.ids.accountId(cseq),
      newIdentityId: this.ids.identityId(cseq),
      newCredentialId: this.ids.credentialId(cseq),
      newGrantId: this.ids.grantId(cseq),
      newPartyId: this.ids.partyId(cseq),
      challenges: this.challengeGate(),
      terms: this.recoveryTerms,
    };
  }

  /** Bounded: past the used-set's bound a ceremony is told to retry rather than the store growing without limit. */
  private challengeGate(): ChallengeGate {
    return { macKey: this.challengeMacKey, usedSetFull: this.challengesOutstanding >= challengesOutstandingMax };
  }

  /**
   * Expired challenges and sessions, deleted in this round (at most once a second,
   * a bounded number each time): their index entries and the records they name.
   */
  private async expiredAuthRecords(atMs: number, overlay: Overlay): Promise<{ challenges: number }> {
    if (atMs - this.authPrunedAtMs < bounds.authPruneIntervalMs) return { challenges: 0 };
    this.authPrunedAtMs = atMs;
    let challenges = 0;
    for (const [space, recordKey] of [['chalx', (h: string) => `chal/${h}`], ['tokx', tokenKey]] as const) {
      for await (const [key] of this.store.entries({ gte: `${space}/`, lt: expiryScanEnd(space, atMs), limit: bounds.expiriesPerWriteMax })) {
        overlay.setRecord(key, null);
        overlay.setRecord(recordKey(expiryHash(key)), null);
        if (space === 'chalx') challenges++;
      }
    }
    return { challenges };
  }

  /** The oldest event chunk, once every event in it is older than the retention bound. */
  private async expiredEventChunk(lastSeq: number): Promise<string | null> {
    if (lastSeq <= bounds.eventsRetainedMax) return null;
    const chunks: string[] = [];
    for await (const [key] of this.store.entries({ gte: keys.eventPrefix, lt: prefixEnd(keys.eventPrefix), limit: 2 })) chunks.push(key);
    if (chunks.length < 2) return null;
    // The second chunk's first event is one past the oldest chunk's last.
    const oldestLast = parseSeqHex(chunks[1]!.slice(keys.eventPrefix.length)) - 1;
    return oldestLast <= lastSeq - bounds.eventsRetainedMax ? chunks[0]! : null;
  }

  private assertWithinFloor(account: Account | undefined, asset: AssetSymbol, after: Balance): void {
    if (account === undefined) fail('entries name known accounts');
    if (after.available < availableFloorMinor(account, asset)) fail(`${account.id} available in ${asset} stays above its floor`);
    if (after.reserved < 0n || after.encumbered < 0n) fail(`${account.id} reserved and encumbered in ${asset} stay non-negative`);
  }

  /** Reads everything a round's decisions need, from the cache or in one store round trip per kind. */
  private async prefetch(batch: readonly Operation[], expiring: readonly Operation[], direct: readonly DirectRequest[]): Promise<Overlay> {
    const overlay = new Overlay(this.assets);
    await this.loadRecords(overlay, [...batch.map((op) => op.command), ...direct.map((d) => d.command)].flatMap(recordNeeds));
    const accountIds = new Set<string>();
    const balanceKeys = new Set<string>();
    const identityIds = new Set<string>();
    const needBalance = (account: string, asset: string) => {
      accountIds.add(account);
      balanceKeys.add(keys.balance(account, asset));
    };

    const reservationRefs = new Set<string>();
    for (const op of batch) {
      const c = op.command;
      if (c.type === 'capture' || c.type === 'release') reservationRefs.add(c.reservation);
    }
    const inBatch = new Map(batch.map((op) => [op.ref, op]));
    for (const ref of reservationRefs) {
      if (inBatch.has(ref)) continue;
      const op = await this.operation(ref);
      if (op) overlay.operations.set(op.ref, op);
    }
    for (const op of [...expiring, ...batch]) overlay.operations.set(op.ref, op);

    for (const op of expiring) needBalance(op.hold!.payer, op.hold!.asset);
    /** Accounts whose every balance a decision reads (a recovery's sweep, a close). */
    const wholeAccounts = new Set<string>();
    for (const op of batch) {
      const c = op.command;
      // Every command reads its actor's identity: a restricted one's commands are refused (CONTRACT 10).
      if (restrictable(op.actor.principal, this.principals)) identityIds.add(op.actor.principal);
      if (isCustodyCommand(c)) {
        const needs = custodyNeeds(c, null);
        for (const id of needs.accounts) accountIds.add(id);
        for (const id of needs.identities) identityIds.add(id);
        // A recovery's sweep and a close read every balance of the account.
        if (c.type === 'complete_custody_change' || c.type === 'close_account') wholeAccounts.add(c.account);
        continue;
      }
      switch (c.type) {
        case 'transfer':
          for (const leg of c.legs) {
            needBalance(leg.from, leg.asset);
            needBalance(leg.to, leg.asset);
          }
          break;
        case 'reserve':
          needBalance(c.payer, c.asset);
          break;
        case 'capture':
        case 'release': {
          const reservation = overlay.operations.get(c.reservation);
          if (reservation?.command.type === 'reserve') {
            needBalance(reservation.command.payer, reservation.command.asset);
            if (c.type === 'capture') needBalance(c.to, reservation.command.asset);
          }
          if (c.type === 'capture') accountIds.add(c.to);
          break;
        }
        case 'open_account':
          identityIds.add(c.owner);
          accountIds.add(this.ids.accountId(op.cseq));
          break;
        case 'create_identity':
          identityIds.add(this.ids.identityId(op.cseq));
          break;
        case 'register_credential':
          identityIds.add(c.identity);
          break;
        case 'issue_grant':
          for (const id of precheckNeeds(c).accounts) accountIds.add(id);
          break;
        case 'revoke_grant':
          break;
        case 'register_party':
          for (const principal of c.principals) identityIds.add(principal);
          await loadList(this.store, overlay, partyPrefix, bounds.integratingPartiesMax);
          break;
        case 'withdraw':
          needBalance(c.account, c.asset);
          await loadList(this.store, overlay, settlementKeys.accountPendingPrefix(c.account), bounds.pendingWithdrawalsPerAccountMax);
          break;
        case 'register_asset':
        case 'deprecate_asset':
          break;
        case 'bind_asset':
        case 'settle':
        case 'observe': {
          // Two steps: the records the layer's facts name, then the accounts and withdrawals those records name.
          const recordKeys = settlementNeeds(c).filter((key) => !overlay.records.has(key));
          const texts = await this.store.getMany(recordKeys);
          for (const [i, key] of recordKeys.entries()) overlay.records.set(key, texts[i]);
          for (const ref of settlementFollowUps(c, overlay).operations) {
            if (overlay.operations.has(ref)) continue;
            const found = await this.operation(ref);
            if (found) overlay.operations.set(ref, found);
          }
          // Read again now that the withdrawals are in: their accounts and balances.
          const followUps = settlementFollowUps(c, overlay);
          for (const [account, asset] of followUps.balances) needBalance(account, asset);
          for (const account of followUps.accounts) accountIds.add(account);
          break;
        }
      }
    }
    await this.load(overlay.accounts, [...accountIds].map(keys.account), decodeAccount);
    await this.prefetchCompletions(overlay, batch, needBalance, identityIds);
    for (const id of wholeAccounts) for (const asset of this.assets.keys()) needBalance(id, asset);
    await this.load(overlay.identities, [...identityIds].map(keys.identity), decodeIdentity);
    const balances = new Map<string, Balance | undefined>();
    await this.load(balances, [...balanceKeys], (t) => decodeBalanceText(t));
    for (const [key, b] of balances) overlay.balances.set(key, b ?? zeroBalance);
    for (const op of batch) await this.loadGrantNeeds(overlay, op.command, { ...op.actor, scope: op.scope }, this.ids.grantId(op.cseq));
    return overlay;
  }

  /**
   * What completing a custody change reads besides the account: the change's new owner
   * and the recovery's destination, every balance of which the sweep may credit. The
   * change is on the committed account record: the precheck accepted the completion only
   * once the change was decided, so it was opened in an earlier round.
   */
  private async prefetchCompletions(overlay: Overlay, batch: readonly Operation[], needBalance: (account: string, asset: string) => void, identityIds: Set<string>): Promise<void> {
    const extra = new Set<string>();
    for (const op of batch) {
      const c = op.command;
      if (c.type !== 'complete_custody_change') continue;
      const needs = custodyNeeds(c, { account: (id) => overlay.accounts.get(keys.account(id)) });
      for (const id of needs.identities) identityIds.add(id);
      for (const id of needs.accounts) {
        if (!overlay.accounts.has(keys.account(id))) extra.add(id);
        for (const asset of this.assets.keys()) needBalance(id, asset);
      }
    }
    await this.load(overlay.accounts, [...extra].map(keys.account), decodeAccount);
  }

  /** Loads records by key into `overlay` (as stored text; undefined when absent), in one round trip. */
  private async loadRecords(overlay: Overlay, recordKeys: readonly string[]): Promise<void> {
    if (recordKeys.length === 0) return;
    const texts = await this.store.getMany(recordKeys);
    for (const [i, key] of recordKeys.entries()) overlay.records.set(key, texts[i]);
  }

  /**
   * Grants a decision (or precheck) of `command` reads: the actor's held grants when
   * it may lack authority of its own over an account it debits, opens or finishes a
   * reservation on (an account unknown now may be opened earlier in the same round),
   * what a grant's issuance or revocation walks. Accounts and reservations are already
   * in the overlay. `newGrant` is the id an issuance would draw (null at intake).
   */
  private async loadGrantNeeds(overlay: Overlay, command: Command, actor: Actor, newGrant: GrantId | null): Promise<void> {
    const lacksAuthority = (id: AccountId) => {
      const account = overlay.accounts.get(keys.account(id));
      return account === undefined || authorityToDebit(actor, account, this.principals) === null;
    };
    switch (command.type) {
      case 'transfer':
      case 'reserve':
      case 'withdraw':
        if (precheckNeeds(command).accounts.some(lacksAuthority)) await loadHeldGrants(this.store, overlay, actor.principal);
        return;
      case 'capture':
      case 'release': {
        const reservation = overlay.operations.get(command.reservation);
        const payer = reservation?.command.type === 'reserve' ? overlay.accounts.get(keys.account(reservation.command.payer)) : undefined;
        // Without authority of its own over the payer (the operator has none over an owned account), only a grant serves.
        if (payer === undefined || actingAuthority(actor, this.principals, payer) === null) await loadHeldGrants(this.store, overlay, actor.principal);
        return;
      }
      case 'open_account':
        if (!opensAccountFor(actor, command.owner, this.principals)) await loadHeldGrants(this.store, overlay, actor.principal);
        return;
      case 'issue_grant':
        return loadIssuance(this.store, overlay, { grantor: actor.principal, holder: command.terms.principal, parent: command.terms.parent, newGrant });
      case 'revoke_grant':
        return loadRevocation(this.store, overlay, command.grant);
      default:
        return;
    }
  }

  private async load<T extends Account | Balance | Identity>(into: Map<string, T | undefined>, storeKeys: readonly string[], decode: (text: string) => T): Promise<void> {
    const misses: string[] = [];
    for (const key of storeKeys) {
      const cached = this.cache.get(key) as T | undefined;
      if (cached !== undefined) into.set(key, cached);
      else misses.push(key);
    }
    if (misses.length === 0) return;
    const texts = await this.store.getMany(misses);
    for (const [i, key] of misses.entries()) {
      const text = texts[i];
      const value = text === undefined ? undefined : decode(text);
      into.set(key, value);
      if (value !== undefined) this.cache.set(key, value);
    }
  }

  /** Writes one atomic batch, or notes the failure (and writes nothing while one stands). False when not written. */
  private async writeOrNote(ops: readonly BatchOp[]): Promise<boolean> {
    if (this.writeFailure || this.fatal) return false;
    try {
      await this.store.write(ops, this.sync);
      return true;
    } catch (error) {
      this.noteWriteFailure(error as Error);
      return false;
    }
  }

  private noteWriteFailure(error: Error): void {
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
    if (this.intaking || this.submitting || this.deciding) return this.armRecovery();
    try {
      await this.store.recover();
      await this.reloadState();
    } catch (error) {
      if (error instanceof AssertionFailure) return this.stopFatally(error);
      return this.armRecovery();
    }
    this.writeFailure = null;
    this.onStoreFailure(null);
    this.schedule();
  }

  private async reloadState(): Promise<void> {
    const headText = await this.store.get(keys.head);
    assert(headText !== undefined, 'a sealed book has a head');
    this.head = decodeHead(headText);
    this.cache.clear();
    this.decideQueue = [];
    this.backlogByPrincipal.clear();
    await this.loadBacklog();
    await this.loadTotals();
    this.challengesOutstanding = 0;
    await this.countChallenges();
    await this.refreshNextExpiry();
  }

  private stopFatally(error: Error): void {
    if (this.fatal) return;
    this.fatal = error;
    for (const p of this.submitQueue) p.reject(new Refused('ERR-DecisionUnavailable', 'the service has stopped deciding'));
    this.submitQueue = [];
    this.notifyIdle();
    this.onFatal(error);
  }

  // ---------------------------------------------------------------- recovery

  private async loadBacklog(): Promise<void> {
    for await (const [key, text] of this.store.entries({ gte: keys.commandPrefix, lt: prefixEnd(keys.commandPrefix), limit: Number.MAX_SAFE_INTEGER })) {
      const op = decodeOperation(text);
      assert(parseSeqHex(key.slice(keys.commandPrefix.length)) === op.cseq && op.cseq > this.head.decidedCseq, 'an undecided command follows the last decided one');
      assert(op.state === 'Received', 'an undecided command is a Received operation');
      this.decideQueue.push(op);
      this.countBacklog(op.actor.principal, 1);
    }
  }

  private async refreshNextExpiry(): Promise<void> {
    this.nextExpiryMs = Number.POSITIVE_INFINITY;
    for await (const [key] of this.store.entries({ gte: keys.expiryPrefix, lt: prefixEnd(keys.expiryPrefix), limit: 1 })) {
      this.nextExpiryMs = parseSeqHex(key.slice(keys.expiryPrefix.length, keys.expiryPrefix.length + 16));
    }
  }

  private async countChallenges(): Promise<void> {
    for await (const _ of this.store.entries({ gte: 'chal/', lt: 'chal0', limit: challengesOutstandingMax })) this.challengesOutstanding++;
  }

  /** Reads the per-asset totals (one read per asset, whatever the book's size); the trial balance must be zero. */
  private async loadTotals(): Promise<void> {
    const totals = await readTotals(this.store, this.assets.keys());
    for (const [asset, total] of totals) assert(totalMinor(total) === 0n, `the reopened book's trial balance is zero in ${asset}`);
    this.totals = totals;
  }

  // ---------------------------------------------------------------- direct decisions

  /**
   * Decides a sign-in in the next round and resolves with
   * null (done) or the refusal. Not an acknowledged command: nothing is durable until
   * the round's write, and a caller that loses its answer starts a new ceremony.
   */
  decideDirect(command: DirectCommand): Promise<Refusal | null> {
    return new Promise((resolve, reject) => {
      this.ensureAccepting();
      this.directQueue.push({ command, resolve, reject });
      this.schedule();
    });
  }

  /**
   * A new challenge (endpoint 1) over `randomBytes` drawn by the caller: MAC'd, not
   * stored, so issuing costs no state and takes no round. Deterministic in its inputs.
   */
  issueChallenge(input: { purpose: ChallengePurpose; identity: IdentityId | null; randomBytes: Uint8Array; nowMs: number }) {
    assert(this.challengeMacKey !== null, 'challenges are issued under a challenge key');
    return issueChallenge({ ...input, macKey: this.challengeMacKey });
  }

  /** A challenge's terms for `identity`'s set, used or not: the edge refuses a ceremony over one that cannot serve at once (the decision takes it). */
  async challenge(text: string, identity: IdentityId | null): Promise<ChallengeRecord | Refusal> {
    const opened = this.challengeMacKey === null ? refusal('ERR-CredentialInvalid', 'the challenge is unknown') : openChallenge(this.challengeMacKey, text, identity);
    if ('error' in opened) return opened;
    return { ...opened, used: (await this.store.get(challengeKey(text))) !== undefined };
  }

  /** Whether `principal` submitted a command under `clientKey` (durable or on its way). */
  async tookClientKey(principal: IdentityId, clientKey: string): Promise<boolean> {
    const key = keys.clientKey(principal, clientKey);
    return this.inFlightKeys.has(key) || (await this.store.get(key)) !== undefined;
  }

  /** A stored credential (the edge verifies ceremonies against it). */
  async credential(id: CredentialId): Promise<Credential | undefined> {
    const text = await this.store.get(credentialKey(id));
    return text === undefined ? undefined : decodeCredential(text);
  }

  // ---------------------------------------------------------------- reads

  async operation(ref: string): Promise<Operation | undefined> {
    return readOperation(this.store, ref, this.ids.cseqOf);
  }

  /** The caller a bearer token authenticates, or null (missing, unknown, expired). */
  authenticate(token: string) {
    return resolveToken(this.store, token, this.clock());
  }

  /** A settlement record of the book as committed now (src/settlement/book.ts). */
  settlementRecord(key: string): Promise<string | undefined> {
    return this.store.get(key);
  }

  /** Settlement records from `fromKey` (inclusive) to the end of `prefix`, in key order, at most `limit`. */
  async settlementRecords(prefix: string, fromKey: string, limit: number): Promise<[string, string][]> {
    const out: [string, string][] = [];
    for await (const entry of this.store.entries({ gte: fromKey < prefix ? prefix : fromKey, lt: prefixEnd(prefix), limit })) out.push(entry);
    return out;
  }

  /** The store itself, for checks that read the book raw (tests, offline verification). */
  get storeForChecks(): Store {
    return this.store;
  }

  /** A consistent view of the book as of now, for queries. Close it when done. */
  openView(): Promise<BookView> {
    // Read the floor and take the snapshot in the same tick, so no round slips between.
    const floorMs = this.decisionTimeFloorMs;
    return BookView.open(this.store.snapshot(), this.assets, this.principals, floorMs, this.ids.cseqOf);
  }

  get assetList(): readonly Asset[] {
    return [...this.assets.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  get currentHead(): Head {
    return this.head;
  }

  /**
   * Decision times from here on are at least this (statements use it for `closed`):
   * a round in flight was given its time already and is not in any snapshot yet.
   */
  get decisionTimeFloorMs(): number {
    return this.deciding ? this.head.lastAtMs : Math.max(this.clock(), this.head.lastAtMs);
  }

  // ---------------------------------------------------------------- events and lifecycle

  /**
   * The operation once decided (out of Received), or null when `timeoutMs` passes
   * first. Bounded: one listener, removed on either outcome.
   */
  decision(ref: string, timeoutMs: number): Promise<Operation | null> {
    return new Promise((resolve) => {
      const finish = (op: Operation | null) => {
        clearTimeout(timer);
        off();
        resolve(op);
      };
      const off = this.onDecision((event) => {
        if (event.operation.ref === ref && event.operation.state !== 'Received') finish(event.operation);
      });
      const timer = setTimeout(() => finish(null), timeoutMs);
      timer.unref();
      // Listening first, then reading: a decision written in between is seen either way.
      // A read that fails leaves the timeout to answer.
      this.operation(ref).then((op) => {
        if (op !== undefined && op.state !== 'Received') finish(op);
      }, () => {});
    });
  }

  onDecision(listener: (event: DecisionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: DecisionEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** Stored events after `afterSeq`, oldest first, at most `limit`. */
  async eventsAfter(afterSeq: number, limit: number): Promise<DecisionEvent[]> {
    // The chunk holding event afterSeq+1 is the last one starting at or before it.
    let from = keys.eventChunk(afterSeq + 1);
    for await (const [key] of this.store.entries({ gte: keys.eventPrefix, lte: from, reverse: true, limit: 1 })) from = key;
    const out: DecisionEvent[] = [];
    // Each chunk holds at least one event, so `limit` chunks always suffice.
    for await (const [key, value] of this.store.entries({ gte: from, lt: prefixEnd(keys.eventPrefix), limit })) {
      const first = parseSeqHex(key.slice(keys.eventPrefix.length));
      // A chunk is written once under a key never reused, so its parse can be kept.
      if (this.lastEventChunk?.key !== key) this.lastEventChunk = { key, events: recordJsonList(value, 'event chunk') };
      const { events } = this.lastEventChunk;
      for (let i = Math.max(0, afterSeq + 1 - first); i < events.length && out.length < limit; i++) {
        out.push({ seq: first + i, operation: decodeOperationJson(events[i]!) });
      }
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Resolves when nothing is waiting to be written or decided (tests, shutdown). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Runs a decision round now if anything is due (tests move their clock, then poke). */
  poke(): Promise<void> {
    this.schedule();
    return this.idle();
  }

  private isIdle(): boolean {
    return this.fatal !== null || this.writeFailure !== null || (!this.intaking && !this.submitting && !this.deciding && this.intakeQueue.length === 0 && this.submitQueue.length === 0 && this.decideQueue.length === 0 && this.directQueue.length === 0);
  }

  private notifyIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  get fatalError(): Error | null {
    return this.fatal;
  }

  get writeAvailable(): boolean {
    return this.writeFailure === null && this.fatal === null;
  }

  /** Stops accepting, finishes every decision in flight, and closes the store. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    while (!this.isIdle()) await this.idle();
    this.listeners.clear();
    await this.store.close();
  }
}
