/**
 * The daemon's ids (keyedIds): a restore draws a new epoch, and ids drawn under one
 * epoch never meet those of another for the same sequence numbers, while references of
 * any epoch still lead back to their command. Epoch 0 draws the ids books made before
 * epochs existed.
 */
import { createCipheriv } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { idEpochMax, keyedIds } from '../../src/model/ids.js';

const key = new Uint8Array(32).fill(9);
const kinds = ['operationRef', 'accountId', 'identityId', 'credentialId', 'grantId', 'partyId'] as const;

describe('keyed ids', () => {
  it('draws the ids of books made before epochs at epoch 0', () => {
    expect(keyedIds(key).operationRef(5)).toBe('op_81ce126ce8067e23e3e1f194c8daea06');
    expect(keyedIds(key, 0).accountId(5)).toBe('did:ledger:acct:69e7f2045691a0f71c4dbd9ebd4d7b4d');
  });

  it('keeps the ids of different epochs apart, and finds the command of a reference of any epoch', () => {
    const epochs = [0, 1, 0x1234_5678_9abc, idEpochMax].map((epoch) => keyedIds(key, epoch));
    for (const kind of kinds) {
      const drawn = epochs.flatMap((ids) => Array.from({ length: 50 }, (_, cseq) => ids[kind](cseq + 1)));
      expect(new Set(drawn).size).toBe(drawn.length);
    }
    for (const ids of epochs) {
      for (const cseq of [1, 77, Number.MAX_SAFE_INTEGER]) {
        const ref = ids.operationRef(cseq);
        for (const reader of epochs) expect(reader.cseqOf(ref)).toBe(cseq);
      }
      // Ids of other kinds are no operation references.
      expect(ids.cseqOf(`op_${ids.accountId(7).slice('did:ledger:acct:'.length)}`)).toBeNull();
    }
    expect(() => keyedIds(key, idEpochMax + 1)).toThrow();
    expect(() => keyedIds(key, -1)).toThrow();
  });

  it('draws, from one source in any order, exactly the block a fresh cipher makes of each id', () => {
    // The source keeps one cipher for its life: no id may depend on the ids drawn before it.
    const tags = { operationRef: 1, accountId: 2, identityId: 3, credentialId: 4, grantId: 5, partyId: 6 } as const;
    const fresh = (tag: number, epoch: number, cseq: number): string => {
      const block = Buffer.alloc(16);
      block.writeUInt8(tag, 0);
      block.writeUIntBE(epoch, 2, 6);
      block.writeBigUInt64BE(BigInt(cseq), 8);
      const cipher = createCipheriv('aes-256-ecb', key, null).setAutoPadding(false);
      return Buffer.concat([cipher.update(block), cipher.final()]).toString('hex');
    };
    for (const epoch of [0, 3]) {
      const ids = keyedIds(key, epoch);
      for (let i = 0; i < 300; i++) {
        const cseq = (i * 7919) % 1000 + 1;
        const kind = kinds[i % kinds.length]!;
        expect(ids[kind](cseq).endsWith(fresh(tags[kind], epoch, cseq))).toBe(true);
        // Deciphering between draws leaves the cipher's next block as it was.
        expect(ids.cseqOf(ids.operationRef(cseq))).toBe(cseq);
        expect(ids.cseqOf('op_' + 'f'.repeat(32))).toBeNull();
      }
    }
  });
});
