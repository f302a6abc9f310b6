/**
 * Grants (spec 2.6, CONTRACT 5): bounded authority a holder delegates, narrowed along a
 * chain, and issuance grants the operator gives with a justification.
 *
 * Subject forms on the wire: `{account}`, `"delegated_accounts"`, `{asset}` and
 * `{identity}` (the spec leaves the last two key names open; these are ours). A grant
 * only ever covers accounts owned by the grantor at the root of its chain, at the moment
 * of use: `{account}` that one account, `"delegated_accounts"` those in delegated
 * custody, `{asset}` every one, limited to that asset. `{identity}` is the exception: it
 * lets its holder open accounts the named identity will own (op `open_account`), and
 * only that identity or the identities principal may give it.
 *
 * Kind `issuance` (endpoint 6 only) is given by the operator over its treasury accounts
 * (`{account}` or `{asset}`), for `transfer`.
 *
 * Every function here is pure: the kernel prefetches the grant chain and the window
 * usage records, passes the decision time, and writes what comes back.
 */
import { assert } from '../assert.js';
import type { Principals } from './authority.js';
import { underOperatorCustody } from '../custody/rule.js';
import { type Refusal, Refused, refusal, refuse } from '../errors.js';
import { check, damaged, decimalText, members, parsed, recordJson } from '../model/decode.js';
import {
  type AccountKind,
  type Custody,
  type Grant,
  type GrantKind,
  type GrantOp,
  type GrantSubject,
  type GrantTerms,
  type PerWindow,
  grantOps,
} from '../model/model.js';
import {
  type AccountId,
  type AssetSymbol,
  type GrantId,
  type IdentityId,
  parseAccountId,
  parseAssetSymbol,
  parseGrantId,
  parseIdentityId,
  parseLimitMinor,
  parseUintNumber,
} from '../model/values.js';
import {
  grantChainDepthMax,
  grantChildrenMax,
  grantListEntriesMax,
  grantRevocationSetMax,
  grantWindowLengthMaxMs,
  grantWindowLengthMinMs,
  grantWindowUsesMax,
  grantsDecodedMax,
  justificationBytesMax,
} from './constants.js';

// ---------------------------------------------------------------------------------
// Parsing at the edge (throws Refused, like values.ts)

const termKeys = new Set(['kind', 'principal', 'subject', 'ops', 'assets', 'counterparties', 'expires', 'parent', 'per_operation', 'per_window']);

function record(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse('ERR-MalformedCommand', `${field} must be an object`);
  return value as Record<string, unknown>;
}

function onlyKeys(body: Record<string, unknown>, allowed: ReadonlySet<string>, field: string): void {
  for (const key of Object.keys(body)) if (!allowed.has(key)) refuse('ERR-MalformedCommand', `${field} has an unknown field ${key}`);
}

const absent = (v: unknown) => v === undefined || v === null;

function parseList<T>(value: unknown, field: string, item: (v: unknown, f: string) => T, max: number): readonly T[] {
  if (!Array.isArray(value) || value.length > max) refuse('ERR-MalformedCommand', `${field} must be an array of at most ${max} entries`);
  const items = value.map((v, i) => item(v, `${field}[${i}]`));
  if (new Set(items).size !== items.length) refuse('ERR-MalformedCommand', `${field} names an entry twice`);
  return items;
}

function parseOp(value: unknown, field: string): GrantOp {
  if (typeof value !== 'string' || !(grantOps as readonly string[]).includes(value)) refuse('ERR-MalformedCommand', `${field} must be one of ${grantOps.join(', ')}`);
  return value as GrantOp;
}

function parseSubject(value: unknown): GrantSubject {
  if (value === 'delegated_accounts') return value;
  const body = record(value, 'subject');
  const [key, ...rest] = Object.keys(body);
  if (rest.length > 0 || key === undefined) refuse('ERR-MalformedCommand', 'subject names exactly one of account, asset or identity');
  if (key === 'account') return { account: parseAccountId(body.account, 'subject.account') };
  if (key === 'asset') return { asset: parseAssetSymbol(body.asset, 'subject.asset') };
  if (key === 'identity') return { identity: parseIdentityId(body.identity, 'subject.identity') };
  return refuse('ERR-MalformedCommand', 'subject is "delegated_accounts", {account}, {asset} or {identity}');
}

