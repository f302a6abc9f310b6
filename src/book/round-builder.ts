/**
 * The round builder: a decision round decided in memory. Given the round's inputs (its
 * time, the commands, the reservations expiring, the direct decisions) and what the
 * prefetch read for it (prefetch.ts), it returns the one batch to write and what follows
 * it. Pure and deterministic: it reads nothing but its inputs (no store, no clock, no id
 * draw beyond the IdSource's functions of cseq), so the same inputs give the same batch.
 * An assertion it trips (a poison decision) throws; nothing has been written.
 */
import { AssertionFailure, assert, fail } from '../assert.js';
import * as bounds from '../constants.js';
import { type Decision, type Entry, availableFloorMinor, decideExpiry } from '../decide/decide.js';
import { type SettlementInput, decideCommand } from '../decide/decide-settlement.js';
import { type ChallengeGate, type DirectCommand, decideSignIn } from '../decide/decide-auth.js';
import { challengesOutstandingMax } from '../auth/constants.js';
import { expiryHash } from '../auth/expiry.js';
import type { Principals } from '../auth/authority.js';
import type { RecoveryTerms } from '../custody/terms.js';
import { type Refusal, refusal } from '../errors.js';
import { AuditTrail } from '../auth/audit.js';
import { memberOf } from '../auth/members.js';
import { type Proposal, decideApproval } from '../auth/proposals.js';
import { encodeAccount, encodeAsset, encodeBalanceText, encodeHead, encodeIdentity, encodeIndexedPosting, JournalChunkText } from '../model/codec.js';
import type { IdSource } from '../model/ids.js';
import { keySpaces, keys, settlementKeys, tokenKey, usedChallengeKey } from '../model/keys.js';
import { type Account, type Asset, type Authority, type Balance, type Head, type Operation, type Posting, moved, withinAmountCeiling, zeroBalance } from '../model/model.js';
import type { AssetSymbol } from '../model/values.js';
import { depositRefOf } from '../settlement/book.js';
import type { BatchOp } from '../store/port.js';
import type { Overlay } from './overlay.js';
import type { RoundPart } from './kernel-types.js';
import { plusBalance, totalMinor, totalsWrite } from './totals.js';
import { eventRecordWrites } from './event-records.js';

/** What a round reads, as the prefetch found it: the builder reads nothing else. */
export interface RoundReads {
  /** Every record, account, identity, balance and operation the round's decisions read. */
  readonly overlay: Overlay;
  /** The expiry index entries of challenges and sessions expired by the round's time (`chalx/`, `tokx/`), or null when no pruning is due. */
  readonly expiredAuth: readonly string[] | null;
}

/** A round's inputs: its time, what it decides, and the book's state before it. */
export interface RoundInput {
  readonly atMs: number;
  readonly batch: readonly Operation[];
  readonly expiring: readonly Operation[];
  readonly direct: readonly DirectCommand[];
  readonly head: Head;
  /** Per asset, the totals as committed. */
  readonly totals: ReadonlyMap<string, Balance>;
  readonly reads: RoundReads;
  /** A command already found to be poison: it is refused with ERR-Internal. */
  readonly poisonRef: string | null;
  /** The `cmd/` chunks whose last command this round decides (command-chunks.ts): deleted by it. */
  readonly commandChunks: readonly string[];
}

/** What the decisions are given besides the reads: who is who, ids, the challenge gate, the settlement layer. */
export interface RoundContext {
  readonly principals: Principals;
  readonly recoveryTerms: RecoveryTerms;
  readonly ids: IdSource;
  readonly challengeMacKey: Uint8Array | null;
  /** Entries of the used-set (challenges taken, not yet pruned). */
  readonly challengesOutstanding: number;
  readonly settlement: { readonly instance: number; readonly instructionExpiryBlocks: number; readonly layerHeight: number };
  /** Test seam, called before each part is decided. */
  readonly beforeDecide: (part: RoundPart) => void;
}

