/**
 * Custody and the account and identity lifecycle (CONTRACT 8, 10): reclaim, recovery and
 * succession, freeze, close, restrict. Pure and synchronous over prefetched reads, like
 * every decision. Each command's gate (who may, and the state it needs) is shared by the
 * precheck, against the committed book, and the decision, in order with every other
 * command; what only the decision can know (balances, the proof's epoch, a challenge
 * taken once) is the decision's alone.
 */
import { type Actor, type Principals, inScope, unreachableAccount } from '../auth/authority.js';
import { reclaimMessage } from '../auth/challenges.js';
import { type Credential, decodeCredential } from '../auth/credentials.js';
import { verifyKeySignature } from '../auth/keys.js';
import { accountsKeptPerIdentityMax, accountsPerIdentityMax, custodyChangesKeptMax } from '../constants.js';
import { type ChallengeGate, type RecordReads, type RecordWrite, takeChallenge } from '../decide/decide-auth.js';
import { type Refusal, refusal } from '../errors.js';
import type { Account, Authority, Balance, CustodyChange, CustodyCommand, Identity, OperationResult } from '../model/model.js';
import type { AccountId, AssetSymbol, IdentityId } from '../model/values.js';
import { type RecoveryTerms, mechanismsOf } from './terms.js';
import { credentialKey } from '../model/keys.js';

export interface CustodyReads extends RecordReads {
  account(id: AccountId): Account | undefined;
  identity(id: string): Identity | undefined;
}

export interface CustodyDecisionReads extends CustodyReads {
  balance(account: AccountId, asset: AssetSymbol): Balance;
  /** Every registered asset: a sweep or a close looks at each. */
  assetSymbols(): readonly AssetSymbol[];
}

export interface CustodyContext {
  readonly atMs: number;
  readonly principals: Principals;
  readonly terms: RecoveryTerms;
}

/** What a custody decision does: accounts and identities rewritten, value swept (recovery), records written. */
export interface CustodyEffects {
  readonly accounts: readonly Account[];
  readonly identities: readonly Identity[];
  readonly records: readonly RecordWrite[];
  /** A recovery's sweep: each asset's available balance from `from` to `to`, under `authority`. */
  readonly sweep: { readonly from: AccountId; readonly to: AccountId; readonly authority: Authority; readonly amounts: readonly { asset: AssetSymbol; amountMinor: bigint }[] } | null;
  readonly result: OperationResult | null;
}

