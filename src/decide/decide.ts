/**
 * The decision functions: pure and synchronous. Each reads what the kernel
 * prefetched (through `Reads`), takes the decision time as input, and returns a
 * coded refusal or the entries to post. They never read a clock, an id source or
 * the store, so the same commands in the same order give the same book.
 */
import { fail } from '../assert.js';
import { type Refusal, refusal } from '../errors.js';
import { amountMinorMax } from '../constants.js';
import { type Actor, type Principals, authorityToDebit, opensAccountFor, unreachableAccount } from '../auth/authority.js';
import { finishing } from './precheck.js';
import type {
  Account,
  Asset,
  Authority,
  Balance,
  Command,
  Hold,
  Identity,
  Layer,
  Operation,
  OperationResult,
  OperationState,
  Posting,
  PostingKind,
  PostingStatus,
} from '../model/model.js';
import { isCustodyCommand, moved, withinAmountCeiling } from '../model/model.js';
import type { AccountId, AssetSymbol, CredentialId, GrantId, IdentityId, PartyId } from '../model/values.js';
import { type GrantReads, GrantStage, debitAuthority, decideIssueGrant, decideRevokeGrant, grantAuthority } from './decide-grants.js';
import { type AuthEffects, type ChallengeGate, type RecordReads, type RecordWrite, decideCreateIdentity, decideRegisterCredential } from './decide-auth.js';
import { decideRegisterParty } from './decide-parties.js';
import { decideMemberChange } from '../auth/members.js';
import { approvalPolicyKey, memberPrefix } from '../model/keys.js';
import { decidePropose, decideReject } from '../auth/proposals.js';
import { type CustodyEffects, accountRoomRefusal, decideCustody } from '../custody/decide-custody.js';
import { commandGate } from './gates.js';
import { type RecoveryTerms, ownedTermsRefusal } from '../custody/terms.js';
import { amountText } from '../major-units.js';

export interface Reads extends RecordReads, GrantReads {
  asset(symbol: AssetSymbol): Asset | undefined;
  account(id: AccountId): Account | undefined;
  identity(id: string): Identity | undefined;
  balance(account: AccountId, asset: AssetSymbol): Balance;
  operation(ref: string): Operation | undefined;
  /** An asset's totals over every account, layer by layer, as the round has them so far. */
  total(asset: AssetSymbol): Balance;
  /** Every registered asset, in registration order. */
  assetSymbols(): readonly AssetSymbol[];
}

/** A journal entry before it gets its sequence number, time, operation and resulting balance. */
export type Entry = Omit<Posting, 'seq' | 'atMs' | 'operation' | 'reference' | 'after'>;

/** A change to another operation that a decision makes (a reservation captured, released, expired). */
export interface Follow {
  readonly ref: string;
  readonly state: OperationState;
}

export type Decision =
  | { readonly ok: false; readonly state: 'Rejected' | 'Expired'; readonly error: Refusal | null }
  | {
      readonly ok: true;
      readonly state: OperationState;
      readonly entries: readonly Entry[];
      readonly hold: Hold | null;
      readonly openAccount: Account | null;
      /** Accounts and identities the decision rewrites (custody and lifecycle; settlement's own account). */
      readonly accounts: readonly Account[];
      readonly identities: readonly Identity[];
      readonly follow: Follow | null;
      /** Records the decision writes besides entries and balances (credentials, challenges). */
      readonly records: readonly RecordWrite[];
      readonly newIdentity: Identity | null;
      readonly result: OperationResult | null;
      /** Settlement: assets registered or changed, other operations moved. */
      readonly assets?: readonly Asset[];
      readonly moves?: readonly Move[];
    };

/** Another operation a decision moves (a withdrawal Submitted, Completed or Expired), with the entries posted under it. */
export interface Move {
  readonly ref: string;
  readonly state: OperationState;
  readonly entries: readonly Entry[];
}