/** A round decided in memory, waiting for its write. */
export interface BuiltRound {
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

/** Decides a round in memory: the batch to write and what follows it. Reads and writes nothing. */
export function buildRound(input: RoundInput, context: RoundContext): BuiltRound {
  const { atMs, batch, expiring, direct, poisonRef } = input;
  const overlay = input.reads.overlay.withTotals(input.totals);
  roundInput = null;
  const writes: BatchOp[] = [];
  const events: Operation[] = [];
  let postingSeq = input.head.postingSeq;
  /** Per asset, what the round's entries moved, layer by layer: added to in place (one object per asset, not one per entry). */
  const deltas = new Map<string, { available: bigint; reserved: bigint; encumbered: bigint }>();
  /** The round's journal entries, in chunks of at most journalChunkEntriesMax: those filled, then the one filling. */
  const journalChunks: string[] = [];
  const journal = new JournalChunkText();
  let accountsOpened = 0;

  const post = (op: Operation, entries: readonly Entry[]): number[] => {
    const seqs: number[] = [];
    for (const entry of entries) {
      const seq = ++postingSeq;
      const signed = entry.direction === 'credit' ? entry.amountMinor : -entry.amountMinor;
      let delta = deltas.get(entry.asset);
      if (delta === undefined) deltas.set(entry.asset, (delta = { available: 0n, reserved: 0n, encumbered: 0n }));
      delta[entry.layer] += signed;
      const balanceKey = keys.balance(entry.account, entry.asset);
      const after = moved(overlay.balanceAt(balanceKey), entry.layer, signed);
      assertWithinFloor(overlay.account(entry.account), entry.asset, after);
      overlay.setBalanceAt(balanceKey, entry.asset, after);
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
      const indexed = encodeIndexedPosting(posting);
      // The journal's entry holds the index entry's text too (store layout 6): no leaf is made here.
      journal.add(entry.account, entry.asset, indexed);
      if (journal.entries === bounds.journalChunkEntriesMax) journalChunks.push(journal.take());
      writes.push({ type: 'put', key: keys.accountAsset(entry.account, entry.asset, seq), value: indexed });
      seqs.push(seq);
    }
    assertBalanced(op, entries);
    return seqs;
  };
  const record = (op: Operation) => {
    overlay.setOperation(op);
    events.push(op);
  };

  for (const reservation of expiring) {
    context.beforeDecide({ kind: 'expiry', op: reservation });
    const postings = post(reservation, decideExpiry(reservation));
    writes.push({ type: 'del', key: keys.expiry(reservation.hold!.deadlineMs, reservation.ref) });
    record({ ...reservation, state: 'Expired', hold: null, result: { postings: [...(reservation.result?.postings ?? []), ...postings] } });
  }

  // Every member's act decided in this round, in this round's batch (CONTRACT 13); the daemon's own intake of the layer is none.
  const audit = new AuditTrail(input.head.auditSeq ?? 0);
  const auditCommand = (op: Operation, result: Operation['result'], approved: Proposal | null) => {
    if (op.actor.principal !== context.principals.operator || op.command.type === 'settle') return;
    // An approval is its approver's act as well as (once it stands) the proposer's.
    const approver = op.approval === undefined ? undefined : memberOf(overlay, op.approval.approver);
    if (approver !== undefined) audit.act(approver, 'approveProposal', atMs, { operation: op.ref, justification: null, proposal: op.approval!.proposal });
    if (op.approval !== undefined && approved === null) return;
    const member = memberOf(overlay, op.actor.credential);
    if (member !== undefined) audit.command(member, op, result, atMs, approved === null ? null : { proposal: approved.id, justification: approved.justification, approval: approver!.name });
  };
  for (const op of batch) {
    const { decision, approved } = decideOne(op, overlay, atMs, poisonRef, context);
    auditCommand(op, decision.ok ? decision.result : op.result, approved);
    if (!decision.ok) {
      record({ ...op, state: decision.state, decidedAtMs: atMs, error: decision.error });
      continue;
    }
    const postings = post(op, withApprover(op, decision.entries, context.principals));
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

  const directOutcomes = direct.map((command) => {
    context.beforeDecide({ kind: 'direct', command });
    const member = memberOf(overlay, command.credential);
    if (command.type === 'record_act') {
      if (member === undefined || member.removedAtMs !== null) return refusal('ERR-CredentialInvalid', 'the credential is no live member of the operator');
      if (command.approval !== undefined) {
        // An act decided at once by an approved proposal: approved in this batch, or refused with its approval (CONTRACT 13).
        const approval = decideApproval({ ref: command.operation ?? '', proposer: command.credential }, command.approval, overlay, atMs);
        if ('error' in approval) return approval;
        for (const r of approval.records) overlay.setRecord(r.key, r.value);
        const approver = memberOf(overlay, command.approval.approver)!;
        audit.act(approver, 'approveProposal', atMs, { operation: command.operation, justification: null, proposal: approval.proposal.id });
        audit.act(member, command.act, atMs, { operation: command.operation, justification: approval.proposal.justification, proposal: approval.proposal.id, approval: approver.name });
      } else audit.act(member, command.act, atMs, { operation: command.operation, justification: command.justification, ...(command.unapproved ? { approval: 'none available' } : {}) });
      for (const w of command.writes) writes.push({ type: 'put', key: w.key, value: w.value });
      return null;
    }
    const outcome = decideSignIn(command, overlay, atMs, challengeGate(context));
    if ('error' in outcome) return outcome;
    for (const r of outcome) overlay.setRecord(r.key, r.value);
    if (member !== undefined) audit.act(member, 'sign_in', atMs);
    return null;
  });
  writes.push(...audit.writes());
  // Challenges taken this round: each adds its expiry index entry to the used-set.
  const challengesTaken = [...overlay.dirtyRecords].filter((key) => key.startsWith(keySpaces.challengeExpiry) && overlay.records.get(key) !== undefined).length;
  const pruned = pruneExpiredAuth(input.reads.expiredAuth ?? [], overlay);
  for (const key of overlay.dirtyRecords) {
    const value = overlay.records.get(key);
    writes.push(value === undefined ? { type: 'del', key } : { type: 'put', key, value });
  }

  if (journal.entries > 0) journalChunks.push(journal.take());
  for (const [i, chunk] of journalChunks.entries()) {
    const firstSeq = input.head.postingSeq + 1 + i * bounds.journalChunkEntriesMax;
    writes.push({ type: 'put', key: keys.journal(firstSeq), value: chunk });
    writes.push({ type: 'put', key: keys.journalTime(atMs, firstSeq), value: '' });
  }
  const totals = new Map<string, Balance>();
  for (const [symbol, asset] of overlay.dirtyAssets) {
    writes.push({ type: 'put', key: keys.asset(symbol), value: encodeAsset(asset) });
    // A new asset's totals start at zero (a sealed book keeps totals for every registered asset).
    if (!input.totals.has(symbol)) {
      totals.set(symbol, zeroBalance);
      writes.push(totalsWrite(symbol, zeroBalance));
    }
  }
  for (const [asset, delta] of deltas) {
    assert(totalMinor(delta) === 0n, `the round balances in ${asset}`);
    // A round of transfers alone moves no layer's total: nothing to write.
    if (delta.available === 0n && delta.reserved === 0n && delta.encumbered === 0n) continue;
    const total = plusBalance(totals.get(asset) ?? input.totals.get(asset)!, delta);
    assert(withinAmountCeiling(total), `the totals in ${asset} stay within the amount ceiling`);
    totals.set(asset, total);
    writes.push(totalsWrite(asset, total));
  }
  for (const key of overlay.dirtyBalances) writes.push({ type: 'put', key, value: encodeBalanceText(overlay.balances.get(key)!) });
  for (const key of overlay.dirtyAccounts) writes.push({ type: 'put', key, value: encodeAccount(overlay.accounts.get(key)!) });
  for (const key of overlay.dirtyIdentities) writes.push({ type: 'put', key, value: encodeIdentity(overlay.identities.get(key)!) });
  for (const key of input.commandChunks) writes.push({ type: 'del', key });
  const eventStart = input.head.eventSeq;
  const recorded = eventRecordWrites(events, eventStart);
  assert(recorded.pointed === overlay.dirtyOperations.size, 'every changed operation has an event');
  writes.push(...recorded.writes);
  const head: Head = {
    decidedCseq: batch.length > 0 ? batch[batch.length - 1]!.cseq : input.head.decidedCseq,
    postingSeq,
    eventSeq: eventStart + events.length,
    lastAtMs: atMs,
    accounts: input.head.accounts + accountsOpened,
    ...(audit.lastSeq === 0 ? {} : { auditSeq: audit.lastSeq }),
  };
  writes.push({ type: 'put', key: keys.head, value: encodeHead(head) });
  return { writes, head, overlay, totals, events, eventStart, directOutcomes, challengesAdded: challengesTaken - pruned.challenges, expiring, assets: overlay.dirtyAssets };
}

/**
 * One command's decision; a command found to be poison is refused with ERR-Internal. An
 * approved act (CONTRACT 13) has its approval decided first: refused, the act is refused
 * with it; granted, the proposal is approved in the overlay (so in this round's batch)
 * whatever the act's own decision then is.
 */
function decideOne(op: Operation, overlay: Overlay, atMs: number, poisonRef: string | null, context: RoundContext): { decision: Decision; approved: Proposal | null } {
  if (op.ref === poisonRef) return { decision: { ok: false, state: 'Rejected', error: refusal('ERR-Internal') }, approved: null };
  try {
    context.beforeDecide({ kind: 'command', op });
    let approved: Proposal | null = null;
    if (op.approval !== undefined) {
      const approval = decideApproval({ ref: op.ref, proposer: op.actor.credential }, op.approval, overlay, atMs);
      if ('error' in approval) return { decision: { ok: false, state: 'Rejected', error: approval }, approved: null };
      for (const r of approval.records) overlay.setRecord(r.key, r.value);
      approved = approval.proposal;
    }
    return { decision: decideCommand(op, overlay, decisionInput(atMs, op.cseq, context)), approved };
  } catch (error) {
    // A pure decision reads only the overlay: whatever it throws is a bug, like a failed assertion.
    if (error instanceof AssertionFailure) throw error;
    throw new AssertionFailure(`deciding ${op.ref} threw: ${(error as Error).message}`);
  }
}

/** What a round's command is decided with: one object per round (made by its first command), its `cseq` set to each command's. */
function decisionInput(atMs: number, cseq: number, context: RoundContext): SettlementInput {
  roundInput ??= new RoundDecisionInput(atMs, context);
  roundInput.cseq = cseq;
  return roundInput;
}
/** The round's decision input; buildRound, synchronous, drops it as it starts. */
let roundInput: RoundDecisionInput | null = null;

/** What every command of a round is decided with, `cseq` set before each is decided. */
class RoundDecisionInput implements SettlementInput {
  cseq = 0;
  readonly layerHeight: number;
  readonly instance: number;
  readonly instructionExpiryBlocks: number;
  readonly principals: Principals;
  readonly challenges: ChallengeGate;
  readonly terms: RecoveryTerms;
  private readonly ids: IdSource;

  constructor(readonly atMs: number, context: RoundContext) {
    const { settlement } = context;
    this.layerHeight = settlement.layerHeight;
    this.instance = settlement.instance;
    this.instructionExpiryBlocks = settlement.instructionExpiryBlocks;
    this.principals = context.principals;
    this.challenges = challengeGate(context);
    this.terms = context.recoveryTerms;
    this.ids = context.ids;
  }
  // Drawn when a decision reads them: most commands (transfers) draw no id.
  get newAccountId() { return this.ids.accountId(this.cseq); }
  get newIdentityId() { return this.ids.identityId(this.cseq); }
  get newCredentialId() { return this.ids.credentialId(this.cseq); }
  get newGrantId() { return this.ids.grantId(this.cseq); }
  get newPartyId() { return this.ids.partyId(this.cseq); }
  get newProposalId() { return this.ids.proposalId(this.cseq); }
}

/** An approved act's entries name the approver after their own authorities: postings carry both members (CONTRACT 13). */
function withApprover(op: Operation, entries: readonly Entry[], principals: Principals): readonly Entry[] {
  if (op.approval === undefined) return entries;
  const approver: Authority = { credential: op.approval.approver, grant: null, kind: 'operator', onBehalfOf: op.actor.onBehalfOf, principal: principals.operator };
  // One list per distinct list of the decision, so the codec still encodes a shared list once.
  const lists = new Map<readonly Authority[], readonly Authority[]>();
  return entries.map((e) => {
    let authorities = lists.get(e.authorities);
    if (authorities === undefined) lists.set(e.authorities, (authorities = [...e.authorities, approver]));
    return { ...e, authorities };
  });
}

/** Bounded: past the used-set's bound a ceremony is told to retry rather than the store growing without limit. */
function challengeGate(context: RoundContext): ChallengeGate {
  return { macKey: context.challengeMacKey, usedSetFull: context.challengesOutstanding >= challengesOutstandingMax };
}

/** Deletes the expired challenges and sessions the prefetch found: their index entries and the records they name. */
function pruneExpiredAuth(indexKeys: readonly string[], overlay: Overlay): { challenges: number } {
  let challenges = 0;
  for (const key of indexKeys) {
    const isChallenge = key.startsWith(keySpaces.challengeExpiry);
    overlay.setRecord(key, null);
    overlay.setRecord((isChallenge ? usedChallengeKey : tokenKey)(expiryHash(key)), null);
    if (isChallenge) challenges++;
  }
  return { challenges };
}

/** An operation's entries sum to zero in each asset (a Map only when they name more than one). */
function assertBalanced(op: Operation, entries: readonly Entry[]): void {
  const signed = (e: Entry) => (e.direction === 'credit' ? e.amountMinor : -e.amountMinor);
  const first = entries[0]?.asset;
  if (entries.every((e) => e.asset === first)) {
    let sum = 0n;
    for (const e of entries) sum += signed(e);
    if (sum !== 0n) fail(`operation ${op.ref} balances in ${first} (off by ${sum})`);
    return;
  }
  const perAsset = new Map<string, bigint>();
  for (const e of entries) perAsset.set(e.asset, (perAsset.get(e.asset) ?? 0n) + signed(e));
  for (const [asset, sum] of perAsset) if (sum !== 0n) fail(`operation ${op.ref} balances in ${asset} (off by ${sum})`);
}

function assertWithinFloor(account: Account | undefined, asset: AssetSymbol, after: Balance): void {
  if (account === undefined) fail('entries name known accounts');
  if (after.available < availableFloorMinor(account, asset)) fail(`${account.id} available in ${asset} stays above its floor`);
  if (after.reserved < 0n || after.encumbered < 0n) fail(`${account.id} reserved and encumbered in ${asset} stay non-negative`);
  if (!withinAmountCeiling(after)) fail(`${account.id} in ${asset} stays within the amount ceiling`);
}
