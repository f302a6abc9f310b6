/**
 * The checks a command passes before it is acknowledged, against the committed book.
 * What only the decision can know (balances, the order of competing commands) is
 * left to it; what the caller could never be allowed is refused now, storing nothing.
 * Synchronous over reads the intake prefetched, like the decisions themselves.
 */
import { type Actor, type Principals, debitKind, inScope, opensAccountFor, unreachableAccount } from '../auth/authority.js';
import { type GrantReads, type GrantUseRequest, GrantStage, debitAuthority, decideIssueGrant, decideRevokeGrant, finishAuthority, grantAuthority } from './decide-grants.js';
import { transferLegsMax } from '../constants.js';
import { type Refusal, refusal } from '../errors.js';
import type { Account, Asset, Authority, Command, Identity, Operation } from '../model/model.js';
import { isCustodyCommand, terminalStates } from '../model/model.js';
import type { AccountId, AssetSymbol, GrantId, IdentityId } from '../model/values.js';
import { custodyNeeds, custodyPrecheck } from '../custody/decide-custody.js';
import { commandGate } from './gates.js';
import { type RecoveryTerms, ownedTermsRefusal } from '../custody/terms.js';

export interface PrecheckReads extends GrantReads {
  asset(symbol: AssetSymbol): Asset | undefined;
  account(id: AccountId): Account | undefined;
  identity(id: string): Identity | undefined;
  operation(ref: string): Operation | undefined;
}

const noOperations: readonly string[] = Object.freeze([]);

/** Accounts, identities (besides the actor's) and operations a precheck of `command` reads (the intake fetches them first). */
export function precheckNeeds(command: Command): { accounts: readonly AccountId[]; operations: readonly string[]; identities?: readonly IdentityId[] } {
  if (isCustodyCommand(command)) return { ...custodyNeeds(command, null), operations: [] };
  switch (command.type) {
    case 'transfer':
      // No operations: a shared empty list (this runs for every transfer).
      return { accounts: command.legs.map((l) => l.from), operations: noOperations };
    case 'reserve':
      return { accounts: [command.payer], operations: [] };
    case 'withdraw':
      return { accounts: [command.account], operations: [] };
    case 'capture':
    case 'release':
      return { accounts: [], operations: [command.reservation] };
    case 'issue_grant': {
      const { subject } = command.terms;
      return { accounts: typeof subject === 'object' && 'account' in subject ? [subject.account] : [], operations: [] };
    }
    case 'open_account':
    case 'create_identity':
    case 'register_credential':
    case 'revoke_grant':
    case 'register_party':
    case 'set_member_role':
    case 'remove_member':
    case 'register_asset':
    case 'bind_asset':
    case 'deprecate_asset':
    case 'settle':
    case 'observe':
    case 'propose':
    case 'reject_proposal':
    case 'set_approval_policy':
      return { accounts: [], operations: [] };
  }
}

