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
import { buildOperationIndex } from '../queries/operation-index.js';
import { assert, fail } from '../assert.js';
import { type Actor, type Principals, builtInPrincipals } from '../auth/authority.js';
import { type ChallengePurpose, type ChallengeRecord, challengeKey, issueChallenge, openChallenge } from '../auth/challenges.js';
import { challengeMacKeyBytes } from '../auth/constants.js';
import { type Credential, decodeCredential, resolveToken } from '../auth/credentials.js';
import * as bounds from '../constants.js';
import { type RecoveryTerms, recoveryTerms } from '../custody/terms.js';
import type { DirectCommand } from '../decide/decide-auth.js';
import { type Refusal, refusal, refuse } from '../errors.js';
import { decodeAccount, decodeHead, decodeIdentity } from '../model/codec.js';
import { type GatedAccount, commandGate } from '../decide/gates.js';
import type { IdSource } from '../model/ids.js';
import { approvalPolicyKey, credentialKey, keys, memberKey, memberPrefix, prefixEnd, storeLayout } from '../model/keys.js';
import { migratableLayout } from './migrate-grant-index.js';
import { type ApprovalPolicy, decodePolicy, defaultPolicy } from '../auth/approvals.js';
import { membersMax } from '../constants.js';
import { type Member, decodeMember, memberWrite, rootMember } from '../auth/members.js';
import type { Asset, Head, Operation } from '../model/model.js';
import type { CredentialId, IdentityId } from '../model/values.js';
import { BookView } from '../queries/queries.js';
import type { Store } from '../store/port.js';
import { loadAssets } from './assets.js';
import { Decider } from './decider.js';
import { DecisionEvents } from './events.js';
import { Intake } from './intake.js';
import type { Acknowledgement, DecisionEvent, KernelOptions, KernelSettlement, RoundPart, Submission } from './kernel-types.js';
import { BookReader } from './prefetch.js';
import { StoreHealth } from './recovery.js';
import type { RoundContext } from './round-builder.js';
import { BookState } from './state.js';

export type { Acknowledgement, DecisionEvent, KernelOptions, KernelSettlement, PoisonReport, RoundPart, Submission } from './kernel-types.js';

/**
 * The facade the daemon uses. Its parts, each one job: intake.ts (submissions, the
 * backlog), decider.ts (rounds, scheduling, expiries), prefetch.ts (what a round reads),
 * round-builder.ts (a round decided in memory, pure), commit.ts (its write and what
 * follows), recovery.ts (store failures), events.ts (listeners and stored events),
 * state.ts (head, assets, totals, cache).
 */
/**
 * A book from before members (CONTRACT 13) has none: its operator credential, whose key
 * is DIR/operator.key, becomes `root` (admin) on its first start, in one write.
 */
async function adoptRootMember(store: Store, nowMs: number): Promise<void> {
  for await (const _ of store.entries({ gte: memberPrefix, lt: prefixEnd(memberPrefix), limit: 1 })) return;
  const root = memberWrite(rootMember(nowMs));
  await store.write([{ type: 'put', key: root.key, value: root.value! }], true);
}

/** A book without an approval policy takes the one it is opened with (the config's; CONTRACT 13); after that only an approved proposal changes it. */
async function seedApprovalPolicy(store: Store, policy: ApprovalPolicy): Promise<void> {
  if ((await store.get(approvalPolicyKey)) !== undefined) return;
  await store.write([{ type: 'put', key: approvalPolicyKey, value: JSON.stringify(policy) }], true);
}

export class Kernel {
  readonly principals: Principals;
  /** What every identity is shown before owned custody, and what a reclaim fixes on its account. */
  readonly recoveryTerms: RecoveryTerms;
  private readonly store: Store;
  private readonly clock: () => number;
  private readonly ids: IdSource;
  private readonly settlement: KernelSettlement;
  private readonly challengeMacKey: Uint8Array | null;
  private readonly beforeDecide: (part: RoundPart) => void;
  private readonly state: BookState;
  private readonly reader: BookReader;
  private readonly events: DecisionEvents;
  private readonly health: StoreHealth;
  private readonly intake: Intake;
  private readonly decider: Decider;
  private idleWaiters: (() => void)[] = [];

