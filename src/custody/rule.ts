/**
 * Custody's one rule (CONTRACT 8), written once: whether value may leave an account (or
 * a hold on it be taken or finished) on the operator's custodial authority. Every
 * decision that moves value out of an account (transfers, reservations, captures,
 * releases; withdrawals to come) finds its authority in auth/authority.ts (the owner's
 * and the operator's own) or auth/grants.ts (grants), and both ask this function for
 * the operator's authority and for grants over `delegated_accounts`. What does not rest
 * on custody needs no asking: the owner itself, a grant its owner gave over the account
 * by name or asset, and a completed recovery (custody/decide-custody.ts).
 */
import type { Account } from '../model/model.js';

/** Whether the operator's authority, and grants over `delegated_accounts`, reach the account: only while its custody is delegated. */
export function underOperatorCustody(account: Pick<Account, 'custody'>): boolean {
  return account.custody === 'delegated';
}