export interface DecisionInput {
  readonly atMs: number;
  readonly principals: Principals;
  /** Ids the command's new records take (passed in: the kernel draws no ids here). */
  readonly newAccountId: AccountId;
  readonly newIdentityId: IdentityId;
  readonly newCredentialId: CredentialId;
  readonly newGrantId: GrantId;
  readonly newPartyId: PartyId;
  readonly newProposalId: string;
  /** Taking a passkey registration's challenge (decide-auth.ts). */
  readonly challenges: ChallengeGate;
  /** The recovery terms every identity is shown (custody/terms.ts). */
  readonly terms: RecoveryTerms;
}

/** The empty list of a decision's records, accounts or identities: one, shared (a decision's lists are never changed). */
const none: readonly never[] = Object.freeze([]);

export const reject = (error: Refusal): Decision => ({ ok: false, state: 'Rejected', error });
export const done = (
  state: OperationState,
  entries: readonly Entry[],
  extra: Partial<Pick<Extract<Decision, { ok: true }>, 'hold' | 'openAccount' | 'accounts' | 'identities' | 'follow' | 'records' | 'newIdentity' | 'result' | 'assets' | 'moves'>> = {},
): Decision => ({
  ok: true,
  state,
  entries,
  hold: extra.hold ?? null,
  openAccount: extra.openAccount ?? null,
  accounts: extra.accounts ?? none,
  identities: extra.identities ?? none,
  follow: extra.follow ?? null,
  records: extra.records ?? none,
  newIdentity: extra.newIdentity ?? null,
  result: extra.result ?? null,
  assets: extra.assets,
  moves: extra.moves,
});

/** An identity or credential decision as an operation's decision. */
function fromAuth(effects: AuthEffects | Refusal): Decision {
  if ('error' in effects) return reject(effects);
  return done('Completed', [], { records: effects.records, newIdentity: effects.newIdentity, result: effects.result });
}

/** The lowest `available` an account may reach in an asset. */
export function availableFloorMinor(account: Account, asset: AssetSymbol): bigint {
  return account.kind === 'treasury' ? -(account.treasuryLimits[asset] ?? 0n) : 0n;
}

/**
 * ERR-PrecisionExceeded when posting `entries` would take an account's balance or an
 * asset's totals past what an amount can carry (withinAmountCeiling): the command is
 * refused whole and nothing moves (docs/architecture.md, Decisions).
 */
export function ceilingRefusal(reads: Reads, entries: readonly Entry[]): Refusal | null {
  if (farBelowCeiling(reads, entries)) return null;
  const balances = new Map<string, Balance>();
  const totals = new Map<AssetSymbol, Balance>();
  // Entry by entry, as the round posts them: a leg may not pass the ceiling on its way either.
  for (const e of entries) {
    const signed = e.direction === 'credit' ? e.amountMinor : -e.amountMinor;
    const key = `${e.account}/${e.asset}`;
    const balance = moved(balances.get(key) ?? reads.balance(e.account, e.asset), e.layer, signed);
    const total = moved(totals.get(e.asset) ?? reads.total(e.asset), e.layer, signed);
    if (!withinAmountCeiling(balance)) return refusal('ERR-PrecisionExceeded', `the balance of ${e.account} in ${e.asset} would pass 2^128 - 1, the most an amount can carry`);
    if (!withinAmountCeiling(total)) return refusal('ERR-PrecisionExceeded', `the book's totals in ${e.asset} would pass 2^128 - 1, the most an amount can carry`);
    balances.set(key, balance);
    totals.set(e.asset, total);
  }
  return null;
}

/** What the entries of one decision may move in all, for the quick answer below (far above any real amount). */
const movedQuickMax = 2n ** 96n;
/** A layer's magnitude under which no layer, nor the three layers' sum, can pass the ceiling by movedQuickMax more. */
const layerQuickMax = (amountMinorMax - movedQuickMax) / 3n;
const layerQuickMin = -layerQuickMax;
const farBelow = (b: Balance) => b.available <= layerQuickMax && b.available >= layerQuickMin && b.reserved <= layerQuickMax && b.reserved >= layerQuickMin && b.encumbered <= layerQuickMax && b.encumbered >= layerQuickMin;

/**
 * True when no entry can take a balance or a total past the ceiling, in whatever order
 * (the common case, without the entry-by-entry walk): together they move at most
 * movedQuickMax, and every balance and total they touch starts far enough below it.
 */
