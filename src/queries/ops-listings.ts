/**
 * The operator's listings of the whole book (GET /v1/ops/identities, accounts, operations,
 * reservations, grants; docs/api.md, Operator listings). Each page walks one key space in
 * key order and reads at most opsListingScanMax records, whatever the filters: a filter
 * that matches little answers fewer items than its limit with `next` to resume, so no page
 * costs a scan of the book. Operations walk their index `ot/` newest first, so a time range
 * is a seek; reservations walk the expiry index `x/`, which holds exactly the live holds.
 * A position is the last key a page read; the next page starts after it.
 */
import { decodeGrant } from '../auth/grants.js';
import { opsListingChunkEntries, opsListingScanMax } from '../constants.js';
import { decodeAccount, decodeIdentity } from '../model/codec.js';
import { keySpaces, keys, prefixEnd, seqHex } from '../model/keys.js';
import type { Account, AccountKind, AccountStatus, Custody, Grant, Identity, Operation, OperationState } from '../model/model.js';
import type { Range, ReadView } from '../store/port.js';
import { type OperationIndexItem, operationIndexItemsOf } from './operation-index.js';
import { readDecided, readOperations } from './operation-records.js';

export interface OpsPage<T> {
  readonly items: T[];
  /** The last key read, when there may be more: the next page starts after it. */
  readonly next: string | null;
}

/** A page's bounds: items it answers and the position it resumes from (a key of its space). */
export interface OpsPageQuery {
  readonly limit: number;
  readonly after: string | null;
}

export type IdentityStatus = 'active' | 'restricted';
export const identityStatus = (i: Identity): IdentityStatus => (i.restricted === true ? 'restricted' : 'active');

export interface AccountFilters {
  readonly kind: AccountKind | null;
  readonly status: AccountStatus | null;
  readonly custody: Custody | null;
  /** Accounts that have held this asset (a balance record exists from its first posting). */
  readonly asset: string | null;
  readonly owner: string | null;
}

export interface OperationFilters {
  readonly state: OperationState | null;
  readonly command: string | null;
  readonly principal: string | null;
  /** Submitted at or after, ms. */
  readonly fromMs: number | null;
  /** Submitted before, ms. */
  readonly toMs: number | null;
}

export type GrantState = 'live' | 'revoked' | 'expired';
export interface GrantFilters {
  readonly grantor: string | null;
  readonly holder: string | null;
  readonly state: GrantState | null;
}

export function grantState(grant: Grant, nowMs: number): GrantState {
  if (grant.revokedAtMs !== null) return 'revoked';
  return grant.terms.expiresAtMs !== null && nowMs >= grant.terms.expiresAtMs ? 'expired' : 'live';
}

type Entry<V = string> = [string, V];
/** Picks, for each entry of a chunk in order, its item or null (filtered out); may read more in one round trip. */
type Select<T, V> = (chunk: readonly Entry<V>[]) => Promise<(T | null)[]> | (T | null)[];

/**
 * One page over `entries` (already bounded to opsListingScanMax): items picked in order until
 * `limit`, chunk by chunk. `next` is the key of the last entry the page used, when the page
 * filled or the scan bound stopped it; null once the space is read to its end.
 */
async function page<T, V = string>(entries: AsyncIterable<Entry<V>>, limit: number, select: Select<T, V>): Promise<OpsPage<T>> {
  const items: T[] = [];
  const chunkSize = Math.min(opsListingChunkEntries, Math.max(limit, 16));
  let chunk: Entry<V>[] = [];
  let scanned = 0;
  let last: string | null = null;
  const take = async (): Promise<boolean> => {
    const picked = await select(chunk);
    for (const [i, item] of picked.entries()) {
      last = chunk[i]![0];
      if (item !== null && items.push(item) === limit) return true;
    }
    chunk = [];
    return false;
  };
  for await (const entry of entries) {
    scanned++;
    chunk.push(entry);
    if (chunk.length === chunkSize && (await take())) return { items, next: last };
  }
  if (chunk.length > 0 && (await take())) return { items, next: last };
  return { items, next: scanned === opsListingScanMax ? last : null };
}

/** A key space in key order (or reverse), from after `after`, at most opsListingScanMax entries. */
function space(view: ReadView, gte: string, lt: string, after: string | null, reverse = false): AsyncIterable<Entry> {
  const range: Range = reverse
    ? { gte, lt: after !== null && after < lt ? after : lt, reverse: true, limit: opsListingScanMax }
    : { ...(after !== null && after >= gte ? { gt: after } : { gte }), lt, limit: opsListingScanMax };
  return view.entries(range);
}

/** The key space each listing's positions lie in: a position elsewhere is no cursor of that listing. */
export const listingSpaces = {
  identities: keySpaces.identity,
  accounts: keySpaces.account,
  operations: keySpaces.operationTime,
  reservations: keySpaces.expiry,
  grants: keySpaces.grant,
} as const;
export type OpsListing = keyof typeof listingSpaces;