const notAuthorisedOver = (what: string) => refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers ${what}`);

/** Whether the actor may debit `id` at all, by itself or under a grant (bounds are checked against committed usage). */
function mayDebit(actor: Actor, use: Omit<GrantUseRequest, 'account'> & { account: AccountId }, reads: PrecheckReads, principals: Principals, stage: GrantStage): Refusal | null {
  const account = reads.account(use.account);
  // Only the operator may learn that an account does not exist.
  if (account === undefined) return unreachableAccount(actor, use.account, principals);
  // Its own authority (most commands): no grant read and no authority made only to be dropped.
  if (debitKind(actor, account, principals) !== null) return null;
  const authority = debitAuthority(actor, { ...use, account }, reads, principals, stage);
  return 'error' in authority ? authority : null;
}

/**
 * The reservation a capture or release names and the authority to finish it, or why
 * not. A capture moves its amount (all that is held when it names none) to `to` under
 * that authority; a release moves nothing away from the payer. Shared by the precheck
 * and the decision.
 */
export function finishing(
  command: Extract<Command, { type: 'capture' | 'release' }>,
  actor: Actor,
  reads: PrecheckReads,
  principals: Principals,
  atMs: number,
  stage: GrantStage,
): { reservation: Operation; authority: Authority } | Refusal {
  const reservation = reads.operation(command.reservation);
  const payer = reservation?.command.type === 'reserve' ? reads.account(reservation.command.payer) : undefined;
  if (reservation?.command.type !== 'reserve' || payer === undefined) return refusal('ERR-UnknownOperation', `no reservation ${command.reservation} is visible to the caller`);
  const held = reservation.command;
  const use =
    command.type === 'capture'
      ? { op: 'capture' as const, asset: held.asset, counterparty: command.to, amountMinor: command.amountMinor ?? held.amountMinor, atMs }
      : { op: 'release' as const, asset: held.asset, counterparty: null, amountMinor: 0n, atMs };
  const authority = finishAuthority(actor, reservation, payer, use, reads, principals, stage);
  return 'error' in authority ? authority : { reservation, authority };
}

export function precheck(command: Command, actor: Actor, reads: PrecheckReads, principals: Principals, nowMs: number, terms: RecoveryTerms): Refusal | null {
  // The gates every path shares (gates.ts); the accounts a kernel command names are gated by its own decision, after its authority.
  return commandGate(actor, [], reads, principals) ?? precheckCommand(command, actor, reads, principals, nowMs, terms);
}

function precheckCommand(command: Command, actor: Actor, reads: PrecheckReads, principals: Principals, nowMs: number, terms: RecoveryTerms): Refusal | null {
  const unknownAsset = (symbol: AssetSymbol) => (reads.asset(symbol) === undefined ? refusal('ERR-UnknownAsset', `asset ${symbol} is not registered`) : null);
  switch (command.type) {
    case 'transfer': {
      if (command.legs.length === 0) return refusal('ERR-MalformedCommand', 'legs must hold at least one leg');
      if (command.legs.length > transferLegsMax) return refusal('ERR-BatchTooLarge', `a transfer carries at most ${transferLegsMax} legs`);
      for (let i = 0; i < command.legs.length; i++) {
        const leg = command.legs[i]!;
        if (leg.from === leg.to) return refusal('ERR-UnsupportedLeg', `leg ${i} moves from an account to itself`);
        const r = unknownAsset(leg.asset);
        if (r) return r;
      }
      // One stage for every leg: a per-operation bound covers the whole transfer.
      const stage = new GrantStage();
      for (const leg of command.legs) {
        const r = mayDebit(actor, { op: 'transfer', account: leg.from, asset: leg.asset, counterparty: leg.to, amountMinor: leg.amountMinor, atMs: nowMs }, reads, principals, stage);
        if (r) return r;
      }
      return null;
    }
    case 'reserve':
      return (
        unknownAsset(command.asset) ??
        mayDebit(actor, { op: 'reserve', account: command.payer, asset: command.asset, counterparty: null, amountMinor: command.amountMinor, atMs: nowMs }, reads, principals, new GrantStage())
      );
    case 'capture':
    case 'release': {
      const finish = finishing(command, actor, reads, principals, nowMs, new GrantStage());
      if ('error' in finish) return finish;
      const { state } = finish.reservation;
      if (terminalStates.has(state)) return refusal('ERR-OperationTerminal', `reservation ${command.reservation} is already ${state}`);
      return null;
    }
    case 'open_account': {
      const { operator } = principals;
      if (!opensAccountFor(actor, command.owner, principals)) {
        // The decision's own test, on the account as it would be opened (its id is drawn on acceptance).
        const account: Account = { id: 'did:ledger:acct:precheck' as AccountId, owner: command.owner, kind: command.kind, custody: command.custody, status: 'active', openedAtMs: nowMs, epoch: 0, treasuryLimits: command.treasuryLimits };
        const opening = grantAuthority(actor, { op: 'open_account', account, asset: null, counterparty: null, amountMinor: 0n, atMs: nowMs }, reads, new GrantStage());
        if ('error' in opening) return opening;
      }
      if (command.kind === 'treasury' && actor.principal !== operator) return refusal('ERR-NotAuthorised', 'only the operator opens treasury accounts');
      const unacknowledged = ownedTermsRefusal(command, terms);
      if (unacknowledged) return unacknowledged;
      if (command.kind !== 'treasury' && Object.keys(command.treasuryLimits).length > 0) {
        return refusal('ERR-MalformedCommand', 'treasury_limits apply to treasury accounts only');
      }
      for (const symbol of Object.keys(command.treasuryLimits)) {
        const r = unknownAsset(symbol as AssetSymbol);
        if (r) return r;
      }
      return null;
    }
    case 'create_identity':
      return actor.principal === principals.identities ? null : notAuthorisedOver('creating identities');
    case 'register_credential': {
      const mayRegister = actor.principal === command.identity || (actor.principal === principals.identities && actor.onBehalfOf === command.identity);
      if (!mayRegister) return notAuthorisedOver(`registering credentials for ${command.identity}`);
      if ((command.identity === principals.operator) !== (command.member !== undefined)) return notAuthorisedOver('this registration: operator credentials are added as members (POST /v1/ops/members)');
      const outside = (command.scope ?? []).find((account) => !inScope(actor, account));
      return outside === undefined ? null : notAuthorisedOver(`account ${outside}`);
    }
    case 'issue_grant': {
      // The decision's own rules, against the committed book; the grant id is drawn only on acceptance.
      const issued = decideIssueGrant(command, actor, reads, { atMs: nowMs, principals, newGrantId: 'did:ledger:grant:precheck' as GrantId });
      return 'error' in issued ? issued : null;
    }
    case 'revoke_grant': {
      const revoked = decideRevokeGrant(command, actor, reads, { atMs: nowMs, principals });
      return 'error' in revoked ? revoked : null;
    }
    case 'register_party':
      return actor.principal === principals.operator ? null : notAuthorisedOver('registering integrating parties (operator only)');
    case 'set_member_role':
    case 'remove_member':
      return actor.principal === principals.operator ? null : notAuthorisedOver('members of the operator (operator only)');
    case 'propose':
    case 'reject_proposal':
    case 'set_approval_policy':
      return actor.principal === principals.operator && actor.onBehalfOf === null ? null : notAuthorisedOver('proposals and the approval policy (operator only)');
    case 'withdraw': {
      const asset = reads.asset(command.asset);
      if (asset === undefined) return refusal('ERR-UnknownAsset', `asset ${command.asset} is not registered`);
      if (asset.status === 'deprecated') return refusal('ERR-AssetDeprecated', `asset ${command.asset} is deprecated`);
      if (asset.binding !== 'bound') return refusal('ERR-UnsupportedLeg', `asset ${command.asset} is not bound to the settlement layer`);
      return mayDebit(actor, { op: 'withdraw', account: command.account, asset: command.asset, counterparty: null, amountMinor: command.amountMinor, atMs: nowMs }, reads, principals, new GrantStage());
    }
    case 'register_asset':
      if (actor.principal !== principals.operator) return notAuthorisedOver('registering assets (operator only)');
      return reads.asset(command.asset) === undefined ? null : refusal('ERR-InvalidTransition', `asset ${command.asset} is registered already`);
    case 'bind_asset':
    case 'deprecate_asset':
      return actor.principal === principals.operator ? unknownAsset(command.asset) : notAuthorisedOver('asset bindings and status (operator only)');
    case 'settle':
    case 'observe':
      return actor.principal === principals.operator ? null : notAuthorisedOver('taking in the settlement layer (operator only)');
    default:
      return custodyPrecheck(command, actor, reads, { atMs: nowMs, principals, terms });
  }
}