const notAuthorised = (what: string) => refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers ${what}`);
const invalidTransition = (why: string) => refusal('ERR-InvalidTransition', why);
const isRefusal = (v: object): v is Refusal => 'error' in v;

/** The change still pending on an account, if any (at most one at a time). */
export function pendingChange(account: Account): CustodyChange | undefined {
  return account.changes?.find((c) => c.state === 'pending');
}

/** A closed account takes no command at all (CONTRACT 10). */
function closedRefusal(account: Account): Refusal | null {
  return account.status === 'closed' ? refusal('ERR-AccountClosed', `account ${account.id} is closed`) : null;
}

/** The account a command names, or the refusal for one the caller cannot see. */
function named(reads: CustodyReads, id: AccountId, actor: Actor, principals: Principals): Account | Refusal {
  const account = reads.account(id);
  return account === undefined || !inScope(actor, id) ? unreachableAccount(actor, id, principals) : account;
}

/**
 * Whether `identity` has room for one more account (opened for it, or handed to it):
 * at most accountsPerIdentityMax open ones, closed ones not counted (CONTRACT 8), and at
 * most accountsKeptPerIdentityMax listed in all, closed ones included.
 */
export function accountRoomRefusal(identity: Identity): Refusal | null {
  const open = identity.accounts.length - (identity.closedAccounts ?? 0);
  if (open >= accountsPerIdentityMax) return refusal('ERR-BoundExceeded', `identity ${identity.id} already owns ${accountsPerIdentityMax} open accounts, the most allowed; closed accounts do not count`);
  if (identity.accounts.length >= accountsKeptPerIdentityMax) return refusal('ERR-BoundExceeded', `identity ${identity.id} has owned ${accountsKeptPerIdentityMax} accounts, closed ones included, the most one identity keeps`);
  return null;
}

/** The owner's record with one more of its accounts closed (none to count for an identity not in the book). */
function closedOne(owner: Identity | undefined): Identity[] {
  return owner === undefined ? [] : [{ ...owner, closedAccounts: (owner.closedAccounts ?? 0) + 1 }];
}

/** Whether `principal`'s commands can be restricted at all: the built-in principals cannot (lifecycleGate), so their identity is never read. */
export function restrictable(principal: IdentityId, principals: Principals): boolean {
  return principal !== principals.operator && principal !== principals.identities;
}

/** CONTRACT 10: a restricted identity's commands are refused, whatever they are. */
export function restrictionRefusal(actor: Actor, reads: Pick<CustodyReads, 'identity'>, principals: Principals): Refusal | null {
  if (!restrictable(actor.principal, principals)) return null;
  return reads.identity(actor.principal)?.restricted === true ? refusal('ERR-IdentityRestricted', `identity ${actor.principal} is restricted`) : null;
}

// ---------------------------------------------------------------------------------
// Gates: shared by the edge (reclaim), the precheck and the decision

/**
 * Who may reclaim, and from what state (CONTRACT 8): the owner, on a customer account in
 * delegated custody with no change pending, acknowledging the digest endpoint 17 shows.
 * The account's state is checked before the acknowledgement and the proof.
 */
export function reclaimGate(cmd: { readonly account: AccountId; readonly acknowledged: string | null }, actor: Actor, account: Account | undefined, ctx: Omit<CustodyContext, 'atMs'>): Account | Refusal {
  if (account === undefined || !inScope(actor, cmd.account)) return unreachableAccount(actor, cmd.account, ctx.principals);
  if (actor.principal !== account.owner) return notAuthorised(`reclaiming account ${account.id}: only its owner reclaims it`);
  const closed = closedRefusal(account);
  if (closed) return closed;
  if (account.custody === 'owned') return invalidTransition(`account ${account.id} is already in owned custody`);
  if (account.kind === 'treasury') return invalidTransition(`treasury account ${account.id} stays in delegated custody`);
  if (pendingChange(account) !== undefined) return invalidTransition(`account ${account.id} has a custody change pending`);
  if (cmd.acknowledged !== mechanismsOf(account, ctx.terms).digest) {
    return notAuthorised(`reclaiming account ${account.id}: acknowledged is missing or is not the digest of its current recovery mechanisms`);
  }
  return account;
}

/** The proof credential: an active member of the owner's set whose scope covers the account, of the proof's scheme. */
function proofCredential(reads: CustodyReads, cmd: Extract<CustodyCommand, { type: 'reclaim' }>, account: Account): Credential | Refusal {
  const text = reads.record(credentialKey(cmd.credential));
  const credential = text === undefined ? undefined : decodeCredential(text);
  if (credential === undefined || credential.identity !== account.owner) return refusal('ERR-CredentialInvalid', `proof_credential ${cmd.credential} is not a credential of the owner's set`);
  if (credential.scope !== null && !credential.scope.includes(account.id)) return refusal('ERR-CredentialInvalid', `proof_credential ${cmd.credential} does not cover account ${account.id}`);
  if (credential.scheme !== cmd.proof.scheme || credential.verifier === null) return refusal('ERR-CredentialInvalid', `proof_credential ${cmd.credential} is of scheme ${credential.scheme}, which cannot prove this way`);
  return credential;
}

/** A key proof over the epoch the account is at now (CONTRACT 5); a passkey's is the decision's (its challenge is taken there). */
function keyProofRefusal(credential: Credential, cmd: Extract<CustodyCommand, { type: 'reclaim' }>, account: Account): Refusal | null {
  if (cmd.proof.scheme !== 'key') return null;
  return verifyKeySignature(credential.verifier!, cmd.proof.signature, reclaimMessage(account.id, account.epoch));
}

