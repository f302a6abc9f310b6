import { createCipheriv, createDecipheriv } from 'node:crypto';
import { assert } from '../assert.js';
import type { AccountId, CredentialId, GrantId, IdentityId, PartyId } from './values.js';
import { seqHex } from './keys.js';

/** Where the kernel draws every id from, by command sequence number (deterministic: passed in). */
export interface IdSource {
  /** The opaque reference of the operation submitted as command `cseq`. */
  operationRef(cseq: number): string;
  /** The command sequence number an operation reference was drawn for, or null when none was. */
  cseqOf(ref: string): number | null;
  /** The id of the account opened by command `cseq`. */
  accountId(cseq: number): AccountId;
  /** The id of the identity created by command `cseq`. */
  identityId(cseq: number): IdentityId;
  /** The id of the credential registered by command `cseq`. */
  credentialId(cseq: number): CredentialId;
  /** The id of the grant given by command `cseq`. */
  grantId(cseq: number): GrantId;
  /** The id of the integrating party registered by command `cseq`. */
  partyId(cseq: number): PartyId;
  /** The id of the proposal submitted by command `cseq` (CONTRACT 13). */
  proposalId(cseq: number): string;
}

/**
 * Ids derived from the command sequence alone: a replay of the same commands draws
 * the same ids. Tests and replays use it. An operation reference starts with `op_` and
 * the command's sequence number in 16 hex digits, so the kernel finds an undecided
 * command from its reference alone.
 */
export const sequentialIds: IdSource = {
  operationRef: (cseq) => `op_${seqHex(cseq)}`,
  cseqOf: (ref) => {
    const m = /^op_([0-9a-f]{16})$/.exec(ref);
    const cseq = m === null ? NaN : parseInt(m[1]!, 16);
    return Number.isSafeInteger(cseq) ? cseq : null;
  },
  accountId: (cseq) => `did:ledger:acct:a${seqHex(cseq)}` as AccountId,
  identityId: (cseq) => `did:ledger:id:i${seqHex(cseq)}` as IdentityId,
  credentialId: (cseq) => `did:ledger:cred:c${seqHex(cseq)}` as CredentialId,
  grantId: (cseq) => `did:ledger:grant:g${seqHex(cseq)}` as GrantId,
  partyId: (cseq) => `did:ledger:party:p${seqHex(cseq)}` as PartyId,
  proposalId: (cseq) => `did:ledger:proposal:r${seqHex(cseq)}`,
};

/** Which kind of id a block enciphers, so ids of different kinds drawn by one command differ. */
const kindTags = { operation: 1, account: 2, identity: 3, credential: 4, grant: 5, party: 6, proposal: 7 } as const;
type Kind = keyof typeof kindTags;

/** AES-256 key length, in bytes. */
export const idKeyBytes = 32;

/** A restore epoch fits the 6 bytes of the id block between the kind byte's pad and the sequence number. */
export const idEpochMax = 2 ** 48 - 1;

/**
 * The daemon's ids: the id's kind, the book's restore epoch and the command sequence
 * number, enciphered under a secret key as one AES block (a keyed permutation),
 * written as 32 hex digits. Without the key an id reveals neither its sequence number
 * nor any other id nor the book's size; with it, an operation reference deciphers back
 * to its command (`cseqOf`), so an undecided command is still found from its reference
 * alone. Deterministic in the key, the epoch and the sequence, so a replay of the same
 * commands draws the same ids.
 *
 * The epoch is 0 for a book as made by init, and a fresh one after each restore
 * (docs/operations.md): a restored book draws sequence numbers its source may have drawn
 * after the backup, and the epoch keeps the ids they make apart. `cseqOf` deciphers a
 * reference of any epoch (commands acknowledged before a restore keep theirs); whoever
 * reads by it checks the stored operation's own reference (`readOperation`).
 */
export function keyedIds(key: Uint8Array, epoch = 0): IdSource {
  if (key.length !== idKeyBytes) throw new Error(`an id key is ${idKeyBytes} bytes`);
  if (!Number.isSafeInteger(epoch) || epoch < 0 || epoch > idEpochMax) throw new Error(`an id epoch is an integer 0..${idEpochMax}`);
  // One cipher and one decipher for the source's life: ECB without padding turns each
  // 16-byte block into its own 16 bytes on `update` and keeps no state between blocks,
  // so they give exactly what a fresh cipher per id gave, without its setup (profiled
  // at ~8% of the daemon's time under load).
  const cipher = createCipheriv('aes-256-ecb', key, null).setAutoPadding(false);
  const decipher = createDecipheriv('aes-256-ecb', key, null).setAutoPadding(false);
  const block = Buffer.alloc(16);
  block.writeUIntBE(epoch, 2, 6);
  const encipher = (kind: Kind, cseq: number): string => {
    block.writeUInt8(kindTags[kind], 0);
    block.writeBigUInt64BE(BigInt(cseq), 8);
    const out = cipher.update(block);
    assert(out.length === 16, 'an id block enciphers to one block');
    return out.toString('hex');
  };
  return {
    operationRef: (cseq) => `op_${encipher('operation', cseq)}`,
    cseqOf: (ref) => {
      const m = /^op_([0-9a-f]{32})$/.exec(ref);
      if (m === null) return null;
      const plain = decipher.update(Buffer.from(m[1]!, 'hex'));
      assert(plain.length === 16, 'an id block deciphers to one block');
      // Anything else deciphers to noise: the kind byte and the pad byte must match.
      if (plain.readUInt8(0) !== kindTags.operation || plain.readUInt8(1) !== 0) return null;
      const cseq = Number(plain.readBigUInt64BE(8));
      return Number.isSafeInteger(cseq) ? cseq : null;
    },
    accountId: (cseq) => `did:ledger:acct:${encipher('account', cseq)}` as AccountId,
    identityId: (cseq) => `did:ledger:id:${encipher('identity', cseq)}` as IdentityId,
    credentialId: (cseq) => `did:ledger:cred:${encipher('credential', cseq)}` as CredentialId,
    grantId: (cseq) => `did:ledger:grant:${encipher('grant', cseq)}` as GrantId,
    partyId: (cseq) => `did:ledger:party:${encipher('party', cseq)}` as PartyId,
    proposalId: (cseq) => `did:ledger:proposal:${encipher('proposal', cseq)}`,
  };
}