  private constructor(options: KernelOptions, assets: ReadonlyMap<string, Asset>, head: Head, nextCseq: number) {
    this.store = options.store;
    this.clock = options.clock;
    this.ids = options.ids;
    this.principals = options.principals ?? builtInPrincipals;
    this.recoveryTerms = recoveryTerms(options.recovery?.authority ?? this.principals.identities, options.recovery?.delayMs ?? bounds.recoveryDelayDefaultMs);
    this.challengeMacKey = options.challengeMacKey ?? null;
    assert(this.challengeMacKey === null || this.challengeMacKey.length === challengeMacKeyBytes, 'a challenge key is 32 bytes');
    const backlogMax = options.backlogMax ?? bounds.backlogCommandsMax;
    const backlogPerPrincipalMax = options.backlogPerPrincipalMax ?? Math.min(bounds.backlogCommandsPerPrincipalMax, backlogMax);
    assert(backlogPerPrincipalMax >= 1 && backlogPerPrincipalMax <= backlogMax, 'a principal\'s share of the backlog is within it');
    const onPoison = options.onPoison ?? (() => {});
    this.beforeDecide = options.beforeDecide ?? (() => {});
    this.settlement = options.settlement ?? { instance: 0, instructionExpiryBlocks: 0, layerHeight: () => 0 };
    const cacheEntries = options.cacheEntries ?? bounds.cacheEntriesDefault;
    assert(cacheEntries >= bounds.cacheEntriesMin, `cache holds at least ${bounds.cacheEntriesMin} entries`);
    this.state = new BookState(this.store, assets, head, cacheEntries);
    this.reader = new BookReader(this.store, this.state.cache, this.principals, this.ids);
    this.events = new DecisionEvents(this.store, (ref) => this.operation(ref));
    this.health = new StoreHealth(this.store, options.sync ?? true, options.onFatal ?? (() => {}), options.onStoreFailure ?? (() => {}), {
      busy: () => this.intake.intaking || this.intake.submitting || this.decider.deciding,
      reload: () => this.reloadState(),
      resumed: () => this.decider.schedule(),
      stopped: () => {
        this.intake.stopped();
        this.notifyIdle();
      },
    });
    const { store, reader, health, principals, clock, ids } = this;
    this.intake = new Intake(
      {
        store,
        reader,
        health,
        principals,
        recoveryTerms: this.recoveryTerms,
        clock,
        ids,
        backlogMax,
        backlogPerPrincipalMax,
        admittedPerPrincipalMax: bounds.admittedPerPrincipalMax,
        admissionWaitMs: options.admissionWaitMs ?? bounds.admissionWaitDefaultMs,
        beforeDecide: this.beforeDecide,
        onPoison,
        assets: () => this.state.assets,
        commandChunksWritten: (chunks) => this.state.commandChunks.written(chunks),
        accepted: (op) => this.decider.enqueue(op),
        schedule: () => this.decider.schedule(),
        decideQueueLength: () => this.decider.decideQueue.length,
        notifyIdle: () => this.notifyIdle(),
      },
      nextCseq,
    );
    this.decider = new Decider({
      store,
      reader,
      health,
      state: this.state,
      events: this.events,
      intake: this.intake,
      clock,
      onPoison,
      roundContext: () => this.roundContext(),
      notifyIdle: () => this.notifyIdle(),
    });
  }

  /** Opens a sealed book, checks it, and resumes deciding what was acknowledged before. */
  static async open(options: KernelOptions): Promise<Kernel> {
    const { store } = options;
    const sealed = await store.get(keys.sealed);
    if (sealed === undefined) refuse('ERR-InitialStateNotSealed', 'the book has no sealed initial state');
    const layout = (await store.get(keys.layout)) ?? '1';
    if (layout !== storeLayout) fail(`the book is in store layout ${layout}; this ledgerd reads layout ${storeLayout}${migratableLayout(layout) ? ': run ledgerd migrate on it (docs/operations.md, Upgrades)' : ''}`);
    const headText = await store.get(keys.head);
    assert(headText !== undefined, 'a sealed book has a head');
    const head = decodeHead(headText);
    const cseqText = await store.get(keys.cseq);
    const nextCseq = Math.max(head.decidedCseq, cseqText === undefined ? 0 : Number(cseqText)) + 1;
    await adoptRootMember(store, options.clock());
    await buildOperationIndex(store);
    await seedApprovalPolicy(store, options.approvals ?? defaultPolicy);
    const kernel = new Kernel(options, await loadAssets(store), head, nextCseq);
    await kernel.state.loadTotals();
    await kernel.state.countChallenges();
    await kernel.decider.loadBacklog();
    await kernel.decider.refreshNextExpiry();
    kernel.decider.schedule();
    return kernel;
  }

  /** Acknowledges a command (durably) or refuses it. Never decides it here (intake.ts). */
  submit(sub: Submission): Promise<Acknowledgement> {
    return this.intake.submit(sub);
  }

  /** Prechecks a command as `submit` would and stores nothing (a proposal's request, CONTRACT 13). */
  precheck(sub: Submission): Promise<null> {
    return this.intake.check(sub);
  }

  /** The approval policy and every member as committed now (the edge's gate of covered acts, CONTRACT 13). */
  async approvalState(): Promise<{ policy: ApprovalPolicy; members: Member[] }> {
    const policyText = await this.store.get(approvalPolicyKey);
    const members: Member[] = [];
    for await (const [, text] of this.store.entries({ gte: memberPrefix, lt: prefixEnd(memberPrefix), limit: membersMax })) members.push(decodeMember(text));
    return { policy: policyText === undefined ? defaultPolicy : decodePolicy(policyText), members };
  }

  /** Commands submitted and not yet decided. */
  get backlog(): number {
    return this.intake.backlog;
  }

  /** Of the backlog, the commands `principal` submitted. */
  backlogOf(principal: string): number {
    return this.intake.backlogOf(principal);
  }

