/**
 * Prefetching grants: what a round's (or an intake's) grant decisions read, loaded
 * into the overlay before deciding, so the decisions stay synchronous. Every scan
 * is bounded: held grants and children by their constants, chains by their depth.
 */
import { grantChainDepthMax, grantChildrenMax, grantRevocationSetMax, grantsGivenMax, grantsHeldMax } from './constants.js';
import { decodeGrant, overIdentity } from './grants.js';
import type { Grant, GrantTerms } from '../model/model.js';
import type { Overlay } from '../book/overlay.js';
import type { ReadView } from '../store/port.js';
import type { GrantId, IdentityId } from '../model/values.js';
import { givenGrantPrefix, grantChildPrefix, grantKey, grantWindowKey, heldGrantPrefix, prefixEnd, revokedHeldPrefix } from '../model/keys.js';

async function loadRecords(view: ReadView, overlay: Overlay, keys: readonly string[]): Promise<void> {
  const missing = keys.filter((k) => !overlay.records.has(k));
  if (missing.length === 0) return;
  const texts = await view.getMany(missing);
  missing.forEach((k, i) => overlay.records.set(k, texts[i]));
}

/** The ids under an index prefix, at most `max` (the last ones when `newest`), into the overlay's lists (once per prefix). */
export async function loadList(view: ReadView, overlay: Overlay, prefix: string, max: number, newest = false): Promise<GrantId[]> {
  const known = overlay.lists.get(prefix);
  if (known) return known;
  const ids: GrantId[] = [];
  for await (const [key] of view.entries({ gte: prefix, lt: prefixEnd(prefix), limit: max, reverse: newest })) ids.push(key.slice(prefix.length) as GrantId);
  ids.sort();
  overlay.lists.set(prefix, ids);
  return ids;
}

/** Grants `ids` and every grant they narrow, with the window usage of each. */
export async function loadChains(view: ReadView, overlay: Overlay, ids: readonly GrantId[]): Promise<void> {
  let frontier = [...ids];
  for (let depth = 0; depth < grantChainDepthMax && frontier.length > 0; depth++) {
    await loadRecords(view, overlay, frontier.flatMap((id) => [grantKey(id), grantWindowKey(id)]));
    // Every ancestor, even one already read for another need (a revocation reads grants, not their windows or parents).
    const parents = frontier.flatMap((id) => {
      const text = overlay.records.get(grantKey(id));
      const parent = text === undefined ? null : decodeGrant(text).terms.parent;
      return parent === null ? [] : [parent];
    });
    frontier = [...new Set(parents)];
  }
}

/**
 * The grants a principal holds over each of `owners`' accounts, with their chains (one
 * past the bound, so a decision sees when a list is not whole).
 */
export async function loadHeldGrants(view: ReadView, overlay: Overlay, principal: string, owners: Iterable<string>): Promise<void> {
  for (const owner of new Set(owners)) {
    await loadChains(view, overlay, await loadList(view, overlay, heldGrantPrefix(principal, owner), grantsHeldMax + 1));
    // The latest revoked ones only tell a refusal's code (ERR-AuthorityRevoked): their ids are enough.
    await loadList(view, overlay, revokedHeldPrefix(principal, owner), grantsHeldMax, true);
  }
}

/**
 * What a new grant's issuance reads: its parent's chain and live children, the
 * holder's held grants and the grantor's given ones (each bounded at issuance), and
 * the new grant's own (empty) records, which a later command of the same round may
 * narrow, use or revoke.
 */
export async function loadIssuance(view: ReadView, overlay: Overlay, issue: { grantor: IdentityId; holder: string; terms: GrantTerms; newGrant: GrantId | null }): Promise<void> {
  const { parent } = issue.terms;
  let rootGrantor = issue.grantor;
  if (parent !== null) {
    // The parent is committed (intake refuses narrowing a grant not yet given), so its root is known here as the decision will see it.
    await loadChains(view, overlay, [parent]);
    await loadChains(view, overlay, await loadList(view, overlay, grantChildPrefix(parent), grantChildrenMax));
    rootGrantor = rootGrantorOf(overlay, parent) ?? rootGrantor;
  }
  await loadHeldGrants(view, overlay, issue.holder, [overIdentity(issue.terms, rootGrantor)]);
  await loadChains(view, overlay, await loadList(view, overlay, givenGrantPrefix(issue.grantor), grantsGivenMax));
  if (issue.newGrant === null) return;
  // Nothing is stored under a grant not given yet.
  if (!overlay.lists.has(grantChildPrefix(issue.newGrant))) overlay.lists.set(grantChildPrefix(issue.newGrant), []);
  for (const key of [grantKey(issue.newGrant), grantWindowKey(issue.newGrant)]) if (!overlay.records.has(key)) overlay.records.set(key, undefined);
}

/** The grantor at the root of a loaded grant's chain, or undefined when a link is missing. */
function rootGrantorOf(overlay: Overlay, id: GrantId): IdentityId | undefined {
  let grant: Grant | undefined;
  for (let next: GrantId | null = id, depth = 0; next !== null && depth < grantChainDepthMax; depth++) {
    const text = overlay.records.get(grantKey(next));
    if (text === undefined) return undefined;
    grant = decodeGrant(text);
    next = grant.terms.parent;
  }
  return grant?.terms.parent === null ? grant.grantor : undefined;
}

/** A grant about to be revoked, its chain (whose root says which holders' index it is in), and every grant narrowed from it. */
export async function loadRevocation(view: ReadView, overlay: Overlay, root: GrantId): Promise<void> {
  await loadChains(view, overlay, [root]);
  const set = [root];
  for (let i = 0; i < set.length && set.length <= grantRevocationSetMax; i++) {
    set.push(...(await loadList(view, overlay, grantChildPrefix(set[i]!), grantChildrenMax)));
  }
  await loadRecords(view, overlay, set.map(grantKey));
}
