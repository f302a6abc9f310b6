/**
 * Prefetching grants: what a round's (or an intake's) grant decisions read, loaded
 * into the overlay before deciding, so the decisions stay synchronous. Every scan
 * is bounded: held grants and children by their constants, chains by their depth.
 */
import { grantChainDepthMax, grantChildrenMax, grantRevocationSetMax } from './auth/constants.js';
import { decodeGrant, grantChildPrefix, grantKey, grantWindowKey } from './auth/grants.js';
import { prefixEnd } from './codec.js';
import { heldGrantPrefix } from './decide-grants.js';
import type { Overlay } from './overlay.js';
import type { ReadView } from './store/port.js';
import type { GrantId } from './values.js';

/** How many grants one principal may hold; a search for authority reads them all. */
export const heldGrantsMax = 64;

async function loadRecords(view: ReadView, overlay: Overlay, keys: readonly string[]): Promise<void> {
  const missing = keys.filter((k) => !overlay.records.has(k));
  if (missing.length === 0) return;
  const texts = await view.getMany(missing);
  missing.forEach((k, i) => overlay.records.set(k, texts[i]));
}

/** The ids under an index prefix, at most `max`, into the overlay's lists (once per prefix). */
export async function loadList(view: ReadView, overlay: Overlay, prefix: string, max: number): Promise<GrantId[]> {
  const known = overlay.lists.get(prefix);
  if (known) return known;
  const ids: GrantId[] = [];
  for await (const [key] of view.entries({ gte: prefix, lt: prefixEnd(prefix), limit: max })) ids.push(key.slice(prefix.length) as GrantId);
  overlay.lists.set(prefix, ids);
  return ids;
}

/** Grants `ids` and every grant they narrow, with the window usage of each. */
export async function loadChains(view: ReadView, overlay: Overlay, ids: readonly GrantId[]): Promise<void> {
  let frontier = [...ids];
  for (let depth = 0; depth < grantChainDepthMax && frontier.length > 0; depth++) {
    await loadRecords(view, overlay, frontier.flatMap((id) => [grantKey(id), grantWindowKey(id)]));
    frontier = frontier.flatMap((id) => {
      const text = overlay.records.get(grantKey(id));
      const parent = text === undefined ? null : decodeGrant(text).terms.parent;
      return parent === null || overlay.records.has(grantKey(parent)) ? [] : [parent];
    });
  }
}

/** The grants a principal holds, with their chains. */
export async function loadHeldGrants(view: ReadView, overlay: Overlay, principal: string): Promise<void> {
  await loadChains(view, overlay, await loadList(view, overlay, heldGrantPrefix(principal), heldGrantsMax));
}

/** A grant about to be narrowed: its chain and its children. */
export async function loadParent(view: ReadView, overlay: Overlay, parent: GrantId): Promise<void> {
  await loadChains(view, overlay, [parent]);
  await loadList(view, overlay, grantChildPrefix(parent), grantChildrenMax);
}

/** A grant about to be revoked, and every grant narrowed from it. */
export async function loadRevocation(view: ReadView, overlay: Overlay, root: GrantId): Promise<void> {
  const set = [root];
  for (let i = 0; i < set.length && set.length <= grantRevocationSetMax; i++) {
    set.push(...(await loadList(view, overlay, grantChildPrefix(set[i]!), grantChildrenMax)));
  }
  await loadRecords(view, overlay, set.map(grantKey));
}