function parsePerWindow(value: unknown): PerWindow {
  const body = record(value, 'per_window');
  onlyKeys(body, new Set(['length', 'limit']), 'per_window');
  const lengthMs = parseUintNumber(body.length, 'per_window.length');
  if (lengthMs < grantWindowLengthMinMs || lengthMs > grantWindowLengthMaxMs) {
    refuse('ERR-MalformedCommand', `per_window.length must be ${grantWindowLengthMinMs}..${grantWindowLengthMaxMs} ms`);
  }
  return { lengthMs, limitMinor: parseLimitMinor(body.limit, 'per_window.limit') };
}

/** The subject, ops and kind must make sense together. */
function checkCoherent(terms: GrantTerms): void {
  const opensAccounts = typeof terms.subject === 'object' && 'identity' in terms.subject;
  if (opensAccounts !== terms.ops.includes('open_account') || (opensAccounts && terms.ops.length !== 1)) {
    refuse('ERR-MalformedCommand', 'op open_account goes with an {identity} subject, alone, and only there');
  }
  if (terms.kind === 'issuance') {
    const overTreasury = typeof terms.subject === 'object' && ('account' in terms.subject || 'asset' in terms.subject);
    if (!overTreasury || terms.ops.some((op) => op !== 'transfer')) refuse('ERR-MalformedCommand', 'an issuance grant covers transfers out of an {account} or {asset}');
    if (terms.parent !== null) refuse('ERR-MalformedCommand', 'an issuance grant narrows no parent');
  }
}

/**
 * Terms as sent (endpoint 20 flat, endpoint 6 under `grant`), for a grant of `kind`.
 * Amounts become bigint; times stay ms. Unknown fields are refused, never ignored.
 */
export function parseGrantTerms(value: unknown, kind: GrantKind): GrantTerms {
  const body = record(value, 'terms');
  onlyKeys(body, termKeys, 'terms');
  if (body.kind !== kind) refuse('ERR-MalformedCommand', `kind must be ${kind} here`);
  const ops = parseList(body.ops, 'ops', parseOp, grantOps.length);
  if (ops.length === 0) refuse('ERR-MalformedCommand', 'ops names at least one operation');
  const terms: GrantTerms = {
    kind,
    principal: parseIdentityId(body.principal, 'principal'),
    subject: parseSubject(body.subject),
    ops,
    assets: absent(body.assets) ? null : parseList(body.assets, 'assets', parseAssetSymbol, grantListEntriesMax),
    counterparties: absent(body.counterparties) ? null : parseList(body.counterparties, 'counterparties', parseAccountId, grantListEntriesMax),
    expiresAtMs: absent(body.expires) ? null : parseUintNumber(body.expires, 'expires'),
    parent: absent(body.parent) ? null : parseGrantId(body.parent, 'parent'),
    perOperationMinor: absent(body.per_operation) ? null : parseLimitMinor(body.per_operation, 'per_operation'),
    perWindow: absent(body.per_window) ? null : parsePerWindow(body.per_window),
  };
  checkCoherent(terms);
  return terms;
}

/** Endpoint 6: `{grant, justification}`; a missing or blank justification is ERR-JustificationRequired. */
export function parseIssuanceGrantRequest(value: unknown): { readonly terms: GrantTerms; readonly justification: string } {
  const body = record(value, 'body');
  onlyKeys(body, new Set(['grant', 'justification']), 'body');
  return { terms: parseGrantTerms(body.grant, 'issuance'), justification: parseJustification(body.justification, 'an issuance grant') };
}

/** An operator's justification (issuance grants, freezes, restrictions): missing or blank is ERR-JustificationRequired. */
export function parseJustification(justification: unknown, what: string): string {
  if (typeof justification !== 'string' || justification.trim().length === 0) refuse('ERR-JustificationRequired', `${what} needs a justification`);
  if (Buffer.byteLength(justification, 'utf8') > justificationBytesMax) refuse('ERR-MalformedCommand', `justification is over ${justificationBytesMax} bytes of UTF-8`);
  return justification;
}

// ---------------------------------------------------------------------------------
// Views and the stored form

/** Terms as the spec shows them (amounts as decimal strings); also their stored form. */
export function grantTermsView(terms: GrantTerms): Record<string, unknown> {
  return {
    kind: terms.kind,
    principal: terms.principal,
    subject: terms.subject,
    ops: terms.ops,
    assets: terms.assets,
    counterparties: terms.counterparties,
    expires: terms.expiresAtMs,
    parent: terms.parent,
    per_operation: terms.perOperationMinor === null ? null : terms.perOperationMinor.toString(),
    per_window: terms.perWindow === null ? null : { length: terms.perWindow.lengthMs, limit: terms.perWindow.limitMinor.toString() },
  };
}

