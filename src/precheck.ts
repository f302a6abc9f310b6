/**
 * The checks a command passes before it is acknowledged, against the committed book.
 * What only the decision can know (balances, the order of competing commands) is
 * left to it; what the caller could never be allowed is refused now, storing nothing.
 * Synchronous over reads the intake prefetched, like the decisions themselves.
 */
import { type Actor, type Principals, inScope, unreachableAccount } from './authority.js';
import { type GrantReads, type GrantUseRequest, debitAuthority, decideIssueGrant, decideRevokeGrant, heldGrantPrefix } from './decide-grants.js';
import { transferLegsMax } from './constants.js';
import { type Refusal, refusal } from './errors.js';
import type { Account, Asset, Command, Operation } from './model.js';
import { terminalStates } from './model.js';
import type { AccountId, AssetSymbol, GrantId } from './values.js';

export interface PrecheckReads extends GrantReads {
  asset(symbol: AssetSymbol): Asset | undefined;
  account(id: AccountId): Account | undefined;
  operation(ref: string): Operation | undefined;
}

/** Accounts and operations a precheck of `command` reads (the intake fetches them first). */
export function precheckNeeds(command: Command): { accounts: AccountId[]; operations: string[] } {
  switch (command.type) {
    case 'transfer':
      return { accounts: command.legs.map((l) => l.from), operations: [] };
    case 'reserve':
      return { accounts: [command.payer], operations: [] };
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
      return { accounts: [], operations: [] };
  }
}

const notAuthorisedOver = (what: string) => refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers ${what}`);

/** Whether the actor may debit `id` at all, by itself or under a grant (bounds are checked against committed usage). */
function mayDebit(actor: Actor, use: Omit<GrantUseRequest, 'account'> & { account: AccountId }, reads: PrecheckReads, principals: Principals): Refusal | null {
  const account = reads.account(use.account);
  // Only the operator may learn that an account does not exist.
  if (account === undefined) return unreachableAccount(actor, use.account, principals);
  const authority = debitAuthority(actor, { ...use, account }, reads, principals, new Map());
  return 'error' in authority ? authority : null;
}

/** A reservation the actor may finish: its submitter, the payer's owner, or the operator, within the credential's scope. */
export function mayFinish(actor: Actor, reservation: Operation | undefined, payerOwner: string | undefined, principals: Principals): boolean {
  return (
    reservation !== undefined &&
    reservation.command.type === 'reserve' &&
    // A scoped credential finishes nothing held against an account outside its scope.
    inScope(actor, reservation.command.payer) &&
    (reservation.actor.principal === actor.principal || actor.principal === principals.operator || payerOwner === actor.principal)
  );
}

export function precheck(command: Command, actor: Actor, reads: PrecheckReads, principals: Principals, nowMs: number): Refusal | null {
  const unknownAsset = (symbol: AssetSymbol) => (reads.asset(symbol) === undefined ? refusal('ERR-UnknownAsset', `asset ${symbol} is not registered`) : null);
  switch (command.type) {
    case 'transfer': {
      if (command.legs.length === 0) return refusal('ERR-MalformedCommand', 'legs must hold at least one leg');
      if (command.legs.length > transferLegsMax) return refusal('ERR-BatchTooLarge', `a transfer carries at most ${transferLegsMax} legs`);
      for (const [i, leg] of command.legs.entries()) {
        if (leg.from === leg.to) return refusal('ERR-UnsupportedLeg', `leg ${i} moves from an account to itself`);
        const r = unknownAsset(leg.asset);
        if (r) return r;
      }
      for (const leg of command.legs) {
        const r = mayDebit(actor, { op: 'transfer', account: leg.from, asset: leg.asset, counterparty: leg.to, amountMinor: leg.amountMinor, atMs: nowMs }, reads, principals);
        if (r) return r;
      }
      return null;
    }
    case 'reserve':
      return unknownAsset(command.asset) ?? mayDebit(actor, { op: 'reserve', account: command.payer, asset: command.asset, counterparty: null, amountMinor: command.amountMinor, atMs: nowMs }, reads, principals);
    case 'capture':
    case 'release': {
      const op = reads.operation(command.reservation);
      const payer = op?.command.type === 'reserve' ? reads.account(op.command.payer) : undefined;
      if (!mayFinish(actor, op, payer?.owner, principals)) return refusal('ERR-UnknownOperation', `no reservation ${command.reservation} is visible to the caller`);
      if (terminalStates.has(op!.state)) return refusal('ERR-OperationTerminal', `reservation ${command.reservation} is already ${op!.state}`);
      return null;
    }
    case 'open_account': {
      const { operator, identities } = principals;
      if (actor.principal !== command.owner && actor.principal !== identities && actor.principal !== operator && reads.listed(heldGrantPrefix(actor.principal)).length === 0) {
        return notAuthorisedOver('opening an account for that identity');
      }
      if (command.kind === 'treasury' && actor.principal !== operator) return refusal('ERR-NotAuthorised', 'only the operator opens treasury accounts');
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
  }
}