function farBelowCeiling(reads: Reads, entries: readonly Entry[]): boolean {
  let movedMinor = 0n;
  for (const e of entries) movedMinor += e.amountMinor < 0n ? -e.amountMinor : e.amountMinor;
  if (movedMinor > movedQuickMax) return false;
  let asset: AssetSymbol | null = null;
  for (const e of entries) {
    if (!farBelow(reads.balance(e.account, e.asset))) return false;
    // Entries mostly share one asset: its totals are read once.
    if (e.asset !== asset && !farBelow(reads.total((asset = e.asset)))) return false;
  }
  return true;
}

export function movable(reads: Reads, symbol: AssetSymbol): Refusal | null {
  const asset = reads.asset(symbol);
  if (asset === undefined) return refusal('ERR-UnknownAsset', `asset ${symbol} is not registered`);
  if (asset.status === 'deprecated') return refusal('ERR-AssetDeprecated', `asset ${symbol} is deprecated`);
  return null;
}

/** An account a command names, open for movements: neither frozen nor closed (CONTRACT 10). */
export function open(reads: Reads, id: AccountId, actor: Actor, principals: Principals): Account | Refusal {
  const account = reads.account(id);
  if (account === undefined) return unreachableAccount(actor, id, principals);
  if (account.status === 'closed') return refusal('ERR-AccountClosed', `account ${id} is closed`);
  if (account.status === 'frozen') return refusal('ERR-AccountFrozen', `account ${id} is frozen`);
  return account;
}

export const isRefusal = (v: object): v is Refusal => 'error' in v;

/** Balances a multi-entry decision has touched so far, so later legs see earlier ones (a few: a transfer has at most transferLegsMax legs). */
class Scratch {
  private readonly accounts: AccountId[] = [];
  private readonly assets: AssetSymbol[] = [];
  private readonly balances: Balance[] = [];
  constructor(private readonly reads: Reads) {}
  private indexOf(account: AccountId, asset: AssetSymbol): number {
    for (let i = 0; i < this.accounts.length; i++) if (this.accounts[i] === account && this.assets[i] === asset) return i;
    return -1;
  }
  move(account: AccountId, asset: AssetSymbol, layer: Layer, deltaMinor: bigint): Balance {
    const i = this.indexOf(account, asset);
    const next = moved(i === -1 ? this.reads.balance(account, asset) : this.balances[i]!, layer, deltaMinor);
    if (i !== -1) this.balances[i] = next;
    else {
      this.accounts.push(account);
      this.assets.push(asset);
      this.balances.push(next);
    }
    return next;
  }
}

/** Two entries of one movement: a debit of `from` and a credit of `to`, in one asset. */
export function pair(
  from: { account: AccountId; layer: Layer },
  to: { account: AccountId; layer: Layer },
  asset: AssetSymbol,
  amountMinor: bigint,
  kind: PostingKind,
  status: PostingStatus,
  authorities: readonly Authority[],
): [Entry, Entry] {
  // An entry's counterparty is the other account, none when both are one (a reservation's layers).
  const self = from.account === to.account;
  return [
    { account: from.account, asset, amountMinor, direction: 'debit', layer: from.layer, kind, status, counterparty: self ? null : to.account, authorities },
    { account: to.account, asset, amountMinor, direction: 'credit', layer: to.layer, kind, status, counterparty: self ? null : from.account, authorities },
  ];
}

