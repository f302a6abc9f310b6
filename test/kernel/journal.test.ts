/**
 * The journal as CONTRACT 9's leaves: `journalLeaves` gives the leaf bytes of any
 * range of entries, across chunk boundaries (genesis runs, one chunk per round),
 * equal to an independent canonical-JSON encoding of the postings the queries show.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../daemon/http/digest.js';
import { decodeLeaf, journalChunkEntries, journalChunkLeaves, journalChunkMark } from '../../src/model/codec.js';
import { layout6Line } from '../support/layout-6-posting.js';
import { journalChunkEntriesMax } from '../../src/constants.js';
import { journalLeaves } from '../../src/queries/journal.js';
import { balanceView, movementView } from '../../src/queries/views.js';
import type { Wire } from '../../src/queries/wire.js';
import { actorOf, customersGenesis, openBook, operator, submission, transfer } from '../support/book.js';
import type { Posting } from '../../src/model/model.js';
import type { ReadView } from '../../src/store/port.js';
import type { AccountId } from '../../src/model/values.js';
import { keys, parseSeqHex, prefixEnd } from '../../src/model/keys.js';

const names = Array.from({ length: 6 }, (_, i) => `c${i}`);
const acctOf = (name: string) => `did:ledger:acct:${name}`;

async function collect(view: ReadView, from: number, to: number): Promise<string[]> {
  const out: string[] = [];
  for await (const leaf of journalLeaves(view, from, to)) out.push(leaf);
  return out;
}

/** The leaf as CONTRACT 9 defines it, built with the generic canonical encoder from a posting's view. */
function expectedLeaf(p: Posting): string {
  const { reference: _reference, ...members } = movementView(p) as Record<string, Wire>;
  return canonicalJson({ ...members, after: balanceView(p.after) });
}