/** Opening a change: who may, on what, toward whom (CONTRACT 8). */
function openGate(cmd: Extract<CustodyCommand, { type: 'open_custody_change' }>, actor: Actor, reads: CustodyReads, ctx: Omit<CustodyContext, 'atMs'>): { account: Account; delayMs: number } | Refusal {
  const account = named(reads, cmd.account, actor, ctx.principals);
  if (isRefusal(account)) return account;
  const [mechanism] = mechanismsOf(account, ctx.terms).mechanisms;
  const opener = cmd.kind === 'recovery' ? mechanism?.authority : account.owner;
  if (actor.principal !== opener) return notAuthorised(`opening a ${cmd.kind} of account ${account.id}`);
  const closed = closedRefusal(account);
  if (closed) return closed;
  if (account.kind === 'treasury') return invalidTransition(`treasury account ${account.id} changes no hands`);
  if (pendingChange(account) !== undefined) return invalidTransition(`account ${account.id} already has a custody change pending`);
  if (reads.identity(cmd.newOwner) === undefined) return notAuthorised(`identity ${cmd.newOwner}`);
  if (cmd.kind === 'succession' && cmd.newOwner === account.owner) return invalidTransition(`identity ${cmd.newOwner} already owns account ${account.id}`);
  if (cmd.kind === 'recovery') {
    const to = recoveryDestination(reads, cmd.to!, cmd.newOwner, account, actor, ctx.principals);
    if (isRefusal(to)) return to;
  }
  return { account, delayMs: mechanism!.delayMs };
}

/** A recovery's destination: an active account of the new owner, other than the one recovered. */
function recoveryDestination(reads: CustodyReads, id: AccountId, newOwner: IdentityId, from: Account, actor: Actor, principals: Principals): Account | Refusal {
  if (id === from.id) return refusal('ERR-UnsupportedLeg', 'a recovery sweeps into another account');
  const to = reads.account(id);
  if (to === undefined) return unreachableAccount(actor, id, principals);
  if (to.owner !== newOwner) return notAuthorised(`account ${id}: a recovery sweeps into an account of the new owner ${newOwner}`);
  return statusRefusal(to) ?? to;
}

/** A frozen or closed account is neither debited nor credited (CONTRACT 10). */
function statusRefusal(account: Account): Refusal | null {
  if (account.status === 'frozen') return refusal('ERR-AccountFrozen', `account ${account.id} is frozen`);
  return closedRefusal(account);
}

/** The change a cancel or complete names, with who may move it. */
function changeGate(cmd: Extract<CustodyCommand, { type: 'cancel_custody_change' | 'complete_custody_change' }>, actor: Actor, reads: CustodyReads, ctx: CustodyContext): { account: Account; change: CustodyChange } | Refusal {
  const account = named(reads, cmd.account, actor, ctx.principals);
  const change = isRefusal(account) ? undefined : account.changes?.find((c) => c.pending === cmd.pending);
  // Nobody learns of a change it could not see: the account's readers and whoever opened it.
  if (isRefusal(account)) return account;
  if (change === undefined) return refusal('ERR-UnknownOperation', `no custody change ${cmd.pending} on account ${account.id}`);
  // Nobody is handed an account unasked (CONTRACT 8): the new owner completes a succession, accepting it.
  const completer = change.kind === 'succession' ? change.newOwner : change.openedBy;
  const mayMove = cmd.type === 'cancel_custody_change' ? actor.principal === change.openedBy || actor.principal === account.owner : actor.principal === completer;
  if (!mayMove) return notAuthorised(`${cmd.type === 'cancel_custody_change' ? 'cancelling' : 'completing'} custody change ${change.pending}`);
  if (change.state !== 'pending') return invalidTransition(`custody change ${change.pending} is already ${change.state}`);
  if (cmd.type === 'complete_custody_change') {
    const closed = closedRefusal(account);
    if (closed) return closed;
    if (ctx.atMs < change.effectiveAtMs) return refusal('ERR-RecoveryNotElapsed', `custody change ${change.pending} may complete at ${change.effectiveAtMs}`);
  }
  return { account, change };
}