function decideTransfer(cmd: Extract<Command, { type: 'transfer' }>, actor: Actor, reads: Reads, input: DecisionInput): Decision {
  if (input.atMs > cmd.deadlineMs) return { ok: false, state: 'Expired', error: null };
  const scratch = new Scratch(reads);
  // One stage for every leg: a per-operation bound covers the whole transfer, and every leg counts in the windows.
  const stage = new GrantStage();
  const entries: Entry[] = [];
  for (let i = 0; i < cmd.legs.length; i++) {
    const leg = cmd.legs[i]!;
    const assetRefusal = movable(reads, leg.asset);
    if (assetRefusal) return reject(assetRefusal);
    const from = open(reads, leg.from, actor, input.principals);
    if (isRefusal(from)) return reject(from);
    const to = open(reads, leg.to, actor, input.principals);
    if (isRefusal(to)) return reject(to);
    // Its own authority first (most transfers): the grant request is made only when a grant must serve.
    const auth = authorityToDebit(actor, from, input.principals) ?? debitAuthority(actor, { op: 'transfer', account: from, asset: leg.asset, counterparty: leg.to, amountMinor: leg.amountMinor, atMs: input.atMs }, reads, input.principals, stage);
    if (isRefusal(auth)) return reject(auth);
    const after = scratch.move(from.id, leg.asset, 'available', -leg.amountMinor);
    if (after.available < availableFloorMinor(from, leg.asset)) {
      return reject(refusal('ERR-InsufficientAvailable', `leg ${i}: available balance of ${leg.from} in ${leg.asset} does not cover ${amountText(reads, leg.amountMinor, leg.asset)}`));
    }
    scratch.move(to.id, leg.asset, 'available', leg.amountMinor);
    const [debit, credit] = pair({ account: from.id, layer: 'available' }, { account: to.id, layer: 'available' }, leg.asset, leg.amountMinor, 'transfer', 'completed', [auth]);
    entries.push(debit, credit);
  }
  return done('Completed', entries, { records: stage.writes() });
}

function decideReserve(cmd: Extract<Command, { type: 'reserve' }>, actor: Actor, reads: Reads, input: DecisionInput): Decision {
  const assetRefusal = movable(reads, cmd.asset);
  if (assetRefusal) return reject(assetRefusal);
  const payer = open(reads, cmd.payer, actor, input.principals);
  if (isRefusal(payer)) return reject(payer);
  const stage = new GrantStage();
  const auth = debitAuthority(actor, { op: 'reserve', account: payer, asset: cmd.asset, counterparty: null, amountMinor: cmd.amountMinor, atMs: input.atMs }, reads, input.principals, stage);
  if (isRefusal(auth)) return reject(auth);
  const balance = reads.balance(payer.id, cmd.asset);
  if (balance.available - cmd.amountMinor < availableFloorMinor(payer, cmd.asset)) {
    return reject(refusal('ERR-InsufficientAvailable', `available balance of ${cmd.payer} in ${cmd.asset} does not cover ${amountText(reads, cmd.amountMinor, cmd.asset)}`));
  }
  const entries = pair({ account: payer.id, layer: 'available' }, { account: payer.id, layer: 'reserved' }, cmd.asset, cmd.amountMinor, 'reserve', 'held', [auth]);
  // The hold keeps the authority it was made under: its expiry is recorded under it too.
  const hold: Hold = { payer: payer.id, asset: cmd.asset, amountMinor: cmd.amountMinor, deadlineMs: cmd.deadlineMs, authority: auth };
  return done('Reserved', entries, { hold, records: stage.writes() });
}

/** The reservation a capture or release names, if this caller may still finish it, with the authority it finishes it under. */
function heldReservation(
  cmd: Extract<Command, { type: 'capture' | 'release' }>,
  actor: Actor,
  reads: Reads,
  input: DecisionInput,
  stage: GrantStage,
): { op: Operation; hold: Hold; auth: Authority } | Refusal {
  const finish = finishing(cmd, actor, reads, input.principals, input.atMs, stage);
  if (isRefusal(finish)) return finish;
  const op = finish.reservation;
  if (op.state !== 'Reserved' || op.hold === null) {
    return op.state === 'Received'
      ? refusal('ERR-InvalidTransition', `reservation ${cmd.reservation} is not decided yet`)
      : refusal('ERR-OperationTerminal', `reservation ${cmd.reservation} is already ${op.state}`);
  }
  return { op, hold: op.hold, auth: finish.authority };
}