/** A book of six funded customers and four rounds of transfers (one chunk each), and the leaves of its journal as CONTRACT 9 defines them. */
async function bookOfRounds() {
  const { kernel, store } = await openBook({ genesis: customersGenesis(Object.fromEntries(names.map((n) => [n, 1_000n]))) });
  // Rounds of different sizes: each writes one chunk.
  for (let round = 0; round < 4; round++) {
    await Promise.all(
      Array.from({ length: round + 1 }, (_, i) =>
        kernel.submit(submission(actorOf(`did:ledger:id:${names[i]}`), transfer(acctOf(names[i]!), acctOf(names[(i + round + 1) % names.length]!), BigInt(10 + round)), { reference: i === 0 ? '{"n":\n1}' : undefined })),
      ),
    );
    await kernel.idle();
  }
  const head = kernel.currentHead.postingSeq;
  expect(head).toBe(names.length * 2 + 2 * (1 + 2 + 3 + 4));

  // Every posting, as the movements of every account show it (references included there, left out of leaves).
  const view = await kernel.openView();
  const bySeq = new Map<number, Posting>();
  for (const name of [...names, 'treasury-USD']) {
    const page = await view.movements(operator, { account: acctOf(name) as AccountId, identity: null, limit: 1000, fromMs: null, toMs: null, asset: null, direction: null, cursor: null });
    for (const p of page.movements) bySeq.set(p.seq, p);
  }
  await view.close();
  expect([...bySeq.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
  const all = Array.from({ length: head }, (_, i) => expectedLeaf(bySeq.get(i + 1)!));
  return { kernel, store, head, all };
}

/** Every journal chunk of `store`: its first position and its stored text. */
async function chunksOf(store: ReadView): Promise<[number, string][]> {
  const chunks: [number, string][] = [];
  for await (const [key, value] of store.entries({ gte: keys.journalPrefix, lt: prefixEnd(keys.journalPrefix), limit: 100 })) chunks.push([parseSeqHex(key.slice(keys.journalPrefix.length)), value]);
  return chunks;
}

describe('journal leaves', () => {
  it('are the canonical leaf bytes of any range of entries, across chunks', async () => {
    const { kernel, store, head, all } = await bookOfRounds();
    expect(await collect(store, 1, head)).toEqual(all);
    for (const [from, to] of [[1, 1], [head, head], [5, 17], [12, 13], [13, 14], [14, head], [3, 2]] as const) {
      expect(await collect(store, from, to), `${from}..${to}`).toEqual(all.slice(from - 1, to));
    }
    await expect(collect(store, head, head + 1)).rejects.toThrow(/are all in the book/);
    await kernel.close();
  });

  it('are stored compactly (store layout 6): each entry its account, asset and index entry, well under the bytes of its leaf', async () => {
    const { kernel, store, all } = await bookOfRounds();
    const chunks = await chunksOf(store);
    expect(chunks.length).toBe(5);
    for (const [first, text] of chunks) {
      const leaves = all.slice(first - 1, first - 1 + journalChunkEntries(text));
      expect(text.split('\n')).toEqual([journalChunkMark, ...leaves.map(() => expect.stringMatching(/^did:ledger:acct:[^/]+\/USD\/\[/))]);
      expect(text.length, `chunk ${first}`).toBeLessThan(0.6 * leaves.join('\n').length);
    }
    await kernel.close();
  });

  it('reads chunks of leaves (layouts 2-5) and compact chunks (layout 6) in one book as the same leaves, and refuses a damaged chunk', async () => {
    const { kernel, store, head, all } = await bookOfRounds();
    await kernel.close();
    // Every other chunk as layout 5 wrote it: its leaves, one per line.
    const chunks = await chunksOf(store);
    await store.write(chunks.filter((_, i) => i % 2 === 1).map(([first, text]) => ({ type: 'put' as const, key: keys.journal(first), value: journalChunkLeaves(text, first).join('\n') })), false);
    const forms = (await chunksOf(store)).map(([, text]) => text[0]);
    expect(forms).toEqual(['#', '{', '#', '{', '#']);
    expect(await collect(store, 1, head)).toEqual(all);
    for (const [first] of chunks.slice(1)) expect(await collect(store, first - 1, first + 1), `across ${first}`).toEqual(all.slice(first - 2, first + 1));

    // Damage is refused as a damaged record, never read as some other leaf.
    const [last, text] = chunks.at(-1)!;
    const lines = text.split('\n');
    const damagedLines: [string, RegExp][] = [
      [[...lines.slice(0, -1), lines.at(-1)!.replace('/USD/', '/USD')].join('\n'), /damaged journal entry \d+ record: (names no account and asset|is not JSON)/],
      [[...lines.slice(0, -1), lines.at(-1)!.replace(/,"\d+",/, ',12,')].join('\n'), /damaged journal entry \d+ record: amount is not decimal text/],
      [[...lines.slice(0, -1), `did:ledger:acct:x/USD/[1]`].join('\n'), /damaged journal entry \d+ record: is not a list of 13 members/],
      [journalChunkMark, /damaged journal chunk \d+ record: holds no entry/],
      [`x${text}`, /damaged journal chunk \d+ record: is in no form/],
    ];
    for (const [value, refusal] of damagedLines) {
      await store.write([{ type: 'put', key: keys.journal(last), value }], false);
      await expect(collect(store, last, head)).rejects.toThrow(refusal);
    }
  });

  it("reads layout 6's compact lines beside layout 7's, in one chunk and across chunks, as the same leaves; layout 7's lines are the shorter", async () => {
    const { kernel, store, head, all } = await bookOfRounds();
    await kernel.close();
    const chunks = await chunksOf(store);
    let layout7Chars = 0;
    let layout6Chars = 0;
    // Every other line (the first of each chunk among them) as layout 6 wrote it.
    await store.write(
      chunks.map(([first, text]) => {
        const lines = text.split('\n');
        const rewritten = lines.map((line, i) => {
          if (i === 0) return line;
          const older = layout6Line(decodeLeaf(all[first + i - 2]!, null));
          // Genesis openings keep their own form (encodeIndexedOpening): the others are compared.
          if (!/\/\[\d+,"/.test(line)) {
            layout7Chars += line.length;
            layout6Chars += older.length;
          }
          return i % 2 === 1 ? older : line;
        });
        return { type: 'put' as const, key: keys.journal(first), value: rewritten.join('\n') };
      }),
      false,
    );
    expect(await collect(store, 1, head)).toEqual(all);
    for (const [first] of chunks.slice(1)) expect(await collect(store, first - 1, first + 1), `across ${first}`).toEqual(all.slice(first - 2, first + 1));
    expect(layout7Chars).toBeGreaterThan(0);
    expect(layout7Chars).toBeLessThan(0.75 * layout6Chars);
  });

  it('splits a round larger than a chunk into chunks of at most journalChunkEntriesMax entries, read back whole', async () => {
    // Three principals, each below its bound of commands admitted at once (admittedPerPrincipalMax), together past a chunk.
    const payers = ['alice', 'bob', 'carol'];
    const perPayer = Math.ceil((journalChunkEntriesMax / 2 + 10) / payers.length);
    const transfers = perPayer * payers.length;
    const { kernel, store } = await openBook({ genesis: customersGenesis(Object.fromEntries(payers.map((p) => [p, BigInt(perPayer)]))) });
    const before = kernel.currentHead.postingSeq;
    // Submitted in one turn: one intake round, one submission write, then one decision round.
    await Promise.all(
      payers.flatMap((payer, i) => Array.from({ length: perPayer }, () => kernel.submit(submission(actorOf(`did:ledger:id:${payer}`), transfer(acctOf(payer), acctOf(payers[(i + 1) % payers.length]!), 1n))))),
    );
    await kernel.idle();
    const head = kernel.currentHead.postingSeq;
    expect(head - before).toBe(2 * transfers);
    const sizes: [number, number][] = [];
    for await (const [key, value] of store.entries({ gte: keys.journalPrefix, lt: prefixEnd(keys.journalPrefix), limit: 100 })) {
      sizes.push([parseSeqHex(key.slice(keys.journalPrefix.length)), journalChunkEntries(value)]);
    }
    // The genesis chunk, then the round's: a full chunk and the rest, each with its time entry.
    expect(sizes).toEqual([[1, before], [before + 1, journalChunkEntriesMax], [before + 1 + journalChunkEntriesMax, 2 * transfers - journalChunkEntriesMax]]);
    let times = 0;
    for await (const _ of store.entries({ gte: keys.journalTimePrefix, lt: prefixEnd(keys.journalTimePrefix), limit: 100 })) times++;
    expect(times).toBe(3);
    const leaves = await collect(store, 1, head);
    expect(leaves.map((leaf) => JSON.parse(leaf).seq)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    await kernel.close();
  });
});
