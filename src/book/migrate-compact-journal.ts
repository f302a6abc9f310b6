/**
 * Store layout 5 → 6 (`ledgerd migrate`, docs/operations.md "Upgrades"). Layout 6 writes each
 * journal chunk (`j/<first seq>`) in the compact form of model/codec.ts (JournalChunkText: each
 * entry its account, asset and account index entry, the CONTRACT 9 leaf made when read) instead
 * of layouts 2-5's leaves. This ledgerd reads either form, chunk by chunk (queries/journal.ts),
 * and a layout-5 chunk's lines are the leaf bytes the checkpoints hashed, so the chunks are kept
 * as they stand: the move is `meta/layout` = 6, one atomic write, made so that no ledgerd of
 * layout 5 serves a book that now takes chunks it cannot read. A book keeps its old chunks
 * beside the new ones its rounds write.
 */
import { keys } from '../model/keys.js';
import type { Store } from '../store/port.js';
import { MigrationRefused, layoutOf } from './migrate-layout.js';

/** The layout this migration starts from, and where it ends. */
export const layoutBeforeCompactJournal = '5';
export const layoutAfterCompactJournal = '6';

/** Brings a book in layout 5 to layout 6. Throws MigrationRefused for a book in another layout. */
export async function migrateLayout5(store: Store): Promise<void> {
  const layout = await layoutOf(store);
  if (layout !== layoutBeforeCompactJournal) throw new MigrationRefused(`the book is in store layout ${layout}, not ${layoutBeforeCompactJournal}`);
  await store.write([{ type: 'put', key: keys.layout, value: layoutAfterCompactJournal }], true);
}
