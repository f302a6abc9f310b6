/**
 * Store layout 3 → 4 (`ledgerd migrate`, docs/operations.md "Upgrades"). Layout 4 writes
 * each account index entry (`aa/<account>/<asset>/<seq>`) in the compact form of
 * model/codec.ts encodeIndexedPosting instead of layouts 2 and 3's copy of the journal's
 * leaf and the reference (about half the bytes of an entry; issue 28). Nothing else
 * differs, so the move is made in place, like 2 → 3 (migrate-grant-index.ts): first
 * `meta/layout` becomes `3-4`, which no ledgerd serves; then each page of entries is
 * rewritten in one atomic write, each checked to give back its leaf byte for byte; then
 * `meta/layout` = 4. A value in the compact form starts with '[' and a leaf with '{', so a
 * run stopped at any instant resumes where it stopped, skipping what is already moved.
 * Memory holds one page.
 */
import { assert } from '../assert.js';
import { migrateEntriesPerWrite } from '../constants.js';
import { decodeIndexedPosting, decodeLeaf, encodeIndexedPosting, encodeLeaf } from '../model/codec.js';
import { DamagedRecord, damaged, parsed } from '../model/decode.js';
import { keySpaces, keys, prefixEnd } from '../model/keys.js';
import type { Posting } from '../model/model.js';
import type { BatchOp, Store } from '../store/port.js';
import { MigrationRefused, moveInPlace } from './migrate-layout.js';

/** The layout this migration starts from, the mark of a book it is moving, and where it ends. */
export const layoutBeforeCompactIndex = '3';
export const layoutMovingCompactIndex = '3-4';
export const layoutAfterCompactIndex = '4';

export interface CompactIndexReport {
  /** Account index entries rewritten in the compact form. */
  readonly rewritten: number;
}

function decodeLeafIndexedPosting(text: string): { leaf: string; posting: Posting } {
  const what = 'account index entry';
  const cut = text.indexOf('\n');
  if (cut <= 0) damaged(what, 'holds no leaf and reference');
  const reference = parsed(text.slice(cut + 1), what);
  if (reference !== null && typeof reference !== 'string') damaged(what, 'reference is not text or null');
  const leaf = text.slice(0, cut);
  return { leaf, posting: decodeLeaf(leaf, reference as Posting['reference']) };
}

/** The compact form of a layout-3 entry, refused unless it gives back the entry's posting and leaf exactly. */
function compacted(key: string, text: string): string {
  let leaf: string;
  let posting: Posting;
  try {
    ({ leaf, posting } = decodeLeafIndexedPosting(text));
  } catch (error) {
    if (error instanceof DamagedRecord) throw new MigrationRefused(`${key}: ${error.message}`);
    throw error;
  }
  if (key !== keys.accountAsset(posting.account, posting.asset, posting.seq)) throw new MigrationRefused(`${key} holds the entry of ${posting.account}/${posting.asset}/${posting.seq}`);
  const compact = encodeIndexedPosting(posting);
  const back = decodeIndexedPosting(key, compact);
  assert(encodeLeaf(back) === leaf && back.reference === posting.reference, `${key}'s compact form gives back its leaf`);
  return compact;
}

/**
 * Brings a book in layout 3 (or one this migration was stopped in) to layout 4, in
 * place. `afterWrite` runs after each write (a test hook may stop there). Throws
 * MigrationRefused for a book in another layout or an index entry it cannot read.
 */
export async function migrateLayout3(store: Store, afterWrite: () => Promise<void> = async () => {}): Promise<CompactIndexReport> {
  return moveInPlace(store, { from: layoutBeforeCompactIndex, moving: layoutMovingCompactIndex, to: layoutAfterCompactIndex }, afterWrite, async () => {
    let rewritten = 0;
    let after: string | null = null;
    const end = prefixEnd(keySpaces.accountAsset);
    for (;;) {
      const ops: BatchOp[] = [];
      let read = 0;
      for await (const [key, value] of store.entries(after === null ? { gte: keySpaces.accountAsset, lt: end, limit: migrateEntriesPerWrite } : { gt: after, lt: end, limit: migrateEntriesPerWrite })) {
        read++;
        after = key;
        // Already compact: written by an earlier run of this migration.
        if (value.startsWith('[')) continue;
        ops.push({ type: 'put', key, value: compacted(key, value) });
      }
      if (read === 0) return { rewritten };
      if (ops.length === 0) continue;
      await store.write(ops, false);
      rewritten += ops.length;
      await afterWrite();
    }
  });
}