/** Freeze, unfreeze, close, restrict: who may, and from what state (CONTRACT 10). */
function lifecycleGate(cmd: CustodyCommand, actor: Actor, reads: CustodyReads, principals: Principals): Account | Identity | Refusal {
  const { operator } = principals;
  switch (cmd.type) {
    case 'freeze_account':
    case 'unfreeze_account': {
      if (actor.principal !== operator) return notAuthorised(`${cmd.type === 'freeze_account' ? 'freezing' : 'unfreezing'} accounts (operator only)`);
      const account = named(reads, cmd.account, actor, principals);
      if (isRefusal(account)) return account;
      const closed = closedRefusal(account);
      if (closed) return closed;
      const wanted = cmd.type === 'freeze_account' ? 'active' : 'frozen';
      return account.status === wanted ? account : invalidTransition(`account ${account.id} is ${account.status}`);
    }
    case 'close_account': {
      const account = named(reads, cmd.account, actor, principals);
      if (isRefusal(account)) return account;
      if (actor.principal !== account.owner && actor.principal !== operator) return notAuthorised(`closing account ${account.id}`);
      const closed = closedRefusal(account);
      if (closed) return closed;
      // A pending change would be left with nothing to complete: cancel it first.
      return pendingChange(account) === undefined ? account : invalidTransition(`account ${account.id} has a custody change pending`);
    }
    case 'restrict_identity':
    case 'unrestrict_identity': {
      if (actor.principal !== operator) return notAuthorised(`${cmd.type === 'restrict_identity' ? 'restricting' : 'unrestricting'} identities (operator only)`);
      const identity = reads.identity(cmd.identity);
      if (identity === undefined) return notAuthorised(`identity ${cmd.identity}`);
      // The built-in principals keep the book running: restricting them would lock the operator out of undoing it.
      if (!restrictable(cmd.identity, principals)) return invalidTransition(`identity ${cmd.identity} is a built-in principal and cannot be restricted`);
      const restricted = identity.restricted === true;
      return restricted === (cmd.type === 'unrestrict_identity') ? identity : invalidTransition(`identity ${cmd.identity} is ${restricted ? 'already' : 'not'} restricted`);
    }
    default:
      return notAuthorised(cmd.type);
  }
}

/** The precheck of a custody command against the committed book: its gate, and a key proof over the epoch as it stands. */
export function custodyPrecheck(cmd: CustodyCommand, actor: Actor, reads: CustodyReads, ctx: CustodyContext): Refusal | null {
  switch (cmd.type) {
    case 'reclaim': {
      const account = reclaimGate(cmd, actor, reads.account(cmd.account), ctx);
      if (isRefusal(account)) return account;
      const credential = proofCredential(reads, cmd, account);
      return isRefusal(credential) ? credential : keyProofRefusal(credential, cmd, account);
    }
    case 'open_custody_change': {
      const gate = openGate(cmd, actor, reads, ctx);
      return isRefusal(gate) ? gate : null;
    }
    case 'cancel_custody_change':
    case 'complete_custody_change': {
      const gate = changeGate(cmd, actor, reads, ctx);
      return isRefusal(gate) ? gate : null;
    }
    default: {
      const gate = lifecycleGate(cmd, actor, reads, ctx.principals);
      return isRefusal(gate) ? gate : null;
    }
  }
}

// ---------------------------------------------------------------------------------
// Decisions

const effects = (e: Partial<CustodyEffects>): CustodyEffects => ({ accounts: [], identities: [], records: [], sweep: null, result: null, ...e });

/** The account with `change` recorded: replacing its earlier state, or added (the oldest finished ones dropped past the bound). */
function withChange(account: Account, change: CustodyChange): Account {
  const changes = [...(account.changes ?? [])];
  const at = changes.findIndex((c) => c.pending === change.pending);
  if (at === -1) changes.push(change);
  else changes[at] = change;
  while (changes.length > custodyChangesKeptMax) {
    const oldest = changes.findIndex((c) => c.state !== 'pending');
    changes.splice(oldest, 1);
  }
  return { ...account, changes };
}

