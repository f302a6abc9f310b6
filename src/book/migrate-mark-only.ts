/**
 * The moves between store layouts that rewrite nothing (`ledgerd migrate`, docs/operations.md
 * "Upgrades"): this ledgerd reads the records of the layouts before each such move as they
 * stand, beside the new forms its rounds write, so the move is `meta/layout` = the layout this
 * ledgerd writes, one atomic write, made so that no ledgerd of the older layout serves a book
 * that now takes records it cannot read.
 * - 5 → 6: journal chunks (`j/<first seq>`) in the compact form of model/codec.ts
 *   (JournalChunkText: each entry its account, asset and account index entry, the CONTRACT 9
 *   leaf made when read) instead of layouts 2-5's leaves, which are the bytes the
 *   checkpoints hashed and are read as they stand (queries/journal.ts).
 * - 6 → 7: compact records per command (issue 28).
 *   `au/`, `ot/`: one chunk per write (model/compact-chunk.ts); `ck/`: digest bytes and a packed reference (book/client-key-record.ts).
 *   Operation states in `ev/` and `cmd/` chunks: model/codec.ts encodeOperation's JSON list by position (first character '['); layouts 2-6's JSON objects ('{') read as they stand.
 *   Also identity and account records as tuples without the id (`id/`, `acct/`) and genesis openings' index entries and journal lines without what every opening holds alike (codec.ts encodeIdentity, encodeAccount, encodeIndexedOpening); layout 6's forms read as they stand.
 *   Other postings' index entries (`aa/`) and journal lines (`j/`) as codec.ts encodeIndexedPosting's shorter list (a number, the enumerations' code, second); layouts 4-6's list (a text, the amount, second) read as it stands.
 */
import { keys, storeLayout } from '../model/keys.js';
import type { Store } from '../store/port.js';
import { MigrationRefused, layoutOf } from './migrate-layout.js';

/** The layouts whose move to this ledgerd's is the mark alone. */
export const layoutsMovedByMark: readonly string[] = ['5', '6'];

/** Brings a book in one of layoutsMovedByMark to storeLayout. Throws MigrationRefused for a book in another layout. */
export async function migrateByMark(store: Store): Promise<void> {
  const layout = await layoutOf(store);
  if (!layoutsMovedByMark.includes(layout)) throw new MigrationRefused(`the book is in store layout ${layout}, not one of ${layoutsMovedByMark.join(', ')}`);
  await store.write([{ type: 'put', key: keys.layout, value: storeLayout }], true);
}
