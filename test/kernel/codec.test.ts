import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../daemon/http/digest.js';
import { compactLineLeaf, decodeBalanceText, decodeIndexedPosting, decodeLeaf, decodeOperation, encodeBalance, encodeBalanceText, encodeIndexedOpening, encodeIndexedPosting, encodeLeaf, genesisOpeningAuthorities, encodeOperation, encodeOperationJson, JournalChunk, JournalChunkText, journalChunkEntries } from '../../src/model/codec.js';
import { DamagedRecord } from '../../src/model/decode.js';
import { packRef, unpackRef, unpackedHexRef } from '../../src/model/compact-chunk.js';
import { keys } from '../../src/model/keys.js';
import { balanceView, movementView } from '../../src/queries/views.js';
import type { Wire } from '../../src/queries/wire.js';
import type { Operation, Posting } from '../../src/model/model.js';
import { layout6Text } from '../support/layout-6-posting.js';

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

// Odd text wherever the leaf holds text other than an id or a symbol: any unicode (lone surrogates too), quotes, backslashes, line breaks; at any safe integer.
const oddText = fc.string({ unit: 'binary', maxLength: 12 });
const oddPosting: fc.Arbitrary<Posting> = fc
  .tuple(posting, oddText, fc.option(oddText, { nil: null }), fc.array(fc.record({ credential: oddText, grant: fc.option(oddText, { nil: null }), kind: fc.constantFrom('owner', 'delegated', 'operator', 'issuance', 'recovery'), onBehalfOf: fc.option(oddText, { nil: null }), principal: oddText }), { maxLength: 4 }), fc.option(fc.string({ unit: 'binary' }), { nil: null }), fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }))
  .map(([p, operation, counterparty, authorities, reference, atMs]) => ({ ...p, operation, counterparty, authorities, reference, atMs }) as unknown as Posting);

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
        const key = keys.accountAsset(p.account, p.asset, p.seq);
        const indexed = decodeIndexedPosting(key, encodeIndexedPosting(p));
        expect(indexed).toEqual(p);
        expect(encodeLeaf(indexed)).toBe(leaf);
        // Layout 7 reads layout 6's form as it stands, and writes its own shorter.
        expect(decodeIndexedPosting(key, layout6Text(p))).toEqual(p);
        expect(encodeIndexedPosting(p).length).toBeLessThan(layout6Text(p).length);
        // A balance's stored text, written out, is its record's JSON, and reads back.
        expect(encodeBalanceText(p.after)).toBe(JSON.stringify(encodeBalance(p.after)));
        expect(decodeBalanceText(encodeBalanceText(p.after))).toEqual(p.after);
      }),
      { numRuns: 500 },
    );
  });

  it('stores journal chunks compactly, each entry read back as its leaf byte for byte (store layout 6)', () => {
    const extremes = fc.constantFrom((1n << 128n) - 1n, 1n, 0n);
    const chunks = fc.array(fc.oneof(posting, oddPosting, fc.tuple(posting, extremes, extremes).map(([p, amountMinor, available]) => ({ ...p, amountMinor: amountMinor === 0n ? 1n : amountMinor, after: { ...p.after, available: -available } }))), { minLength: 1, maxLength: 8 });
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

  // The leaf of a compact journal line as the checked decoder makes it (the line split at its first two '/'), or 'damaged'.
  const checkedLeaf = (line: string, seq: number): string => {
    const accountEnd = line.indexOf('/');
    const assetEnd = accountEnd < 0 ? -1 : line.indexOf('/', accountEnd + 1);
    if (accountEnd <= 0 || assetEnd <= accountEnd + 1) return 'damaged';
    try {
      return encodeLeaf(decodeIndexedPosting(keys.accountAsset(line.slice(0, accountEnd), line.slice(accountEnd + 1, assetEnd), seq), line.slice(assetEnd + 1)));
    } catch (e) {
      if (e instanceof DamagedRecord) return 'damaged';
      throw e;
    }
  };
  // The leaf a stored chunk of the one line gives (the fast path, else the checked decoder), or 'damaged'.
  const chunkLeaf = (line: string, seq: number): string => {
    try {
      return new JournalChunk(`#\n${line}`, seq).leaf(0);
    } catch (e) {
      if (e instanceof DamagedRecord) return 'damaged';
      throw e;
    }
  };
  const lineOf = (p: Posting) => `${p.account}/${p.asset}/${encodeIndexedPosting(p)}`;
  const layout6LineOf = (p: Posting) => `${p.account}/${p.asset}/${layout6Text(p)}`;

  /** Any small damage anywhere in a line of these postings: the direct leaf, when there is one, is the checked one. */
  const damagedLinesReadAsChecked = (postings: fc.Arbitrary<Posting>, line: (p: Posting) => string) => {
    const tricky = fc.constantFrom('0', '1', '9', '-', '+', '"', '\\', ',', '[', ']', 'n', 'e', '.', ' ', '/', 'null', '\ud800', '\u00e9', '\u0001');
    fc.assert(
      fc.property(postings, fc.nat(), fc.nat({ max: 3 }), tricky, (q, at, cut, insert) => {
        const whole = line(q);
        const i = at % (whole.length + 1);
        const damagedLine = whole.slice(0, i) + insert + whole.slice(i + cut);
        const checked = checkedLeaf(damagedLine, 3);
        const direct = compactLineLeaf(damagedLine, 3);
        if (direct !== null) expect(direct).toBe(checked);
        expect(chunkLeaf(damagedLine, 3)).toBe(checked);
      }),
      { numRuns: 3000 },
    );
  };

  it('makes a compact journal line\'s leaf from its text, byte for byte encodeLeaf of the decoded posting', () => {
    fc.assert(
      fc.property(fc.oneof(posting, oddPosting), fc.integer({ min: 1, max: 2 ** 40 }), (p, seq) => {
        const leaf = encodeLeaf({ ...p, seq });
        const direct = compactLineLeaf(lineOf(p), seq);
        // Texts JSON.stringify writes as they stand are read directly; the others are left to the checked decoder.
        if (direct !== null) expect(direct).toBe(leaf);
        expect(chunkLeaf(lineOf(p), seq)).toBe(leaf);
        // Layout 6's line too.
        const layout6Direct = compactLineLeaf(layout6LineOf(p), seq);
        if (layout6Direct !== null) expect(layout6Direct).toBe(leaf);
        expect(chunkLeaf(layout6LineOf(p), seq)).toBe(leaf);
        // Ids, symbols and plain text (what a ledger writes) take the direct path.
        const plain = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;
        if ([p.operation, p.counterparty ?? '', ...p.authorities.flatMap((a) => [a.credential, a.grant ?? '', a.onBehalfOf ?? '', a.principal]), typeof p.reference === 'string' ? p.reference : ''].every((t) => plain.test(t)) && Math.abs(p.atMs) < 1e15) {
          expect(direct).toBe(leaf);
          expect(layout6Direct).toBe(leaf);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("writes a genesis opening's index entry and journal line compactly (layout 7), read back as the full form's posting and leaf", () => {
    const opening = posting.map((p) => ({ ...p, kind: 'opening', status: 'opening', operation: 'genesis', counterparty: null, authorities: genesisOpeningAuthorities, reference: null }) as Posting);
    const openingLine = (p: Posting) => `${p.account}/${p.asset}/${encodeIndexedOpening(p.atMs, p.amountMinor, p.direction, p.layer, p.after)}`;
    fc.assert(
      fc.property(opening, fc.integer({ min: 1, max: 2 ** 40 }), (p, seq) => {
        const line = openingLine(p);
        // The general encoder writes an opening in its form too (the moves that rewrite the index use it).
        expect(lineOf(p)).toBe(line);
        expect(decodeIndexedPosting(keys.accountAsset(p.account, p.asset, seq), encodeIndexedOpening(p.atMs, p.amountMinor, p.direction, p.layer, p.after))).toEqual({ ...p, seq });
        const leaf = encodeLeaf({ ...p, seq });
        expect(compactLineLeaf(line, seq)).toBe(leaf);
        expect(chunkLeaf(line, seq)).toBe(leaf);
      }),
      { numRuns: 500 },
    );
    damagedLinesReadAsChecked(opening, openingLine);
  });

  const damagedSample: Posting = { ...fc.sample(posting, { numRuns: 1, seed: 7 })[0]!, atMs: 1_790_000_000_000, amountMinor: 125n, direction: 'credit', layer: 'reserved', kind: 'capture', status: 'held', counterparty: null, reference: null, after: { available: -5n, reserved: 0n, encumbered: 12n } } as Posting;
  it("reads a damaged or oddly written layout-6 journal line as the checked decoder does: the same leaf or the same refusal", () => {
    const p = damagedSample;
    const line = layout6LineOf(p);
    const [prefix, tuple] = [line.slice(0, line.indexOf('[')), line.slice(line.indexOf('['))];
    const t = JSON.parse(tuple) as unknown[];
    const swap = (i: number, v: string) => `${prefix}[${t.map((m, j) => (j === i ? v : JSON.stringify(m))).join(',')}]`;
    const named: [string, string][] = [
      ['leading zero in an amount', swap(1, '"0125"')],
      ["'+' on an amount", swap(1, '"+125"')],
      ['-0 as an amount', swap(1, '"-0"')],
      ['-0 as a balance', swap(10, '"-0"')],
      ['an amount as a number', swap(1, '125')],
      ['an amount with a fraction', swap(1, '"1.5"')],
      ['an amount with an exponent', swap(1, '"1e3"')],
      ['an empty amount', swap(1, '""')],
      ['at with an exponent', swap(0, '1.79e12')],
      ['at as -0', swap(0, '-0')],
      ['at with a fraction', swap(0, '1.5')],
      ['at with a leading zero', swap(0, '01')],
      ['at beyond a safe integer', swap(0, '9007199254740993')],
      ['at the largest safe integer', swap(0, '9007199254740991')],
      ['at as text', swap(0, '"1"')],
      ['a direction out of range', swap(2, '2')],
      ['a negative index', swap(3, '-1')],
      ['a kind of two digits', swap(4, '10')],
      ['a status with a leading zero', swap(5, '01')],
      ['an index with a fraction', swap(5, '1.0')],
      ['an index as text', swap(2, '"1"')],
      ['an operation as a number', swap(6, '5')],
      ['an operation as null', swap(6, 'null')],
      ['a counterparty as a number', swap(7, '5')],
      ['a reference as a list', swap(9, '[]')],
      ['authorities as an object', swap(8, '{}')],
      ['no authorities', swap(8, '[]')],
      ['an authority of four members', swap(8, '[["c",null,0,null]]')],
      ['an authority kind out of range', swap(8, '[["c",null,5,null,"p"]]')],
      ['a credential as null', swap(8, '[[null,null,0,null,"p"]]')],
      ['a principal as a number', swap(8, '[["c",null,0,null,1]]')],
      ['escaped letters in an operation', swap(6, '"op\\u00e9\\/x"')],
      ['an escaped quote in a credential', swap(8, '[["c\\"d",null,0,null,"p"]]')],
      ['a lone surrogate written raw', swap(6, '"op\ud800"')],
      ['a surrogate pair written raw', swap(6, '"op\ud83d\ude00"')],
      ['a tab written raw', swap(7, '"a\tb"')],
      ['U+2028 written raw', swap(7, '"a\u2028b"')],
      ['a tuple of twelve', `${prefix}${JSON.stringify(t.slice(0, 12))}`],
      ['a tuple of fourteen', `${prefix}${JSON.stringify([...t, '0'])}`],
      ['a space after a comma', swap(1, ' "125"')],
      ['something after the tuple', `${line} `],
      ['an object, not a tuple', `${prefix}{}`],
      ['no asset', `${p.account}//${tuple}`],
      ['no account', `/${p.asset}/${tuple}`],
      ['a quote in the account', `a"b/${p.asset}/${tuple}`],
      ['a backslash in the asset', `${p.account}/U\\SD/${tuple}`],
      ['not JSON', `${prefix}[`],
    ];
    for (const [what, damagedLine] of named) {
      const checked = checkedLeaf(damagedLine, 9);
      expect(chunkLeaf(damagedLine, 9), what).toBe(checked);
      const direct = compactLineLeaf(damagedLine, 9);
      if (direct !== null) expect(direct, what).toBe(checked);
    }
    // The cases above are the real thing: some are refused, some read.
    // The cases above are the real thing: these are read (the rest refused), and the direct path reads only what it writes as it stands.
    const read = named.filter(([, l]) => checkedLeaf(l, 9) !== 'damaged').map(([w]) => w);
    expect(read).toEqual([
      '-0 as an amount', '-0 as a balance', 'at with an exponent', 'at as -0', 'at the largest safe integer', 'an index with a fraction', 'no authorities', 'escaped letters in an operation',
      'an escaped quote in a credential', 'a lone surrogate written raw', 'a surrogate pair written raw', 'U+2028 written raw', 'a space after a comma', 'something after the tuple',
      'a quote in the account', 'a backslash in the asset',
    ]);
    expect(named.filter(([, l]) => compactLineLeaf(l, 9) !== null).map(([w]) => w)).toEqual(['no authorities', 'a surrogate pair written raw', 'U+2028 written raw']);
    damagedLinesReadAsChecked(fc.oneof(posting, oddPosting), layout6LineOf);
  });

  it("reads a damaged or oddly written layout-7 journal line as the checked decoder does: the same leaf or the same refusal", () => {
    const p: Posting = { ...damagedSample, operation: 'op_00000000000000ff', counterparty: 'did:ledger:acct:b1' as Posting['counterparty'], reference: '7' as Posting['reference'] };
    const line = lineOf(p);
    const [prefix, tuple] = [line.slice(0, line.indexOf('[')), line.slice(line.indexOf('['))];
    const t = JSON.parse(tuple) as unknown[];
    expect(t.length).toBe(10);
    const swap = (i: number, v: string) => `${prefix}[${t.map((m, j) => (j === i ? v : JSON.stringify(m))).join(',')}]`;
    const named: [string, string][] = [
      ['a code out of range', swap(1, '270')],
      ['a negative code', swap(1, '-1')],
      ['a code with a fraction', swap(1, '61.5')],
      ['an amount as a number', swap(2, '125')],
      ['-0 as an amount', swap(2, '"-0"')],
      ['a packed operation of 7 bytes', swap(3, '"~AAAAAAAAAA"')],
      ['a packed operation not base64url', swap(3, '"~AAAAAAAA+/8"')],
      ['an operation escaped by ~~', swap(3, '"~~x"')],
      ['an operation as a number', swap(3, '5')],
      ['a counterparty whole', swap(4, '["x"]')],
      ['a counterparty as a list of two', swap(4, '["x","y"]')],
      ['a counterparty as a number', swap(4, '5')],
      ['an authority of two members', swap(5, '[["p","c"]]')],
      ['an authority kind out of range', swap(5, '[["p","c",5]]')],
      ['an authority with its ids whole', swap(5, '[[["p"],["c"],0,["o"],["g"]]]')],
      ['an authority with null ids', swap(5, '[[null,"c",0]]')],
      ['a reserved balance as null', swap(7, 'null')],
      ['a reference as a number', swap(9, '5')],
      ['a tuple of six', `${prefix}${JSON.stringify(t.slice(0, 6))}`],
      ['a tuple of seven', `${prefix}${JSON.stringify(t.slice(0, 7))}`],
      ['a tuple of eleven', `${prefix}${JSON.stringify([...t, null])}`],
      ['not JSON', `${prefix}[1,2`],
    ];
    for (const [what, damagedLine] of named) {
      const checked = checkedLeaf(damagedLine, 9);
      expect(chunkLeaf(damagedLine, 9), what).toBe(checked);
      const direct = compactLineLeaf(damagedLine, 9);
      if (direct !== null) expect(direct, what).toBe(checked);
    }
    const read = named.filter(([, l]) => checkedLeaf(l, 9) !== 'damaged').map(([w]) => w);
    expect(read).toEqual(['-0 as an amount', 'an operation escaped by ~~', 'a counterparty whole', 'an authority with its ids whole', 'a tuple of seven']);
    expect(named.filter(([, l]) => compactLineLeaf(l, 9) !== null).map(([w]) => w)).toEqual(['an operation escaped by ~~', 'a counterparty whole', 'an authority with its ids whole', 'a tuple of seven']);
    damagedLinesReadAsChecked(fc.oneof(posting, oddPosting), lineOf);
  });

  it("packs an operation reference as base64url of its hex digits' bytes, and unpacks only what packRef writes", () => {
    // Through Buffer, independently of the code's own conversion.
    const bufferUnpacked = (packed: string): string | null => {
      const bytes = Buffer.from(packed, 'base64url');
      return (bytes.length !== 8 && bytes.length !== 16) || bytes.toString('base64url') !== packed ? null : `op_${bytes.toString('hex')}`;
    };
    fc.assert(
      fc.property(fc.oneof(fc.stringMatching(/^op_([0-9a-f]{16}|[0-9a-f]{32})$/), fc.string({ unit: 'binary', maxLength: 40 })), (ref) => {
        const packed = packRef(ref);
        if (/^op_([0-9a-f]{16}|[0-9a-f]{32})$/.test(ref)) expect(packed).toBe(`~${Buffer.from(ref.slice(3), 'hex').toString('base64url')}`);
        expect(unpackRef(packed, 'x')).toBe(ref);
      }),
      { numRuns: 2000 },
    );
    const digits = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=.'.split(''), '\u00e9');
    fc.assert(
      fc.property(fc.array(digits, { minLength: 9, maxLength: 24 }), (cs) => {
        const packed = cs.join('');
        expect(unpackedHexRef(packed)).toBe(bufferUnpacked(packed));
      }),
      { numRuns: 5000 },
    );
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
      // Layouts 2-6's form: field for field what the plain encoding of the record gives.
      const generic = JSON.stringify(op, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
      expect(JSON.parse(encodeOperationJson(op))).toEqual(JSON.parse(generic));
      expect(decodeOperation(encodeOperationJson(op))).toEqual(op);
      // The second encoding of the same command (its decision) reuses the first's text.
      const decided: Operation = { ...op, state: 'Completed', hold: null };
      expect(decodeOperation(encodeOperation(decided))).toEqual(decided);
    }
  });
});
