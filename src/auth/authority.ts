/**
 * Who may act on what. The kernel asks this module for the authority a caller holds
 * over an account; the answer is recorded on every posting the act makes.
 */
import { type Refusal, refusal } from '../errors.js';
import type { Account, Authority, AuthorityKind, Operation } from '../model/model.js';
import type { AccountId, CredentialId, IdentityId } from '../model/values.js';
import { underOperatorCustody } from '../custody/rule.js';

/** The caller as authenticated at the edge: who, with which credential, for whom. */
export interface Actor {
  readonly principal: IdentityId;
  readonly credential: CredentialId;
  readonly onBehalfOf: IdentityId | null;
  /** A scoped credential reaches only these accounts (spec 5.5); absent or null: no limit. */
  readonly scope?: readonly AccountId[] | null;
}

/** Whether the actor's credential scope covers the account. */
export function inScope(actor: Actor, account: AccountId): boolean {
  return actor.scope === undefined || actor.scope === null || actor.scope.includes(account);
}

/** The book's built-in principals (CONTRACT 1 and 5). */
export interface Principals {
  readonly operator: IdentityId;
  readonly identities: IdentityId;
}

export const builtInPrincipals: Principals = {
  operator: 'did:ledger:id:operator' as IdentityId,
  identities: 'did:ledger:id:identities' as IdentityId,
};

/**
 * An authority of the actor's own. `on_behalf_of` names the identity the header named
 * only when the authority that allowed the act is over it: the operator's custody of an
 * account that identity owns (a grant over it: decide-grants.ts). An owner acts for itself.
 */
function authority(actor: Actor, kind: AuthorityKind, account: Account): Authority {
  const onBehalfOf = kind === 'operator' && actor.onBehalfOf === account.owner ? account.owner : null;
  return { credential: actor.credential, grant: null, kind, onBehalfOf, principal: actor.principal };
}

/**
 * The authority under which `actor` may move value out of `account` by itself, or
 * null (then only a grant can give it: decide-grants.ts). The owner acts as `owner`;
 * the operator acts on customer accounts in delegated custody as `operator`. Value
 * leaves a treasury account only under an issuance grant (CONTRACT 5), whoever asks.
 */
export function authorityToDebit(actor: Actor, account: Account, principals: Principals): Authority | null {
  const kind = debitKind(actor, account, principals);
  return kind === null ? null : authority(actor, kind, account);
}

/** The kind of authorityToDebit's answer, or null: whether the actor may debit by itself, no authority made (the prefetch asks for every command). */
export function debitKind(actor: Actor, account: Account, principals: Principals): AuthorityKind | null {
  if (!inScope(actor, account.id) || account.kind === 'treasury') return null;
  if (actor.principal === account.owner) return 'owner';
  return operatesOn(actor, account, principals) ? 'operator' : null;
}

/** The operator's own authority over an account, which its custody must admit (custody/rule.ts). */
function operatorAuthority(actor: Actor, account: Account, principals: Principals): Authority | null {
  return operatesOn(actor, account, principals) ? authority(actor, 'operator', account) : null;
}
const operatesOn = (actor: Actor, account: Account, principals: Principals): boolean => actor.principal === principals.operator && underOperatorCustody(account);

/**
 * The authority of the account's owner, or of the operator where custody admits it, acting
 * on it without debiting (finishing a reservation); anyone else needs a grant.
 */
export function actingAuthority(actor: Actor, principals: Principals, account: Account): Authority | null {
  if (actor.principal === account.owner) return authority(actor, 'owner', account);
  return operatorAuthority(actor, account, principals);
}

/**
 * Whether `actor` may open an account for `owner` by itself: the owner, the identities
 * service or the operator. Anyone else needs a grant over the owner naming open_account.
 */
export function opensAccountFor(actor: Actor, owner: IdentityId, principals: Principals): boolean {
  return actor.principal === owner || actor.principal === principals.identities || actor.principal === principals.operator;
}

/** Whether `actor` may read or act on an account at all (reads, captures, releases). */
export function reaches(actor: Actor, account: Account, principals: Principals): boolean {
  // A scoped credential reaches nothing outside its scope, whoever it belongs to.
  return inScope(actor, account.id) && (actor.principal === account.owner || actor.principal === principals.operator || actor.principal === principals.identities);
}

/** The accounts an operation moves value out of: what a credential must reach to have submitted it. */
function debitedBy(op: Operation): readonly AccountId[] {
  switch (op.command.type) {
    case 'transfer':
      return op.command.legs.map((leg) => leg.from);
    case 'reserve':
      return [op.command.payer];
    case 'withdraw':
      return [op.command.account];
    default:
      return [];
  }
}

/**
 * Who sees an operation (its view and its events, CONTRACT 4: whoever could have
 * submitted it, and the operator). A scoped credential of the submitting principal
 * sees it only if it could have submitted it too: the operation was submitted under
 * a scope within the caller's, or every account it debits lies within the caller's.
 */
export function operationVisible(op: Operation, caller: Actor, principals: Principals): boolean {
  if (caller.principal === principals.operator) return true;
  if (caller.principal !== op.actor.principal) return false;
  if (caller.scope === undefined || caller.scope === null) return true;
  const submittedWithin = op.scope !== null && op.scope.every((account) => inScope(caller, account));
  const debited = debitedBy(op);
  return submittedWithin || (debited.length > 0 && debited.every((account) => inScope(caller, account)));
}

/**
 * The refusal for an account the caller cannot see: unknown and unreachable answer
 * alike, so only the operator learns that an account does not exist.
 */
export function unreachableAccount(actor: Actor, id: AccountId, principals: Principals): Refusal {
  return actor.principal === principals.operator
    ? refusal('ERR-UnknownAccount', `account ${id} is unknown`)
    : refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers account ${id}`);
}
