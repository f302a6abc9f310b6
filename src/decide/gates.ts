/**
 * The gates every command passes before its own rules, whichever path decides it: the
 * kernel's precheck (and so every acknowledged command) and the commands the daemon
 * decides at once, outside the rounds (disclosures, checkpoints, the settlement
 * comparisons and rescans, the embedded layer's deposits). Written once, so that no
 * side path can skip one (issue 20).
 *
 * - Restriction (CONTRACT 10): a restricted identity's commands are refused, whatever they are.
 * - Each account the command names: unknown or outside the credential's scope is
 *   refused as unreachable (only the operator learns it does not exist); on one the
 *   caller reaches (owner, operator, identities principal) a closed account takes no
 *   command (ERR-AccountClosed) and, where the command moves value, a frozen one none
 *   either (ERR-AccountFrozen). On an account the caller reaches only through a grant,
 *   or not at all, the command's own authority answers first, so a stranger learns
 *   nothing of the account's state.
 * - Custody needs no gate of its own here: the operator's custodial authority is asked
 *   by each act that rests on it (custody/rule.ts); no side path moves value.
 */
import { type Actor, type Principals, inScope, reaches, unreachableAccount } from '../auth/authority.js';
import { restrictionRefusal } from '../custody/decide-custody.js';
import { type Refusal, refusal } from '../errors.js';
import type { Account, Identity } from '../model/model.js';
import type { AccountId } from '../model/values.js';

export interface GateReads {
  identity(id: string): Identity | undefined;
  account(id: AccountId): Account | undefined;
}

/** An account a command names, and whether the command moves value on it. */
export interface GatedAccount {
  readonly id: AccountId;
  readonly moves: boolean;
}

/** The first gate `actor`'s command fails, or null. */
export function commandGate(actor: Actor, accounts: readonly GatedAccount[], reads: GateReads, principals: Principals): Refusal | null {
  const restricted = restrictionRefusal(actor, reads, principals);
  if (restricted) return restricted;
  for (const { id, moves } of accounts) {
    const account = reads.account(id);
    if (account === undefined || !inScope(actor, id)) return unreachableAccount(actor, id, principals);
    if (!reaches(actor, account, principals)) continue;
    if (account.status === 'closed') return refusal('ERR-AccountClosed', `account ${id} is closed`);
    if (moves && account.status === 'frozen') return refusal('ERR-AccountFrozen', `account ${id} is frozen`);
  }
  return null;
}
