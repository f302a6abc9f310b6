/**
 * Store layout 7's chunks of small records (model/compact-chunk.ts) as the audit trail writes
 * them: bounded in items and characters, each item read back as it was written (odd references,
 * control characters, times that differ within a round), and a damaged chunk refused as
 * damaged; client-key records in both forms.
 */
import { describe, expect, it } from 'vitest';
import { type AuditItem, AuditTrail, auditEntryItems } from '../../src/auth/audit.js';
import type { Member } from '../../src/auth/members.js';
import { decodeClientKeyRecord, encodeClientKeyRecord } from '../../src/book/client-key-record.js';
import { compactChunkCharsMax, compactChunkItemsMax } from '../../src/constants.js';
import { DamagedRecord } from '../../src/model/decode.js';
import { auditKey } from '../../src/model/keys.js';
import type { CredentialId } from '../../src/model/values.js';

const member = (name: string): Member => ({ credential: `did:ledger:cred:${name}` as CredentialId, name, role: 'admin', scheme: 'api-key', addedAtMs: 0, addedBy: null, removedAtMs: null });
const refs = ['op_0123456789abcdef0123456789abcdef', 'op_00000000000000ff', 'op_0123456789ABCDEF0123456789ABCDEF', '~op_x', '~~', 'direct-1', 'op_123'];

/** A round's `count` items from `firstSeq` on, by a few members, written and read back. */
function trailOf(count: number, firstSeq: number, about: (i: number) => { operation: string | null; justification: string | null }): { read: AuditItem[]; values: string[] } {
  const trail = new AuditTrail(firstSeq - 1);
  for (let i = 0; i < count; i++) trail.act(member(`m${i % 5}`), 'createTransfer', 1_700_000_000_000, about(i));
  const writes = trail.writes();
  return { read: writes.flatMap((w) => auditEntryItems(w.key, w.value)), values: writes.map((w) => w.value) };
}

describe('audit chunks', () => {
  it('hold a round\'s items in chunks of at most compactChunkItemsMax, read back item for item', () => {
    const about = (i: number) => ({ operation: refs[i % refs.length]!, justification: i % 7 === 0 ? `why \u001b[31m${i}` : null, ...(i % 11 === 0 ? { proposal: `did:ledger:proposal:${i}`, approval: 'none available' } : {}) });
    const trail = new AuditTrail(40);
    const expected: AuditItem[] = [];
    for (let i = 0; i < 150; i++) {
      const m = member(i % 3 === 0 ? 'ada' : `m${i % 5}`);
      const a = about(i);
      trail.act(m, 'createTransfer', 1_700_000_000_000 + (i % 4), a);
      expected.push({ seq: 41 + i, atMs: 1_700_000_000_000 + (i % 4), member: m.name, credential: m.credential, act: 'createTransfer', operation: a.operation, proposal: a.proposal ?? null, justification: a.justification, approval: a.approval ?? null });
    }
    const writes = trail.writes();
    expect(writes.map((w) => w.key)).toEqual([auditKey(41), auditKey(41 + compactChunkItemsMax), auditKey(41 + 2 * compactChunkItemsMax)]);
    expect(writes.flatMap((w) => auditEntryItems(w.key, w.value))).toEqual(expected);
    // A member's name, credential and act once per chunk.
    expect(writes[0]!.value.split('did:ledger:cred:ada')).toHaveLength(2);
  });

  it('put an item longer than compactChunkCharsMax in a chunk of its own, and keep others under it', () => {
    const long = 'x'.repeat(compactChunkCharsMax + 10);
    const { read, values } = trailOf(40, 1, (i) => ({ operation: null, justification: i === 20 ? long : 'y'.repeat(900) }));
    expect(read.map((i) => i.seq)).toEqual(read.map((_, i) => i + 1));
    const alone = values.filter((v) => v.includes(long));
    expect(alone).toHaveLength(1);
    expect(auditEntryItems(auditKey(1), alone[0]!)).toHaveLength(1);
    for (const v of values.filter((v) => !v.includes(long))) expect(v.length).toBeLessThan(compactChunkCharsMax + 1200);
    expect(read[20]!.justification).toBe(long);
  });

  it('refuse a damaged chunk as damaged, and read layout 6\'s item as it stands', () => {
    for (const value of ['[', '[1]', '[1,["a"],[5,0,0]]', '[1,[3],[0,0,0]]', '[1,["a"],[0,0,0,"~AAA"]]', '[1,["a"],[0,0,0,null,7]]', '["x",["a"],[0,0,0]]', '[1,["a"],"item"]']) {
      expect(() => auditEntryItems(auditKey(1), value), value).toThrow(DamagedRecord);
    }
    const old = { seq: 9, atMs: 5, member: 'root', credential: 'did:ledger:cred:operator', act: 'transfer', operation: 'op_0000000000000001', proposal: null, justification: null, approval: null };
    expect(auditEntryItems(auditKey(9), JSON.stringify(old))).toEqual([old]);
  });
});

describe('client-key records', () => {
  it('write a SHA-256 digest as its bytes and read both forms', () => {
    const digest = 'ab'.repeat(32);
    for (const ref of refs) {
      const value = encodeClientKeyRecord({ digest, ref });
      expect(value.startsWith('{')).toBe(false);
      expect(decodeClientKeyRecord(value)).toEqual({ digest, ref });
    }
    expect(encodeClientKeyRecord({ digest, ref: refs[0]! })).toHaveLength(43 + 23);
    // Another digest is kept as layout 6 kept it.
    expect(decodeClientKeyRecord(encodeClientKeyRecord({ digest: 'AB'.repeat(32), ref: 'op_1' }))).toEqual({ digest: 'AB'.repeat(32), ref: 'op_1' });
    expect(decodeClientKeyRecord(JSON.stringify({ digest, ref: 'op_0000000000000001' }))).toEqual({ digest, ref: 'op_0000000000000001' });
    for (const bad of ['', 'short', `${Buffer.alloc(32).toString('base64url')}`, `${Buffer.alloc(31).toString('base64url')}xx~AA`, '{"digest":1}']) {
      expect(() => decodeClientKeyRecord(bad), bad).toThrow(DamagedRecord);
    }
  });
});