function decideReclaim(cmd: Extract<CustodyCommand, { type: 'reclaim' }>, actor: Actor, reads: CustodyDecisionReads, ctx: CustodyContext, challenges: ChallengeGate): CustodyEffects | Refusal {
  const account = reclaimGate(cmd, actor, reads.account(cmd.account), ctx);
  if (isRefusal(account)) return account;
  const credential = proofCredential(reads, cmd, account);
  if (isRefusal(credential)) return credential;
  const records: RecordWrite[] = [];
  if (cmd.proof.scheme === 'key') {
    const bad = keyProofRefusal(credential, cmd, account);
    if (bad) return bad;
  } else {
    // As at sign-in: the counter only moves forward, and the challenge serves one ceremony.
    const { counter } = cmd.proof;
    if ((credential.counter > 0 || counter > 0) && counter <= credential.counter) return refusal('ERR-CredentialInvalid', 'the sign counter did not increase (replay or cloned authenticator)');
    const taken = takeChallenge(reads, challenges, cmd.proof.challenge, 'authenticate', null, ctx.atMs);
    if (isRefusal(taken)) return taken;
    records.push(...taken, { key: credentialKey(credential.id), value: JSON.stringify({ ...credential, counter }) });
  }
  const owned: Account = { ...account, custody: 'owned', epoch: account.epoch + 1, mechanisms: ctx.terms.mechanisms };
  return effects({ accounts: [owned], records });
}

function decideOpen(cmd: Extract<CustodyCommand, { type: 'open_custody_change' }>, actor: Actor, reads: CustodyReads, ctx: CustodyContext, ref: string): CustodyEffects | Refusal {
  const gate = openGate(cmd, actor, reads, ctx);
  if (isRefusal(gate)) return gate;
  const change: CustodyChange = {
    pending: ref,
    kind: cmd.kind,
    newOwner: cmd.newOwner,
    to: cmd.to,
    openedBy: actor.principal,
    initiatedAtMs: ctx.atMs,
    effectiveAtMs: ctx.atMs + gate.delayMs,
    state: 'pending',
  };
  return effects({ accounts: [withChange(gate.account, change)], result: { pending: ref, effectiveAtMs: change.effectiveAtMs } });
}

function decideCancel(cmd: Extract<CustodyCommand, { type: 'cancel_custody_change' }>, actor: Actor, reads: CustodyReads, ctx: CustodyContext): CustodyEffects | Refusal {
  const gate = changeGate(cmd, actor, reads, ctx);
  if (isRefusal(gate)) return gate;
  const { account, change } = gate;
  return effects({ accounts: [withChange(account, { ...change, state: 'cancelled' })], result: { pending: change.pending, effectiveAtMs: change.effectiveAtMs } });
}

/**
 * Completing a change. A succession hands the account over in place. A recovery sweeps
 * every available balance to the new owner's account under `recovery` authority and
 * closes the account for good; while value is held (reserved, encumbered) it would
 * strand that value, so it is refused (ERR-ReleaseUnsafe). Either raises the epoch.
 */
function decideComplete(cmd: Extract<CustodyCommand, { type: 'complete_custody_change' }>, actor: Actor, reads: CustodyDecisionReads, ctx: CustodyContext): CustodyEffects | Refusal {
  const gate = changeGate(cmd, actor, reads, ctx);
  if (isRefusal(gate)) return gate;
  const { account, change } = gate;
  const completed = withChange(account, { ...change, state: 'completed' });
  const result = { pending: change.pending, effectiveAtMs: change.effectiveAtMs };
  if (change.kind === 'succession') {
    const from = reads.identity(account.owner);
    const to = reads.identity(change.newOwner);
    if (from === undefined || to === undefined) return notAuthorised(`identity ${change.newOwner}`);
    const full = accountRoomRefusal(to);
    if (full) return full;
    return effects({
      accounts: [{ ...completed, owner: change.newOwner, epoch: account.epoch + 1 }],
      identities: [
        { ...from, accounts: from.accounts.filter((id) => id !== account.id) },
        { ...to, accounts: [...to.accounts, account.id] },
      ],
      result,
    });
  }
  const frozen = statusRefusal(account);
  if (frozen) return frozen;
  const to = recoveryDestination(reads, change.to!, change.newOwner, account, actor, ctx.principals);
  if (isRefusal(to)) return to;
  const amounts: { asset: AssetSymbol; amountMinor: bigint }[] = [];
  for (const asset of reads.assetSymbols()) {
    const b = reads.balance(account.id, asset);
    if (b.reserved !== 0n || b.encumbered !== 0n) return refusal('ERR-ReleaseUnsafe', `account ${account.id} still holds ${asset} reserved or encumbered; release it first`);
    if (b.available > 0n) amounts.push({ asset, amountMinor: b.available });
  }
  const authority: Authority = { credential: actor.credential, grant: null, kind: 'recovery', onBehalfOf: null, principal: actor.principal };
  return effects({
    accounts: [{ ...completed, status: 'closed', epoch: account.epoch + 1 }],
    identities: closedOne(reads.identity(account.owner)),
    sweep: { from: account.id, to: to.id, authority, amounts },
    result,
  });
}

