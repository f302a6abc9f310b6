import { randomBytes } from 'node:crypto';
import { seqHex } from './codec.js';
import type { IdSource } from './kernel.js';
import type { AccountId, CredentialId, GrantId, IdentityId, PartyId } from './values.js';

/**
 * Every operation reference starts with `op_` and the command's sequence number in 16
 * hex digits, so the kernel finds an undecided command from its reference alone.
 */
export function cseqOfRef(ref: string): number | null {
  const m = /^op_([0-9a-f]{16})[0-9a-f]*$/.exec(ref);
  if (m === null) return null;
  const cseq = parseInt(m[1]!, 16);
  return Number.isSafeInteger(cseq) ? cseq : null;
}

/**
 * Ids derived from the command sequence alone: a replay of the same commands draws
 * the same ids. Tests and replays use it.
 */
export const sequentialIds: IdSource = {
  operationRef: (cseq) => `op_${seqHex(cseq)}`,
  accountId: (cseq) => `did:ledger:acct:a${seqHex(cseq)}` as AccountId,
  identityId: (cseq) => `did:ledger:id:i${seqHex(cseq)}` as IdentityId,
  credentialId: (cseq) => `did:ledger:cred:c${seqHex(cseq)}` as CredentialId,
  grantId: (cseq) => `did:ledger:grant:g${seqHex(cseq)}` as GrantId,
  partyId: (cseq) => `did:ledger:party:p${seqHex(cseq)}` as PartyId,
};

/**
 * The daemon's ids: the command sequence plus a random salt drawn once per process
 * start and kept nowhere, so references are unique and not guessable from volume.
 * Determinism of the book is unaffected: ids are inputs recorded with the decision.
 */
export function saltedIds(salt = randomBytes(6).toString('hex')): IdSource {
  return {
    operationRef: (cseq) => `op_${seqHex(cseq)}${salt}`,
    accountId: (cseq) => `did:ledger:acct:${seqHex(cseq)}${salt}` as AccountId,
    identityId: (cseq) => `did:ledger:id:${seqHex(cseq)}${salt}` as IdentityId,
    credentialId: (cseq) => `did:ledger:cred:${seqHex(cseq)}${salt}` as CredentialId,
    grantId: (cseq) => `did:ledger:grant:${seqHex(cseq)}${salt}` as GrantId,
    partyId: (cseq) => `did:ledger:party:${seqHex(cseq)}${salt}` as PartyId,
  };
}