export async function listIdentities(view: ReadView, q: OpsPageQuery, status: IdentityStatus | null): Promise<OpsPage<Identity>> {
  const prefix = keySpaces.identity;
  return page(space(view, prefix, prefixEnd(prefix), q.after), q.limit, (chunk) =>
    chunk.map(([key, text]) => {
      const identity = decodeIdentity(text, key);
      return status === null || identityStatus(identity) === status ? identity : null;
    }),
  );
}

export async function listAccounts(view: ReadView, q: OpsPageQuery, f: AccountFilters): Promise<OpsPage<Account>> {
  const entries = f.owner === null ? space(view, keys.accountPrefix, prefixEnd(keys.accountPrefix), q.after) : ownedAccounts(view, f.owner, q.after);
  return page(entries, q.limit, async (chunk) => {
    const accounts = chunk.map(([key, text]) => decodeAccount(text, key));
    const held = f.asset === null ? [] : await view.getMany(accounts.map((a) => keys.balance(a.id, f.asset!)));
    return accounts.map((a, i) => {
      if ((f.kind !== null && a.kind !== f.kind) || (f.status !== null && a.status !== f.status) || (f.custody !== null && a.custody !== f.custody)) return null;
      if (f.owner !== null && a.owner !== f.owner) return null;
      return f.asset === null || held[i] !== undefined ? a : null;
    });
  });
}

/** An owner's accounts as entries of `acct/` in key order: its record lists them (at most accountsKeptPerIdentityMax). */
async function* ownedAccounts(view: ReadView, owner: string, after: string | null): AsyncIterable<Entry> {
  const text = await view.get(keys.identity(owner));
  if (text === undefined) return;
  const ids = decodeIdentity(text, keys.identity(owner))
    .accounts.map((id) => keys.account(id))
    .filter((key) => after === null || key > after)
    .sort()
    .slice(0, opsListingScanMax);
  for (let i = 0; i < ids.length; i += opsListingChunkEntries) {
    const chunk = ids.slice(i, i + opsListingChunkEntries);
    const texts = await view.getMany(chunk);
    for (const [j, key] of chunk.entries()) if (texts[j] !== undefined) yield [key, texts[j]!];
  }
}

/** Operations newest first by submission time, within [fromMs, toMs). */
export async function listOperations(view: ReadView, q: OpsPageQuery, f: OperationFilters): Promise<OpsPage<Operation>> {
  const prefix = keys.operationTimePrefix;
  const gte = f.fromMs === null ? prefix : `${prefix}${seqHex(f.fromMs)}/`;
  const lt = f.toMs === null ? prefixEnd(prefix) : `${prefix}${seqHex(f.toMs)}/`;
  return page(operationItems(view, gte, lt, q.after), q.limit, async (chunk) => {
    const wanted = chunk.map(([, entry]) => {
      if ((f.command !== null && entry.type !== f.command) || (f.principal !== null && entry.principal !== f.principal)) return null;
      return { ref: entry.ref, cseq: entry.cseq };
    });
    const found = wanted.filter((w) => w !== null);
    const ops = new Map<string, Operation>();
    for (const op of await readOperations(view, found)) if (op !== undefined) ops.set(op.ref, op);
    return wanted.map((w) => {
      const op = w === null ? undefined : ops.get(w.ref);
      return op !== undefined && (f.state === null || op.state === f.state) ? op : null;
    });
  });
}

/**
 * The index's items newest first within [gte, lt), before `after` (an item's own key, which
 * may lie inside a chunk), at most opsListingScanMax of them. Every item of a chunk has the
 * chunk's time, so a chunk within the time range is within it whole.
 */
async function* operationItems(view: ReadView, gte: string, lt: string, after: string | null): AsyncIterable<Entry<OperationIndexItem>> {
  let scanned = 0;
  for await (const item of operationIndexItemsOf(space(view, gte, lt, after, true), true)) {
    if (after !== null && item.key >= after) continue;
    yield [item.key, item];
    if (++scanned === opsListingScanMax) return;
  }
}

/** Live holds (Reserved reservations awaiting their deadline), soonest deadline first. */
export async function listReservations(view: ReadView, q: OpsPageQuery): Promise<OpsPage<Operation>> {
  return page(space(view, keys.expiryPrefix, prefixEnd(keys.expiryPrefix), q.after), q.limit, async (chunk) => {
    const ops = await readDecided(view, chunk.map(([key]) => key.slice(key.lastIndexOf('/') + 1)));
    return ops.map((op) => (op !== undefined && op.state === 'Reserved' && op.hold !== null ? op : null));
  });
}

/** Every grant in id order, with its state at `nowMs`. */
export async function listGrants(view: ReadView, q: OpsPageQuery, f: GrantFilters, nowMs: number): Promise<OpsPage<{ grant: Grant; state: GrantState }>> {
  const prefix = keySpaces.grant;
  return page(space(view, prefix, prefixEnd(prefix), q.after), q.limit, (chunk) =>
    chunk.map(([, text]) => {
      const grant = decodeGrant(text);
      if ((f.grantor !== null && grant.grantor !== f.grantor) || (f.holder !== null && grant.terms.principal !== f.holder)) return null;
      const state = grantState(grant, nowMs);
      return f.state === null || state === f.state ? { grant, state } : null;
    }),
  );
}
