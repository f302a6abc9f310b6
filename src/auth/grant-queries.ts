/**
 * The read side of grants (spec endpoints 12, 15, 16): listings and "holds a grant
 * over" from the indexes the decider writes (decide-grants.ts), read from one
 * snapshot. Listings page with a cursor; every scan is bounded.
 */
import { decodeGrant } from './grants.js';
import { type Grant } from '../model/model.js';
import { grantsHeldMax } from './constants.js';
import { assert } from '../assert.js';
import { grantsListChunkEntries, grantsListScanMax } from '../constants.js';
import { refuse } from '../errors.js';
import type { Account } from '../model/model.js';
import type { ReadView } from '../store/port.js';
import { type GrantId, type IdentityId, parseGrantId } from '../model/values.js';
import { grantKey, heldGrantPrefix, prefixEnd, revokedHeldPrefix } from '../model/keys.js';

async function idsUnder(view: ReadView, prefix: string, from: string, max: number): Promise<GrantId[]> {
  const ids: GrantId[] = [];
  for await (const [key] of view.entries({ gte: prefix + from, lt: prefixEnd(prefix), limit: max })) ids.push(key.slice(prefix.length) as GrantId);
  return ids;
}

async function grantsOf(view: ReadView, ids: readonly GrantId[]): Promise<Grant[]> {
  if (ids.length === 0) return [];
  const texts = await view.getMany(ids.map(grantKey));
  return texts.map((text, i) => {
    assert(text !== undefined, `indexed grant ${ids[i]} is stored`);
    return decodeGrant(text);
  });
}

/** A page of a grant listing: `next` names where the following page starts (hex), null at the end. */
export interface GrantPage {
  readonly grants: readonly Grant[];
  readonly next: string | null;
}

export interface GrantPageQuery {
  readonly limit: number;
  readonly cursor: string | null;
}

/** A cursor is the hex of the first grant id the next page reads. */
const cursorOf = (id: GrantId) => Buffer.from(id, 'utf8').toString('hex');

function cursorStart(cursor: string): GrantId {
  if (!/^(?:[0-9a-f]{2})+$/.test(cursor)) refuse('ERR-MalformedCommand', 'cursor is not one this service issued');
  return parseGrantId(Buffer.from(cursor, 'hex').toString('utf8'), 'cursor');
}

/**
 * The grants under an index prefix that `keep` accepts, in identifier order, from the
 * cursor on: at most `limit`, reading at most grantsListScanMax index entries (a page
 * may then hold fewer and still carry `next`).
 */
export async function grantPage(view: ReadView, prefix: string, q: GrantPageQuery, keep: (grant: Grant) => boolean): Promise<GrantPage> {
  const ids = await idsUnder(view, prefix, q.cursor === null ? '' : cursorStart(q.cursor), grantsListScanMax + 1);
  const out: Grant[] = [];
  for (let i = 0; i < ids.length; i += grantsListChunkEntries) {
    const chunk = ids.slice(i, i + grantsListChunkEntries);
    for (const [j, grant] of (await grantsOf(view, chunk)).entries()) {
      if (out.length === q.limit || i + j === grantsListScanMax) return { grants: out, next: cursorOf(chunk[j]!) };
      if (keep(grant)) out.push(grant);
    }
  }
  return { grants: out, next: null };
}

/** Whether anything is indexed under `prefix`. */
export async function anyUnder(view: ReadView, prefix: string): Promise<boolean> {
  return (await idsUnder(view, prefix, '', 1)).length > 0;
}

/**
 * Whether `holder` holds a grant over `owner` that works at `nowMs` (and that `covers`
 * accepts): not revoked (a revocation reaches every narrowing) and not expired (a
 * narrowing never outlives its parent).
 */
export async function holdsLiveGrantOver(view: ReadView, holder: IdentityId, owner: IdentityId, nowMs: number, covers: (grant: Grant) => boolean = () => true): Promise<boolean> {
  const held = await idsUnder(view, heldGrantPrefix(holder, owner), '', grantsHeldMax + 1);
  if (held.length > grantsHeldMax) refuse('ERR-UnboundedGrant', `${holder} holds more than ${grantsHeldMax} grants over ${owner}'s accounts; revoke some`);
  const grants = await grantsOf(view, held);
  return grants.some((g) => g.revokedAtMs === null && (g.terms.expiresAtMs === null || nowMs < g.terms.expiresAtMs) && covers(g));
}

/** Whether `holder` held a grant over `owner` that was revoked, so that its use is ERR-AuthorityRevoked (as decisions tell it: decide-grants.ts). */
export async function heldRevokedGrantOver(view: ReadView, holder: IdentityId, owner: IdentityId): Promise<boolean> {
  return anyUnder(view, revokedHeldPrefix(holder, owner));
}

/**
 * Whether a grant over the account's owner can touch `account`: `{account}` naming
 * it, `"delegated_accounts"` while it is in delegated custody, `{asset}` (any of the
 * owner's accounts). `{identity}` grants open accounts and touch no existing one.
 */
export function grantCoversAccount(grant: Grant, account: Account): boolean {
  const { subject } = grant.terms;
  if (subject === 'delegated_accounts') return account.custody === 'delegated';
  if ('account' in subject) return subject.account === account.id;
  return 'asset' in subject;
}

/**
 * Whether a grant's subject names `account` itself: `{account}` naming it, or
 * `"delegated_accounts"` while it is in delegated custody (CONTRACT 11: who reads its balances).
 */
export function grantNamesAccount(grant: Grant, account: Account): boolean {
  const { subject } = grant.terms;
  if (subject === 'delegated_accounts') return account.custody === 'delegated';
  return 'account' in subject && subject.account === account.id;
}
