/**
 * The read side of grants (spec endpoints 12, 15, 16): listings and "holds a grant
 * over" from the indexes the decider writes (decide-grants.ts: `gh/<holder>/<grant>`,
 * `gi/<identity over>/<grant>`), read from one snapshot. Every scan is bounded.
 */
import { type Grant, decodeGrant, grantKey } from './auth/grants.js';
import { assert } from './assert.js';
import { prefixEnd } from './codec.js';
import { grantsListedMax } from './constants.js';
import { heldGrantPrefix, overGrantKey, overGrantPrefix } from './decide-grants.js';
import { refuse } from './errors.js';
import { heldGrantsMax } from './grant-loader.js';
import type { Account } from './model.js';
import type { ReadView } from './store/port.js';
import type { GrantId, IdentityId } from './values.js';

async function idsUnder(view: ReadView, prefix: string, max: number): Promise<GrantId[]> {
  const ids: GrantId[] = [];
  for await (const [key] of view.entries({ gte: prefix, lt: prefixEnd(prefix), limit: max })) ids.push(key.slice(prefix.length) as GrantId);
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

/** Every grant over `identity` (its accounts, or opening them), live and revoked, in identifier order. */
export async function grantsOver(view: ReadView, identity: IdentityId): Promise<Grant[]> {
  const ids = await idsUnder(view, overGrantPrefix(identity), grantsListedMax + 1);
  if (ids.length > grantsListedMax) refuse('ERR-QueryUnbounded', `more than ${grantsListedMax} grants are over ${identity}`);
  return grantsOf(view, ids);
}

/**
 * Whether `holder` holds a grant over `owner` that works at `nowMs`: not revoked (a
 * revocation reaches every narrowing) and not expired (a narrowing never outlives its parent).
 */
export async function holdsLiveGrantOver(view: ReadView, holder: IdentityId, owner: IdentityId, nowMs: number): Promise<boolean> {
  const held = await idsUnder(view, heldGrantPrefix(holder), heldGrantsMax);
  if (held.length === 0) return false;
  const over = await view.getMany(held.map((id) => overGrantKey(owner, id)));
  const grants = await grantsOf(view, held.filter((_, i) => over[i] !== undefined));
  return grants.some((g) => g.revokedAtMs === null && (g.terms.expiresAtMs === null || nowMs < g.terms.expiresAtMs));
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