function decideCapture(cmd: Extract<Command, { type: 'capture' }>, actor: Actor, reads: Reads, input: DecisionInput): Decision {
  const stage = new GrantStage();
  const held = heldReservation(cmd, actor, reads, input, stage);
  if (isRefusal(held)) return reject(held);
  const { hold, op, auth } = held;
  if (input.atMs >= hold.deadlineMs) return reject(refusal('ERR-OperationTerminal', `reservation ${cmd.reservation} reached its deadline`));
  if (cmd.to === hold.payer) return reject(refusal('ERR-UnsupportedLeg', 'a capture to the payer itself is a release'));
  // No hold is captured on a frozen (or closed) account; a release may still return it.
  const payer = open(reads, hold.payer, actor, input.principals);
  if (isRefusal(payer)) return reject(payer);
  const to = open(reads, cmd.to, actor, input.principals);
  if (isRefusal(to)) return reject(to);
  const amountMinor = cmd.amountMinor ?? hold.amountMinor;
  if (amountMinor > hold.amountMinor) {
    return reject(refusal('ERR-InsufficientAvailable', `capture of ${amountText(reads, amountMinor, hold.asset)} exceeds the ${amountText(reads, hold.amountMinor, hold.asset)} held`));
  }
  const assetRefusal = movable(reads, hold.asset);
  if (assetRefusal) return reject(assetRefusal);
  const entries = [...pair({ account: hold.payer, layer: 'reserved' }, { account: to.id, layer: 'available' }, hold.asset, amountMinor, 'capture', 'completed', [auth])];
  const restMinor = hold.amountMinor - amountMinor;
  if (restMinor > 0n) {
    entries.push(...pair({ account: hold.payer, layer: 'reserved' }, { account: hold.payer, layer: 'available' }, hold.asset, restMinor, 'release', 'returned', [auth]));
  }
  return done('Completed', entries, { follow: { ref: op.ref, state: 'Captured' }, records: stage.writes() });
}

function decideRelease(cmd: Extract<Command, { type: 'release' }>, actor: Actor, reads: Reads, input: DecisionInput): Decision {
  const stage = new GrantStage();
  const held = heldReservation(cmd, actor, reads, input, stage);
  if (isRefusal(held)) return reject(held);
  const entries = pair({ account: held.hold.payer, layer: 'reserved' }, { account: held.hold.payer, layer: 'available' }, held.hold.asset, held.hold.amountMinor, 'release', 'returned', [held.auth]);
  return done('Completed', entries, { follow: { ref: held.op.ref, state: 'Released' }, records: stage.writes() });
}

