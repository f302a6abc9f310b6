/**
 * Recovery terms (CONTRACT 8): the mechanisms an owner is shown before taking owned
 * custody, and their digest, lowercase hex SHA-256 of the canonical JSON of the
 * mechanisms as the wire shows them. The daemon's config names the authority and the
 * delay, the same for every identity; an owned account keeps the mechanisms it was given.
 */
import { createHash } from 'node:crypto';
import { assert } from '../assert.js';
import { recoveryDelayMaxMs } from '../constants.js';
import { canonicalJson } from '../model/canonical.js';
import { type Refusal, refusal } from '../errors.js';
import type { Account, Command, RecoveryMechanism } from '../model/model.js';
import type { IdentityId } from '../model/values.js';

export interface RecoveryTerms {
  readonly mechanisms: readonly RecoveryMechanism[];
  readonly digest: string;
}

/** A mechanism as endpoint 17 and the recovery terms show it. */
export function mechanismWire(m: RecoveryMechanism): { mechanism: string; authority: string; delay: number } {
  return { mechanism: m.mechanism, authority: m.authority, delay: m.delayMs };
}

export function mechanismsDigest(mechanisms: readonly RecoveryMechanism[]): string {
  return createHash('sha256').update(canonicalJson(mechanisms.map(mechanismWire)), 'utf8').digest('hex');
}

/** The terms every identity is shown: one recovery authority and its delay. */
export function recoveryTerms(authority: IdentityId, delayMs: number): RecoveryTerms {
  assert(Number.isSafeInteger(delayMs) && delayMs >= 0 && delayMs <= recoveryDelayMaxMs, 'a recovery delay is within its bounds');
  const mechanisms: RecoveryMechanism[] = [{ mechanism: 'recovery_authority', authority, delayMs }];
  return { mechanisms, digest: mechanismsDigest(mechanisms) };
}

/** An account's mechanisms: those fixed when it became owned, else its owner's current terms (what a reclaim would fix). */
export function mechanismsOf(account: Account, terms: RecoveryTerms): RecoveryTerms {
  return account.custody === 'owned' && account.mechanisms !== undefined ? { mechanisms: account.mechanisms, digest: mechanismsDigest(account.mechanisms) } : terms;
}

/**
 * Owned custody is opened only over the current recovery terms' digest (spec 5.8,
 * CONTRACT 8): missing or stale is ERR-NotAuthorised. Shared by the precheck and the decision.
 */
export function ownedTermsRefusal(cmd: Extract<Command, { type: 'open_account' }>, terms: RecoveryTerms): Refusal | null {
  if (cmd.custody !== 'owned') return null;
  if (cmd.kind === 'treasury') return refusal('ERR-InvalidTransition', 'treasury accounts are in delegated custody');
  return cmd.acknowledged === terms.digest ? null : refusal('ERR-NotAuthorised', 'opening an owned-custody account needs acknowledged: the digest of the current recovery terms (GET /v1/identities/{identity}/recovery-terms)');
}
