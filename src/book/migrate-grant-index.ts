/**
 * Store layout 2 → 3 (`ledgerd migrate`, docs/operations.md "Upgrades"). Layout 3 indexes
 * held grants by holder and by the identity each reaches (model/keys.ts): the entries
 * `gh/<holder>/<grant>` and `ghr/<holder>/<grant>` of layout 2 become
 * `gho/<holder>/<over>/<grant>` and `ghro/<holder>/<over>/<grant>`, `over` read from the
 * grant's chain (auth/grants.ts overIdentity). Nothing else differs, so the move is made
 * in place: first `meta/layout` becomes `2-3`, which no ledgerd serves; then each page of
 * old entries is moved in one atomic write (their deletions with their new entries); then
 * `meta/layout` = 3. Stopped at any instant, the book is whole and marked, and running
 * `ledgerd migrate` again resumes where it stopped. Memory holds one page.
 */
import { grantChainDepthMax } from '../auth/constants.js';
import { decodeGrant, overIdentity } from '../auth/grants.js';
import { migrateEntriesPerWrite } from '../constants.js';
import type { Grant } from '../model/model.js';
import { grantKey, heldGrantKey, keySpaces, prefixEnd, revokedHeldKey } from '../model/keys.js';
import type { GrantId, IdentityId } from '../model/values.js';
import type { BatchOp, Store } from '../store/port.js';
import { MigrationRefused, moveInPlace } from './migrate-layout.js';
import { layoutBeforeCompactIndex, layoutMovingCompactIndex } from './migrate-compact-index.js';
import { layoutBeforeOperationPointers, layoutMovingOperationPointers } from './migrate-operation-pointers.js';
import { layoutsMovedByMark } from './migrate-mark-only.js';

/** The layout this migration starts from, and the mark of a book it is moving. */
export const layoutBeforeHeldOver = '2';
export const layoutMovingHeldOver = '2-3';
// Layout 3; migrate-compact-index.ts takes it on from there.
const layoutAfter = layoutBeforeCompactIndex;

export interface GrantIndexReport {
  /** Live held-grant entries moved. */
  readonly held: number;
  /** Revoked held-grant entries moved. */
  readonly revoked: number;
}

/** The identity each grant reaches, read through its chain (at most grantChainDepthMax reads). */
async function reachOf(store: Store, ids: readonly GrantId[]): Promise<Map<GrantId, IdentityId>> {
  const grants = new Map<GrantId, Grant>();
  let missing = [...new Set(ids)];
  for (let depth = 0; depth < grantChainDepthMax && missing.length > 0; depth++) {
    const texts = await store.getMany(missing.map(grantKey));
    missing.forEach((id, i) => {
      const text = texts[i];
      if (text === undefined) throw new MigrationRefused(`grant ${id} is indexed (or narrowed) but not stored`);
      grants.set(id, decodeGrant(text));
    });
    missing = [...new Set(missing.flatMap((id) => grants.get(id)!.terms.parent ?? []))].filter((id) => !grants.has(id));
  }
  const reach = new Map<GrantId, IdentityId>();
  for (const id of ids) {
    let grant = grants.get(id);
    for (let depth = 1; grant !== undefined && grant.terms.parent !== null && depth < grantChainDepthMax; depth++) grant = grants.get(grant.terms.parent);
    if (grant === undefined || grant.terms.parent !== null) throw new MigrationRefused(`grant ${id}'s chain does not end at a root within ${grantChainDepthMax} grants`);
    reach.set(id, overIdentity(grants.get(id)!.terms, grant.grantor));
  }
  return reach;
}

/** Moves every entry of one layout-2 space, a page per write; the count moved. */
async function moveSpace(store: Store, space: string, keyOf: (holder: string, over: string, grant: GrantId) => string, afterWrite: () => Promise<void>): Promise<number> {
  let moved = 0;
  for (;;) {
    // Each write deletes what it moved: the space's first page is always the next one.
    const page: [holder: string, grant: GrantId][] = [];
    for await (const [key] of store.entries({ gte: space, lt: prefixEnd(space), limit: migrateEntriesPerWrite })) {
      const [holder, grant, ...rest] = key.slice(space.length).split('/');
      if (!holder || !grant || rest.length > 0) throw new MigrationRefused(`${key} is not a layout-2 held-grant entry`);
      page.push([holder, grant as GrantId]);
    }
    if (page.length === 0) return moved;
    const reach = await reachOf(store, page.map(([, grant]) => grant));
    const ops: BatchOp[] = page.flatMap(([holder, grant]): BatchOp[] => [
      { type: 'del', key: `${space}${holder}/${grant}` },
      { type: 'put', key: keyOf(holder, reach.get(grant)!, grant), value: '' },
    ]);
    await store.write(ops, false);
    moved += page.length;
    await afterWrite();
  }
}

/**
 * Brings a book in layout 2 (or one this migration was stopped in) to layout 3, in
 * place. `afterWrite` runs after each write (a test hook may stop there). Throws
 * MigrationRefused for a book in another layout or a grant index it cannot read.
 */
export async function migrateLayout2(store: Store, afterWrite: () => Promise<void> = async () => {}): Promise<GrantIndexReport> {
  return moveInPlace(store, { from: layoutBeforeHeldOver, moving: layoutMovingHeldOver, to: layoutAfter }, afterWrite, async () => {
    const held = await moveSpace(store, keySpaces.heldGrant, heldGrantKey, afterWrite);
    const revoked = await moveSpace(store, keySpaces.revokedHeld, revokedHeldKey, afterWrite);
    return { held, revoked };
  });
}

/** Whether `ledgerd migrate` brings a book of this layout to this code's. */
export const migratableLayout = (layout: string): boolean => ['1', layoutBeforeHeldOver, layoutMovingHeldOver, layoutBeforeCompactIndex, layoutMovingCompactIndex, layoutBeforeOperationPointers, layoutMovingOperationPointers, ...layoutsMovedByMark].includes(layout);