  /**
   * Decides a sign-in in the next round and resolves with
   * null (done) or the refusal. Not an acknowledged command: nothing is durable until
   * the round's write, and a caller that loses its answer starts a new ceremony.
   */
  decideDirect(command: DirectCommand): Promise<Refusal | null> {
    return this.decider.decideDirect(command);
  }

  /**
   * The gates of a command the edge decides at once, outside the rounds (decide/gates.ts),
   * against the committed book: refused (thrown) as a kernel command would be. The
   * kernel must be deciding, its store writable; the backlog's bounds are the rounds'
   * (a command decided at once takes no place in them, so a flood there does not block it).
   */
  async gate(actor: Actor, accounts: readonly GatedAccount[]): Promise<void> {
    this.intake.ensureHealthy();
    const ids = accounts.map((a) => a.id);
    const [identityText, ...accountTexts] = await this.store.getMany([keys.identity(actor.principal), ...ids.map(keys.account)]);
    const found = new Map(ids.map((id, i) => [id, accountTexts[i] === undefined ? undefined : decodeAccount(accountTexts[i]!, keys.account(id))]));
    const identity = identityText === undefined ? undefined : decodeIdentity(identityText, keys.identity(actor.principal));
    const refused = commandGate(actor, accounts, { identity: (id) => (id === actor.principal ? identity : undefined), account: (id) => found.get(id) }, this.principals);
    if (refused) refuse(refused.error, refused.description);
  }

  /** What a round's decisions are given besides their reads: fixed for the round. */
  private roundContext(): RoundContext {
    return {
      principals: this.principals,
      recoveryTerms: this.recoveryTerms,
      ids: this.ids,
      challengeMacKey: this.challengeMacKey,
      challengesOutstanding: this.state.challengesOutstanding,
      settlement: { instance: this.settlement.instance, instructionExpiryBlocks: this.settlement.instructionExpiryBlocks, layerHeight: this.settlement.layerHeight() },
      beforeDecide: this.beforeDecide,
    };
  }

  /** After a write failure: the state the store holds now (a write reported failed may have landed). */
  private async reloadState(): Promise<void> {
    this.intake.clearBacklog();
    await this.state.reload();
    await this.decider.reload();
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
  tookClientKey(principal: IdentityId, clientKey: string): Promise<boolean> {
    return this.intake.tookClientKey(principal, clientKey);
  }

  /** A stored credential (the edge verifies ceremonies against it). */
  async credential(id: CredentialId): Promise<Credential | undefined> {
    const text = await this.store.get(credentialKey(id));
    return text === undefined ? undefined : decodeCredential(text);
  }

  // ---------------------------------------------------------------- reads

  operation(ref: string): Promise<Operation | undefined> {
    return this.reader.operation(ref);
  }

  /** The operator's member a credential is (CONTRACT 13), as committed now; undefined for none. */
  async member(credential: CredentialId): Promise<Member | undefined> {
    const text = await this.store.get(memberKey(credential));
    return text === undefined ? undefined : decodeMember(text);
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
    return BookView.open(this.store.snapshot(), this.state.assets, this.principals, floorMs, this.ids.cseqOf);
  }

  get assetList(): readonly Asset[] {
    return [...this.state.assets.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  get currentHead(): Head {
    return this.state.head;
  }

  /**
   * Decision times from here on are at least this (statements use it for `closed`):
   * a round in flight was given its time already and is not in any snapshot yet.
   */
  get decisionTimeFloorMs(): number {
    return this.decider.deciding ? this.state.head.lastAtMs : Math.max(this.clock(), this.state.head.lastAtMs);
  }

  // ---------------------------------------------------------------- events and lifecycle

  /**
   * The operation once decided (out of Received), or null when `timeoutMs` passes
   * first. Bounded: one listener, removed on either outcome.
   */
  decision(ref: string, timeoutMs: number): Promise<Operation | null> {
    return this.events.decision(ref, timeoutMs);
  }

  onDecision(listener: (event: DecisionEvent) => void): () => void {
    return this.events.onDecision(listener);
  }

  /** Stored events after `afterSeq`, oldest first, at most `limit`. */
  eventsAfter(afterSeq: number, limit: number): Promise<DecisionEvent[]> {
    return this.events.eventsAfter(afterSeq, limit);
  }

  /** Resolves when nothing is waiting to be written or decided (tests, shutdown). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Runs a decision round now if anything is due (tests move their clock, then poke). */
  poke(): Promise<void> {
    this.decider.schedule();
    return this.idle();
  }

  private isIdle(): boolean {
    return this.health.fatal !== null || this.health.writeFailure !== null || (this.intake.idle && this.decider.idle);
  }

  private notifyIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  get fatalError(): Error | null {
    return this.health.fatal;
  }

  get writeAvailable(): boolean {
    return this.health.writeFailure === null && this.health.fatal === null;
  }

  /** Stops accepting, finishes every decision in flight, and closes the store. */
  async close(): Promise<void> {
    this.health.close();
    this.decider.close();
    while (!this.isIdle()) await this.idle();
    this.events.clear();
    await this.store.close();
  }
}