/** The lifecycle decisions: the gate, then (closing) emptiness in every asset and layer. */
function decideLifecycle(cmd: CustodyCommand, actor: Actor, reads: CustodyDecisionReads, ctx: CustodyContext): CustodyEffects | Refusal {
  const subject = lifecycleGate(cmd, actor, reads, ctx.principals);
  if (isRefusal(subject)) return subject;
  if ('createdAtMs' in subject) return effects({ identities: [{ ...subject, restricted: cmd.type === 'restrict_identity' }] });
  if (cmd.type === 'close_account') {
    for (const asset of reads.assetSymbols()) {
      const b = reads.balance(subject.id, asset);
      if (b.available !== 0n || b.reserved !== 0n || b.encumbered !== 0n) return refusal('ERR-AccountNotEmpty', `account ${subject.id} still holds ${asset}`);
    }
    return effects({ accounts: [{ ...subject, status: 'closed' }], identities: closedOne(reads.identity(subject.owner)) });
  }
  return effects({ accounts: [{ ...subject, status: cmd.type === 'freeze_account' ? 'frozen' : 'active' }] });
}

export function decideCustody(cmd: CustodyCommand, actor: Actor, reads: CustodyDecisionReads, ctx: CustodyContext & { readonly ref: string; readonly challenges: ChallengeGate }): CustodyEffects | Refusal {
  switch (cmd.type) {
    case 'reclaim':
      return decideReclaim(cmd, actor, reads, ctx, ctx.challenges);
    case 'open_custody_change':
      return decideOpen(cmd, actor, reads, ctx, ctx.ref);
    case 'cancel_custody_change':
      return decideCancel(cmd, actor, reads, ctx);
    case 'complete_custody_change':
      return decideComplete(cmd, actor, reads, ctx);
    default:
      return decideLifecycle(cmd, actor, reads, ctx);
  }
}

/** Accounts and identities a custody command reads, besides its actor (the kernel prefetches them). */
export function custodyNeeds(cmd: CustodyCommand, reads: Pick<CustodyReads, 'account'> | null): { accounts: AccountId[]; identities: IdentityId[] } {
  switch (cmd.type) {
    case 'open_custody_change':
      return { accounts: cmd.to === null ? [cmd.account] : [cmd.account, cmd.to], identities: [cmd.newOwner] };
    case 'complete_custody_change': {
      // The change's parties are on the account record: known once it is read.
      const change = reads?.account(cmd.account)?.changes?.find((c) => c.pending === cmd.pending);
      const account = reads?.account(cmd.account);
      return { accounts: change?.to ? [cmd.account, change.to] : [cmd.account], identities: change && account ? [account.owner, change.newOwner] : [] };
    }
    case 'restrict_identity':
    case 'unrestrict_identity':
      return { accounts: [], identities: [cmd.identity] };
    case 'close_account': {
      // A close counts against its owner's accounts no more: the owner is known once the account is read.
      const owner = reads?.account(cmd.account)?.owner;
      return { accounts: [cmd.account], identities: owner === undefined ? [] : [owner] };
    }
    default:
      return { accounts: [cmd.account], identities: [] };
  }
}