/** A grant listing item (spec 2.6). */
export function grantListingItem(grant: Grant): Record<string, unknown> {
  return { grant: grant.id, granted_at: grant.grantedAtMs, grantor: grant.grantor, revoked: grant.revokedAtMs, terms: grantTermsView(grant.terms) };
}

export function encodeGrant(grant: Grant): string {
  const { terms, ...rest } = grant;
  return JSON.stringify({ ...rest, terms: grantTermsView(terms) });
}

/**
 * Decoded grants by stored text. A search for authority reads every held chain for every
 * use, and decoding (which checks the terms again) dominated it; a text always decodes
 * to the same grant, so the memo changes no decision. Emptied when full.
 */
const decodedGrants = new Map<string, Grant>();
const grantKinds = members<GrantKind>({ delegated: true, issuance: true });

/** A stored grant, checked again on the way in: a record that does not parse is a bug. */
export function decodeGrant(text: string): Grant {
  const known = decodedGrants.get(text);
  if (known !== undefined) return known;
  if (decodedGrants.size >= grantsDecodedMax) decodedGrants.clear();
  const grant = decodeGrantText(text);
  decodedGrants.set(text, grant);
  return grant;
}

function decodeGrantText(text: string): Grant {
  const what = 'grant';
  const j = recordJson(text, what);
  const id = check.string(j, 'id', what) as GrantId;
  const named = `grant ${id}`;
  const termsJson = check.object(j, 'terms', named);
  let terms: GrantTerms;
  try {
    // Stored terms are in their wire form: parsed again by the edge's parser (its checks are the record's).
    terms = parseGrantTerms(termsJson, check.oneOf(termsJson, 'kind', grantKinds, named));
  } catch (error) {
    if (error instanceof Refused) damaged(named, `terms do not parse: ${error.refusal.description}`);
    throw error;
  }
  return {
    id,
    grantor: check.string(j, 'grantor', named) as IdentityId,
    grantedAtMs: check.integer(j, 'grantedAtMs', named),
    revokedAtMs: check.nullableInteger(j, 'revokedAtMs', named),
    justification: check.nullableString(j, 'justification', named),
    terms,
  };
}

// ---------------------------------------------------------------------------------
// Issuance and narrowing

/**
 * A narrowing keeps its parent's subject. (A single account is not within
 * "delegated_accounts": custody changes, and the child must hold alone.)
 */
const sameSubject = (a: GrantSubject, b: GrantSubject) => JSON.stringify(a) === JSON.stringify(b);

function listWithin<T>(child: readonly T[] | null, parent: readonly T[] | null): boolean {
  return parent === null || (child !== null && child.every((x) => parent.includes(x)));
}

function boundWithin<T>(child: T | null, parent: T | null, within: (c: T, p: T) => boolean): boolean {
  return parent === null || (child !== null && within(child, parent));
}

/**
 * The first term in which `child` is wider than `parent`, or null when it narrows (or
 * equals) it: judged alone, the child then allows nothing the parent forbids. A longer window with a lower limit is narrower: every window of the
 * parent's length lies inside one of the child's.
 */
export function widenedTerm(child: GrantTerms, parent: GrantTerms): string | null {
  if (child.kind !== parent.kind) return 'kind';
  if (!sameSubject(child.subject, parent.subject)) return 'subject';
  if (!child.ops.every((op) => parent.ops.includes(op))) return 'ops';
  if (!listWithin(child.assets, parent.assets)) return 'assets';
  if (!listWithin(child.counterparties, parent.counterparties)) return 'counterparties';
  if (!boundWithin(child.expiresAtMs, parent.expiresAtMs, (c, p) => c <= p)) return 'expires';
  if (!boundWithin(child.perOperationMinor, parent.perOperationMinor, (c, p) => c <= p)) return 'per_operation';
  if (!boundWithin(child.perWindow, parent.perWindow, (c, p) => c.lengthMs >= p.lengthMs && c.limitMinor <= p.limitMinor)) return 'per_window';
  return null;
}