function decideOpenAccount(cmd: Extract<Command, { type: 'open_account' }>, actor: Actor, reads: Reads, input: DecisionInput): Decision {
  const { operator } = input.principals;
  const account: Account = {
    id: input.newAccountId,
    owner: cmd.owner,
    kind: cmd.kind,
    custody: cmd.custody,
    status: 'active',
    openedAtMs: input.atMs,
    epoch: 0,
    treasuryLimits: cmd.treasuryLimits,
    // An owned account keeps the terms its holder acknowledged, whatever the config says later.
    ...(cmd.custody === 'owned' ? { mechanisms: input.terms.mechanisms } : {}),
  };
  let records: readonly RecordWrite[] = [];
  if (!opensAccountFor(actor, cmd.owner, input.principals)) {
    // Otherwise only a delegated grant over the owner naming open_account lets one open it.
    const stage = new GrantStage();
    const viaGrant = grantAuthority(actor, { op: 'open_account', account, asset: null, counterparty: null, amountMinor: 0n, atMs: input.atMs }, reads, stage);
    if (isRefusal(viaGrant)) return reject(viaGrant);
    records = stage.writes();
  }
  if (cmd.kind === 'treasury' && (actor.principal !== operator || cmd.owner !== operator)) {
    return reject(refusal('ERR-NotAuthorised', 'only the operator opens treasury accounts, for itself'));
  }
  const unacknowledged = ownedTermsRefusal(cmd, input.terms);
  if (unacknowledged) return reject(unacknowledged);
  const owner = reads.identity(cmd.owner);
  if (owner === undefined) return reject(refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers identity ${cmd.owner}`));
  const full = accountRoomRefusal(owner);
  if (full) return reject(full);
  for (const symbol of Object.keys(cmd.treasuryLimits)) {
    if (reads.asset(symbol as AssetSymbol) === undefined) return reject(refusal('ERR-UnknownAsset', `treasury limit names unknown asset ${symbol}`));
  }
  if (reads.account(input.newAccountId) !== undefined) return reject(refusal('ERR-Internal', 'drawn account id is taken'));
  return done('Completed', [], { openAccount: account, records });
}

/** A custody decision as an operation's decision: a recovery's sweep becomes its postings. */
function fromCustody(effects: CustodyEffects | Refusal): Decision {
  if ('error' in effects) return reject(effects);
  const { sweep } = effects;
  const entries = sweep === null ? [] : sweep.amounts.flatMap(({ asset, amountMinor }) => pair({ account: sweep.from, layer: 'available' }, { account: sweep.to, layer: 'available' }, asset, amountMinor, 'recovery', 'completed', [sweep.authority]));
  return done('Completed', entries, { accounts: effects.accounts, identities: effects.identities, records: effects.records, result: effects.result });
}

export function decide(op: Operation, reads: Reads, input: DecisionInput): Decision {
  const actor: Actor = { principal: op.actor.principal, credential: op.actor.credential, onBehalfOf: op.actor.onBehalfOf, scope: op.scope };
  const cmd = op.command;
  const restricted = commandGate(actor, none, reads, input.principals);
  if (restricted) return reject(restricted);
  if (isCustodyCommand(cmd)) return fromCustody(decideCustody(cmd, actor, reads, { atMs: input.atMs, principals: input.principals, terms: input.terms, ref: op.ref, challenges: input.challenges }));
  switch (cmd.type) {
    case 'transfer':
      return decideTransfer(cmd, actor, reads, input);
    case 'reserve':
      return decideReserve(cmd, actor, reads, input);
    case 'capture':
      return decideCapture(cmd, actor, reads, input);
    case 'release':
      return decideRelease(cmd, actor, reads, input);
    case 'open_account':
      return decideOpenAccount(cmd, actor, reads, input);
    case 'create_identity':
      return fromAuth(decideCreateIdentity(cmd, actor, reads, input));
    case 'register_credential':
      return fromAuth(decideRegisterCredential(cmd, actor, reads, input));
    case 'issue_grant': {
      const issued = decideIssueGrant(cmd, actor, reads, { atMs: input.atMs, principals: input.principals, newGrantId: input.newGrantId });
      return isRefusal(issued) ? reject(issued) : done('Completed', [], { records: issued.records, result: { grant: issued.grant } });
    }
    case 'revoke_grant': {
      const revoked = decideRevokeGrant(cmd, actor, reads, input);
      return isRefusal(revoked) ? reject(revoked) : done('Completed', [], { records: revoked });
    }
    case 'register_party': {
      const registered = decideRegisterParty(cmd, actor, reads, input);
      return isRefusal(registered) ? reject(registered) : done('Completed', [], { records: registered.records, result: { party: registered.party } });
    }
    case 'set_member_role':
    case 'remove_member': {
      const changed = decideMemberChange(cmd, reads, memberPrefix, input.atMs);
      return isRefusal(changed) ? reject(changed) : done('Completed', [], { records: [changed] });
    }
    case 'propose': {
      const proposed = decidePropose(op, cmd, reads, input.atMs, input.newProposalId);
      return isRefusal(proposed) ? reject(proposed) : done('Completed', [], { records: proposed.records, result: { proposal: proposed.proposal } });
    }
    case 'reject_proposal': {
      const rejected = decideReject(op, cmd, reads, input.atMs);
      return isRefusal(rejected) ? reject(rejected) : done('Completed', [], { records: rejected });
    }
    case 'set_approval_policy':
      return done('Completed', [], { records: [{ key: approvalPolicyKey, value: cmd.policy }] });
    default:
      // Settlement commands are decided by decide-settlement.ts, which leans on this module.
      return fail(`command ${cmd.type} is decided by decideCommand`);
  }
}

/** A reservation whose deadline passed: its hold returns to available. */
export function decideExpiry(op: Operation): readonly Entry[] {
  const hold = op.hold!;
  return pair({ account: hold.payer, layer: 'reserved' }, { account: hold.payer, layer: 'available' }, hold.asset, hold.amountMinor, 'expiry', 'returned', [hold.authority ?? op.actor]);
}
