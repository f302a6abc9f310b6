import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../daemon/http/digest.js';
import { decodeBalanceText, decodeIndexedPosting, decodeLeaf, decodeOperation, encodeBalance, encodeBalanceText, encodeIndexedPosting, encodeLeaf, encodeOperation, JournalChunk, JournalChunkText, journalChunkEntries } from '../../src/model/codec.js';
import { keys } from '../../src/model/keys.js';
import { balanceView, movementView } from '../../src/queries/views.js';
import type { Wire } from '../../src/queries/wire.js';
import type { Operation, Posting } from '../../src/model/model.js';

const id = (prefix: string) => fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/).map((s) => `${prefix}${s}`);
const amount = fc.bigInt({ min: 1n, max: (1n << 128n) - 1n });
const signed = fc.bigInt({ min: -(1n << 128n), max: 1n << 128n });
const reference = fc.option(fc.json({ maxDepth: 2 }), { nil: null });

const posting: fc.Arbitrary<Posting> = fc.record({
  seq: fc.nat(),
  atMs: fc.nat(),
  account: id('did:ledger:acct:'),
  asset: fc.stringMatching(/^[A-Z][A-Z0-9]{0,15}$/),
  amountMinor: amount,
  direction: fc.constantFrom('debit', 'credit'),
  layer: fc.constantFrom('available', 'reserved', 'encumbered'),
  kind: fc.constantFrom('opening', 'transfer', 'reserve', 'capture', 'release', 'expiry', 'recovery', 'deposit', 'withdrawal'),
  status: fc.constantFrom('held', 'completed', 'returned', 'reversed', 'opening'),
  operation: fc.stringMatching(/^op_[0-9a-f]{16}$/),
  counterparty: fc.option(id('did:ledger:acct:'), { nil: null }),
  authorities: fc.array(
    fc.record({
      credential: id('did:ledger:cred:'),
      grant: fc.option(id('did:ledger:grant:'), { nil: null }),
      kind: fc.constantFrom('owner', 'delegated', 'operator', 'issuance', 'recovery'),
      onBehalfOf: fc.option(id('did:ledger:id:'), { nil: null }),
      principal: id('did:ledger:id:'),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  reference,
  // Zero as often as not in the held layers, as in most balances.
  after: fc.record({ available: signed, reserved: fc.oneof(fc.constant(0n), amount), encumbered: fc.oneof(fc.constant(0n), amount) }),
}) as unknown as fc.Arbitrary<Posting>;

describe('record codec', () => {
  it('writes each posting\'s leaf as CONTRACT 9\'s canonical JSON, and reads postings back unchanged', () => {
    fc.assert(
      fc.property(posting, (p) => {
        const leaf = encodeLeaf(p);
        // Independently: the movement view less its reference, with `after`, through the generic canonical encoder.
        const { reference: _reference, ...members } = movementView(p) as Record<string, Wire>;
        expect(leaf).toBe(canonicalJson({ ...members, after: balanceView(p.after) }));
        expect(decodeLeaf(leaf, p.reference)).toEqual(p);
        // The account index's compact form gives back the posting, and so the journal's leaf byte for byte.
        const indexed = decodeIndexedPosting(keys.accountAsset(p.account, p.asset, p.seq), encodeIndexedPosting(p));
        expect(indexed).toEqual(p);
        expect(encodeLeaf(indexed)).toBe(leaf);
        // A balance's stored text, written out, is its record's JSON, and reads back.
        expect(encodeBalanceText(p.after)).toBe(JSON.stringify(encodeBalance(p.after)));
        expect(decodeBalanceText(encodeBalanceText(p.after))).toEqual(p.after);
      }),
      { numRuns: 500 },
    );
  });

  it('stores journal chunks compactly, each entry read back as its leaf byte for byte (store layout 6)', () => {
    // Odd text wherever the leaf holds text other than an id or a symbol: any unicode (lone surrogates too), quotes, backslashes, line breaks.
    const text = fc.string({ unit: 'binary', maxLength: 12 });
    const odd: fc.Arbitrary<Posting> = fc
      .tuple(posting, text, fc.option(text, { nil: null }), fc.array(fc.record({ credential: text, grant: fc.option(text, { nil: null }), kind: fc.constantFrom('owner', 'delegated', 'operator', 'issuance', 'recovery'), onBehalfOf: fc.option(text, { nil: null }), principal: text }), { maxLength: 4 }), fc.option(fc.string({ unit: 'binary' }), { nil: null }))
      .map(([p, operation, counterparty, authorities, reference]) => ({ ...p, operation, counterparty, authorities, reference }) as unknown as Posting);
    const extremes = fc.constantFrom((1n << 128n) - 1n, 1n, 0n);
    const chunks = fc.array(fc.oneof(posting, odd, fc.tuple(posting, extremes, extremes).map(([p, amountMinor, available]) => ({ ...p, amountMinor: amountMinor === 0n ? 1n : amountMinor, after: { ...p.after, available: -available } }))), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(chunks, fc.integer({ min: 1, max: 2 ** 40 }), (ps, firstSeq) => {
        const writer = new JournalChunkText();
        for (const p of ps) writer.add(p.account, p.asset, encodeIndexedPosting(p));
        expect(writer.entries).toBe(ps.length);
        const stored = writer.take();
        expect(writer.entries).toBe(0);
        expect(journalChunkEntries(stored)).toBe(ps.length);
        const read = new JournalChunk(stored, firstSeq);
        expect(read.entries).toBe(ps.length);
        // The entry's position is the chunk's: the leaf is encodeLeaf of the posting at that position.
        for (const [i, p] of ps.entries()) expect(read.leaf(i)).toBe(encodeLeaf({ ...p, seq: firstSeq + i }));
      }),
      { numRuns: 300 },
    );
    // A line splits at its first two '/' and a chunk at line breaks: an account or asset holding one is never written.
    for (const [account, asset] of [['did:ledger:acct:a/b', 'USD'], ['did:ledger:acct:a\nb', 'USD'], ['did:ledger:acct:a', 'U/SD']]) {
      expect(() => new JournalChunkText().add(account!, asset!, '[]')).toThrow(/without '\/' or a line break/);
    }
  });

  it('round-trips operations with every command type', () => {
    const base = {
      ref: 'op_0000000000000001',
      cseq: 1,
      actor: { credential: 'did:ledger:cred:c', grant: null, kind: 'owner', onBehalfOf: null, principal: 'did:ledger:id:a' },
      scope: ['did:ledger:acct:p'],
      state: 'Reserved',
      submittedAtMs: 1,
      decidedAtMs: 2,
      clientKey: 'k/with"odd\\chars',
      clientKeyDerived: false,
      reference: '{"a": [1, "\\u00e9"]}',
      result: { postings: [1, 2] },
      error: null,
      hold: { payer: 'did:ledger:acct:p', asset: 'USD', amountMinor: 5n, deadlineMs: 9 },
    };
    const commands = [
      { type: 'transfer', legs: [{ from: 'did:ledger:acct:a', to: 'did:ledger:acct:b', asset: 'USD', amountMinor: (1n << 127n) + 3n }], deadlineMs: 5 },
      { type: 'reserve', payer: 'did:ledger:acct:a', asset: 'USD', amountMinor: 7n, deadlineMs: 5 },
      { type: 'capture', reservation: 'op_0000000000000002', to: 'did:ledger:acct:b', amountMinor: null },
      { type: 'capture', reservation: 'op_0000000000000002', to: 'did:ledger:acct:b', amountMinor: 3n },
      { type: 'release', reservation: 'op_0000000000000002' },
      { type: 'open_account', owner: 'did:ledger:id:a', kind: 'treasury', custody: 'delegated', treasuryLimits: { USD: 10n ** 30n } },
    ];
    for (const command of commands) {
      const op = { ...base, command } as unknown as Operation;
      expect(decodeOperation(encodeOperation(op))).toEqual(op);
      // Field for field what the plain encoding of the record gives.
      const generic = JSON.stringify(op, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
      expect(JSON.parse(encodeOperation(op))).toEqual(JSON.parse(generic));
      // The second encoding of the same command (its decision) reuses the first's text.
      const decided: Operation = { ...op, state: 'Completed', hold: null };
      expect(decodeOperation(encodeOperation(decided))).toEqual(decided);
    }
  });
});