/** What the kernel reads before deciding a new grant. */
export interface GrantIssuance {
  readonly terms: GrantTerms;
  readonly grantor: IdentityId;
  readonly principals: Principals;
  /** Owner of the `{account}` subject's account, or undefined when unknown or another subject. */
  readonly subjectAccountOwner: IdentityId | undefined;
  /** The parent and its ancestors, nearest first; empty without a parent or when unknown. */
  readonly parentChain: readonly Grant[];
  /** Grants already narrowed directly from the parent. */
  readonly parentChildren: number;
  readonly nowMs: number;
}

const notAuthorised = (what: string) => refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers ${what}`);

/** Why a new grant may not be given, or null. Justification is checked by the parser. */
export function grantIssuanceRefusal(input: GrantIssuance): Refusal | null {
  const { terms, grantor, principals } = input;
  if (terms.kind === 'issuance') return grantor === principals.operator ? null : notAuthorised('issuance');
  if (terms.perOperationMinor === null && terms.perWindow === null) return refusal('ERR-UnboundedGrant', 'a delegated grant must carry per_operation or per_window');
  if (terms.parent === null) return rootGrantRefusal(input);
  const [parent] = input.parentChain;
  if (parent === undefined || parent.id !== terms.parent || parent.terms.principal !== grantor) return notAuthorised(`grant ${terms.parent}`);
  if (input.parentChain.some((g) => g.revokedAtMs !== null)) return refusal('ERR-AuthorityRevoked', `grant ${terms.parent} or one it narrows was revoked`);
  if (input.parentChain.some((g) => g.terms.expiresAtMs !== null && input.nowMs >= g.terms.expiresAtMs)) return notAuthorised(`grant ${terms.parent}, which has expired`);
  if (input.parentChain.length + 1 > grantChainDepthMax) return refusal('ERR-UnboundedGrant', `grants narrow at most ${grantChainDepthMax - 1} levels deep`);
  if (input.parentChildren >= grantChildrenMax) return refusal('ERR-UnboundedGrant', `at most ${grantChildrenMax} grants narrow one grant`);
  const widened = widenedTerm(terms, parent.terms);
  return widened === null ? null : refusal('ERR-UnboundedGrant', `the grant widens its parent in ${widened}`);
}

function rootGrantRefusal(input: GrantIssuance): Refusal | null {
  const { subject } = input.terms;
  if (typeof subject === 'object' && 'account' in subject && input.subjectAccountOwner !== input.grantor) return notAuthorised(`account ${subject.account}`);
  if (typeof subject === 'object' && 'identity' in subject && input.grantor !== subject.identity && input.grantor !== input.principals.identities) {
    return notAuthorised(`identity ${subject.identity}`);
  }
  return null;
}

/**
 * The identity whose accounts a grant reaches: the grantor at the root of its chain, or
 * the identity an `{identity}` subject names (whose accounts it opens). Held grants are
 * indexed and bounded per holder and this identity (model/keys.ts).
 */
export function overIdentity(terms: GrantTerms, rootGrantor: IdentityId): IdentityId {
  return typeof terms.subject === 'object' && 'identity' in terms.subject ? terms.subject.identity : rootGrantor;
}

// ---------------------------------------------------------------------------------
// Use

/** One use of authority, as the kernel sees it when deciding (`asset` null only for open_account). */
export interface GrantUse {
  readonly principal: IdentityId;
  readonly op: GrantOp;
  readonly account: AccountId;
  readonly accountOwner: IdentityId;
  readonly accountCustody: Custody;
  readonly accountKind: AccountKind;
  readonly asset: AssetSymbol | null;
  readonly counterparty: AccountId | null;
  readonly amountMinor: bigint;
  readonly atMs: number;
}

/**
 * Past uses of one windowed grant, oldest first, times never decreasing, at most
 * grantWindowUsesMax. Entries at or before `atMs - length` are pruned at each use.
 */
export interface WindowUsage {
  readonly uses: readonly { readonly atMs: number; readonly amountMinor: bigint }[];
}
export const emptyWindowUsage: WindowUsage = Object.freeze({ uses: Object.freeze([]) });

export function encodeWindowUsage(usage: WindowUsage): string {
  return JSON.stringify(usage.uses.map((u) => [u.atMs, u.amountMinor.toString()]));
}

export function decodeWindowUsage(text: string): WindowUsage {
  const what = 'grant window usage';
  const rows = parsed(text, what);
  if (!Array.isArray(rows) || rows.length > grantWindowUsesMax) damaged(what, `is not a list of at most ${grantWindowUsesMax} uses`);
  return {
    uses: rows.map((row: unknown) => {
      if (!Array.isArray(row) || row.length !== 2 || typeof row[0] !== 'number' || !Number.isSafeInteger(row[0])) damaged(what, 'a use is not [time, amount]');
      return { atMs: row[0] as number, amountMinor: decimalText(row[1], 'amount', what) };
    }),
  };
}

export type UseDecision =
  | {
      readonly ok: true;
      readonly grant: GrantId;
      readonly usage: ReadonlyMap<GrantId, WindowUsage>;
      /** Per grant of the chain with a per-operation bound: what the operation has moved under it in `use.asset`, this use included. */
      readonly moved: ReadonlyMap<GrantId, bigint>;
    }
  | { readonly ok: false; readonly refusal: Refusal };

function subjectCovers(subject: GrantSubject, use: GrantUse): boolean {
  if (subject === 'delegated_accounts') return underOperatorCustody({ custody: use.accountCustody });
  if ('account' in subject) return subject.account === use.account;
  if ('asset' in subject) return subject.asset === use.asset;
  return subject.identity === use.accountOwner;
}

/** Why `grant`'s terms do not cover `use`, or null. `rootGrantor` owns what the chain may touch. */
function termsRefusal(grant: Grant, use: GrantUse, rootGrantor: IdentityId): Refusal | null {
  const t = grant.terms;
  if (t.expiresAtMs !== null && use.atMs >= t.expiresAtMs) return notAuthorised(`the operation: grant ${grant.id} has expired`);
  if (!t.ops.includes(use.op)) return notAuthorised(`operation ${use.op}`);
  const opensAccount = typeof t.subject === 'object' && 'identity' in t.subject;
  if (t.subject === 'delegated_accounts' && !underOperatorCustody({ custody: use.accountCustody })) {
    return notAuthorised(`account ${use.account}: owned custody: a grant over delegated accounts cannot ${use.op} on it`);
  }
  if (!subjectCovers(t.subject, use) || (!opensAccount && use.accountOwner !== rootGrantor)) return notAuthorised(`account ${use.account}`);
  if (t.kind === 'issuance' && use.accountKind !== 'treasury') return notAuthorised(`account ${use.account}: issuance is out of treasury accounts`);
  // CONTRACT 5: value leaves a treasury only under an issuance grant, whoever gave the other kind.
  if (t.kind !== 'issuance' && use.accountKind === 'treasury') return notAuthorised(`account ${use.account}: value leaves a treasury only under an issuance grant`);
  if (use.asset !== null && t.assets !== null && !t.assets.includes(use.asset)) return notAuthorised(`asset ${use.asset}`);
  // Counterparties limit where value goes; a use that moves none away (release, open_account) has none.
  const movesValue = use.amountMinor > 0n;
  if (movesValue && t.counterparties !== null && (use.counterparty === null || !t.counterparties.includes(use.counterparty))) return notAuthorised(`counterparty ${use.counterparty ?? 'none'}`);
  return null;
}

/**
 * The window usage after `use`, or a refusal. Times are made monotone: a use stamped
 * before the last recorded one counts at that one's time, so no window of `length`
 * ever holds more than `limit` whatever order uses and times come in.
 */
function windowAfter(grant: Grant, window: PerWindow, usage: WindowUsage, use: GrantUse, amountOf: AmountOf): WindowUsage | Refusal {
  const lastAtMs = usage.uses.at(-1)?.atMs ?? use.atMs;
  const atMs = Math.max(use.atMs, lastAtMs);
  const live = usage.uses.filter((u) => u.atMs > atMs - window.lengthMs);
  const usedMinor = live.reduce((sum, u) => sum + u.amountMinor, 0n);
  if (usedMinor + use.amountMinor > window.limitMinor) {
    return refusal('ERR-BoundExceeded', `grant ${grant.id} allows ${amountOf(window.limitMinor)} per ${window.lengthMs} ms; ${amountOf(usedMinor)} used`);
  }
  if (live.length >= grantWindowUsesMax) return refusal('ERR-BoundExceeded', `grant ${grant.id} has recorded ${grantWindowUsesMax} uses in its window`);
  return { uses: [...live, { atMs, amountMinor: use.amountMinor }] };
}

function assertChain(chain: readonly Grant[]): void {
  assert(chain.length >= 1 && chain.length <= grantChainDepthMax, 'a grant chain is a grant and its ancestors, within the depth bound');
  chain.forEach((g, i) => assert(g.terms.parent === (chain[i + 1]?.id ?? null), `grant chain link ${i} names its parent`));
}

/**
 * Whether `use` is covered by `chain` (the grant used first, then each grant it narrows,
 * up to the root). Every grant in the chain must allow the use; a revocation anywhere
 * is ERR-AuthorityRevoked, an expired grant or a use outside the terms ERR-NotAuthorised,
 * a bound passed ERR-BoundExceeded. `per_operation` bounds everything one operation
 * moves under a grant in one asset: `movedOf` says what earlier uses of the same
 * operation moved (0 for a first use). On success, the usage records to write back for
 * the windowed grants of the chain (a use counts toward every ancestor's window too)
 * and the new per-operation totals.
 */
export type AmountOf = (amountMinor: bigint) => string;

export function authorizeUse(
  chain: readonly Grant[],
  use: GrantUse,
  usageOf: (id: GrantId) => WindowUsage,
  movedOf: (id: GrantId) => bigint = () => 0n,
  // How a refusal names an amount of the use's asset (the caller knows its precision).
  amountOf: AmountOf = String,
): UseDecision {
  assertChain(chain);
  assert(use.asset !== null || use.op === 'open_account', 'a use that moves value names its asset');
  const refused = (r: Refusal): UseDecision => ({ ok: false, refusal: r });
  const held = chain[0]!;
  const root = chain[chain.length - 1]!;
  if (held.terms.principal !== use.principal) return refused(notAuthorised(`grant ${held.id}`));
  const revoked = chain.find((g) => g.revokedAtMs !== null);
  if (revoked !== undefined) return refused(refusal('ERR-AuthorityRevoked', `grant ${revoked.id} was revoked`));
  for (const grant of chain) {
    const r = termsRefusal(grant, use, root.grantor);
    if (r !== null) return refused(r);
  }
  const usage = new Map<GrantId, WindowUsage>();
  const moved = new Map<GrantId, bigint>();
  for (const grant of chain) {
    const { perOperationMinor, perWindow } = grant.terms;
    if (perOperationMinor !== null) {
      const totalMinor = movedOf(grant.id) + use.amountMinor;
      if (totalMinor > perOperationMinor) return refused(refusal('ERR-BoundExceeded', `grant ${grant.id} allows at most ${amountOf(perOperationMinor)} per operation`));
      moved.set(grant.id, totalMinor);
    }
    // A use that moves nothing (open_account) takes no room in a window.
    if (perWindow === null || use.amountMinor === 0n) continue;
    const after = windowAfter(grant, perWindow, usageOf(grant.id), use, amountOf);
    if ('error' in after) return refused(after);
    usage.set(grant.id, after);
  }
  return { ok: true, grant: held.id, usage, moved };
}

// ---------------------------------------------------------------------------------
// Revocation

/** The grantor, the holder or the operator may revoke a grant (CONTRACT 5). */
export function mayRevoke(grant: Grant, principal: IdentityId, principals: Principals): boolean {
  return principal === grant.grantor || principal === grant.terms.principal || principal === principals.operator;
}

/**
 * Whether a credential scoped to `scope` may act on `grant` at all (narrow, revoke,
 * list, use): only a grant over one named account within the scope. Unscoped: any.
 */
export function grantWithinScope(grant: { readonly terms: Pick<GrantTerms, 'subject'> }, scope: readonly AccountId[] | null | undefined): boolean {
  if (scope === undefined || scope === null) return true;
  const { subject } = grant.terms;
  return typeof subject === 'object' && 'account' in subject && scope.includes(subject.account);
}

/**
 * `root` and every grant narrowed from it, directly or not, breadth first, from the
 * parent → children index. Grants already revoked are still walked (their children may
 * have been given before), and the caller stamps `revokedAtMs` on those without one.
 */
export function revocationSet(root: GrantId, childrenOf: (id: GrantId) => readonly GrantId[]): GrantId[] {
  const set: GrantId[] = [root];
  for (let i = 0; i < set.length; i += 1) {
    const children = childrenOf(set[i]!);
    assert(children.length <= grantChildrenMax, 'children of one grant within their bound');
    set.push(...children);
    assert(set.length <= grantRevocationSetMax, 'a revocation within its bound (depth and children are bounded)');
  }
  return set;
}

/** Grants to rewrite for a revocation at `atMs`: those of the set not revoked yet. */
export function revoke(grants: readonly Grant[], atMs: number): Grant[] {
  return grants.filter((g) => g.revokedAtMs === null).map((g) => ({ ...g, revokedAtMs: atMs }));
}
