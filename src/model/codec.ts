/**
 * Record encodings (the keys they are stored under: keys.ts). Records are JSON with
 * bigint written as decimal text, field by field (no tagging that a client string
 * could imitate). A decoded record is checked before the kernel trusts it.
 */
import { fail } from '../assert.js';
import { builtInPrincipals } from '../auth/authority.js';
import { Refused } from '../errors.js';
import { grantTermsView, parseGrantTerms } from '../auth/grants.js';
import { type CustodyCommand, type GrantKind, type ProposalCommand, custodyCommandTypes } from './model.js';
import { type Json, check, damaged, decimalText, members, parsed, recordJson } from './decode.js';
import { keySpaces, parseSeqHex } from './keys.js';
import { packRef, unpackRef, unpackedHexRef } from './compact-chunk.js';
import { type AccountId, type AssetSymbol, type CredentialId, type GrantId, type IdentityId, idPrefix } from './values.js';
import type {
  Account,
  AccountKind,
  AccountStatus,
  Authority,
  Asset,
  AssetBinding,
  AssetKind,
  AssetStatus,
  AuthorityKind,
  Custody,
  Balance,
  Command,
  Head,
  Hold,
  Identity,
  DepositFact,
  Direction,
  Layer,
  Leg,
  SettleBlock,
  Operation,
  OperationResult,
  OperationState,
  Posting,
  PostingKind,
  PostingStatus,
} from './model.js';

// ---- bigint-bearing records ----

/** An amount inside a stored operation or journal entry: decimal text, or the record is damaged. */
const big = (v: unknown): bigint => decimalText(v, 'an amount', 'operation or journal entry');


export function encodeBalance(b: Balance): Json {
  return { a: b.available.toString(), r: b.reserved.toString(), e: b.encumbered.toString() };
}
export function decodeBalance(j: Json): Balance {
  return { available: check.decimal(j, 'a', 'balance'), reserved: check.decimal(j, 'r', 'balance'), encumbered: check.decimal(j, 'e', 'balance') };
}
/** The stored text of a balance: JSON.stringify(encodeBalance(b)), written out (decimal text needs no escaping). */
export const encodeBalanceText = (b: Balance): string => `{"a":"${b.available}","r":"${b.reserved}","e":"${b.encumbered}"}`;
/** A stored balance (`bal/`, `tb/`) from its text. */
export const decodeBalanceText = (text: string): Balance => decodeBalance(recordJson(text, 'balance'));

/**
 * An account record (`acct/<id>`). Store layout 7 writes it as a tuple, its id left to the
 * key: `[owner, kind, custody, status, openedAtMs, epoch, {asset: limit, …}]`, the
 * enumerations as their index in the lists below (the stored format, never to be reordered).
 * An account with recovery mechanisms or custody changes, and every account in layouts up
 * to 6, is the Account as a JSON object (bigint as decimal text), read as it stands.
 */
export function encodeAccount(a: Account): string {
  const limits: Record<string, string> = {};
  for (const [k, v] of Object.entries(a.treasuryLimits)) limits[k] = v.toString();
  if (a.mechanisms !== undefined || a.changes !== undefined) return JSON.stringify({ ...a, treasuryLimits: limits });
  return `[${JSON.stringify(a.owner)},${positionIn(storedAccountKinds, a.kind)},${positionIn(storedCustodies, a.custody)},${positionIn(storedAccountStatuses, a.status)},${a.openedAtMs},${a.epoch},${JSON.stringify(limits)}]`;
}
// The values a stored record's enumerated fields may hold.
const accountKinds = members<AccountKind>({ customer: true, treasury: true });
const custodies = members<Custody>({ delegated: true, owned: true });
const accountStatuses = members<AccountStatus>({ active: true, frozen: true, closed: true });
const assetKinds = members<AssetKind>({ fiat: true, stable: true, native: true, other: true });
const assetStatuses = members<AssetStatus>({ active: true, deprecated: true });
const assetBindings = members<AssetBinding>({ book_only: true, binding: true, bound: true });
// An account tuple's enumerations, by position.
const storedAccountKinds: readonly AccountKind[] = ['customer', 'treasury'];
const storedCustodies: readonly Custody[] = ['delegated', 'owned'];
const storedAccountStatuses: readonly AccountStatus[] = ['active', 'frozen', 'closed'];
const accountMembers = ['owner', 'kind', 'custody', 'status', 'openedAtMs', 'epoch', 'treasuryLimits'] as const;

/** The account stored under `key` (`acct/<id>`), in either form; a record whose id is not its key's is damaged. */
export function decodeAccount(text: string, key: string): Account {
  const what = 'account';
  const id = key.slice(keySpaces.account.length);
  if (!key.startsWith(keySpaces.account) || id === '') damaged(what, 'is not under an account key');
  if (text.charCodeAt(0) === 91 /* [ */) {
    const j = tupleRecord(parsed(text, what), accountMembers, what);
    return {
      id: id as Account['id'],
      owner: check.string(j, 'owner', what) as Account['owner'],
      kind: indexed(j, 'kind', storedAccountKinds, what),
      custody: indexed(j, 'custody', storedCustodies, what),
      status: indexed(j, 'status', storedAccountStatuses, what),
      openedAtMs: check.integer(j, 'openedAtMs', what),
      epoch: check.integer(j, 'epoch', what),
      treasuryLimits: check.decimals(j, 'treasuryLimits', what),
    };
  }
  const j = recordJson(text, what);
  if (check.string(j, 'id', what) !== id) damaged(what, 'id is not its key\'s');
  check.string(j, 'owner', what);
  check.oneOf(j, 'kind', accountKinds, what);
  check.oneOf(j, 'custody', custodies, what);
  check.oneOf(j, 'status', accountStatuses, what);
  check.integer(j, 'openedAtMs', what);
  check.integer(j, 'epoch', what);
  return { ...(j as unknown as Account), treasuryLimits: check.decimals(j, 'treasuryLimits', what) };
}

export const encodeAsset = (a: Asset): string => JSON.stringify(a);
export function decodeAsset(text: string): Asset {
  const what = 'asset';
  const j = recordJson(text, what);
  check.string(j, 'id', what);
  check.integer(j, 'code', what);
  check.oneOf(j, 'kind', assetKinds, what);
  check.integer(j, 'precision', what);
  check.oneOf(j, 'status', assetStatuses, what);
  check.oneOf(j, 'binding', assetBindings, what);
  check.nullableString(j, 'location', what);
  return j as unknown as Asset;
}
/**
 * An identity record (`id/<id>`). Store layout 7 writes it as `[createdAtMs, [account, …]]`, its
 * id left to the key; one that counts closed accounts or is restricted, and every identity in
 * layouts up to 6, is the Identity as a JSON object, read as it stands.
 */
export const encodeIdentity = (i: Identity): string =>
  i.closedAccounts === undefined && i.restricted === undefined ? `[${i.createdAtMs},${JSON.stringify(i.accounts)}]` : JSON.stringify(i);
const identityMembers = ['createdAtMs', 'accounts'] as const;
/** The identity stored under `key` (`id/<id>`), in either form; a record whose id is not its key's is damaged. */
export function decodeIdentity(text: string, key: string): Identity {
  const what = 'identity';
  const id = key.slice(keySpaces.identity.length);
  if (!key.startsWith(keySpaces.identity) || id === '') damaged(what, 'is not under an identity key');
  if (text.charCodeAt(0) === 91 /* [ */) {
    const j = tupleRecord(parsed(text, what), identityMembers, what);
    return { id: id as Identity['id'], createdAtMs: check.integer(j, 'createdAtMs', what), accounts: check.strings(j, 'accounts', what) as Identity['accounts'] };
  }
  const j = recordJson(text, what);
  if (check.string(j, 'id', what) !== id) damaged(what, 'id is not its key\'s');
  check.integer(j, 'createdAtMs', what);
  check.strings(j, 'accounts', what);
  if (j.closedAccounts !== undefined) check.integer(j, 'closedAccounts', what);
  return j as unknown as Identity;
}
export const encodeHead = (h: Head): string => JSON.stringify(h);
export function decodeHead(text: string): Head {
  const what = 'head';
  const j = recordJson(text, what);
  for (const name of ['decidedCseq', 'postingSeq', 'eventSeq', 'lastAtMs', 'accounts']) check.integer(j, name, what);
  if (j.auditSeq !== undefined) check.integer(j, 'auditSeq', what);
  return j as unknown as Head;
}

/**
 * An authorities list's text in one encoding, kept for the next list equal to it: each
 * decision makes its own list, mostly of one actor's authority, shared by its entries.
 */
class AuthoritiesText {
  private last: readonly Authority[] = [];
  private lastText: string | null = null;
  constructor(private readonly encode: (a: Authority) => string) {}

  of(list: readonly Authority[]): string {
    if (this.lastText === null || !sameAuthorities(list, this.last)) this.lastText = `[${list.map(this.encode).join(',')}]`;
    this.last = list;
    return this.lastText;
  }
}
function sameAuthorities(a: readonly Authority[], b: readonly Authority[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.credential !== y.credential || x.grant !== y.grant || x.kind !== y.kind || x.onBehalfOf !== y.onBehalfOf || x.principal !== y.principal) return false;
  }
  return true;
}

const leafAuthorities = new AuthoritiesText(authorityLeaf);

/** An authority as a leaf member: every member present, in canonical order. */
function authorityLeaf(a: Authority): string {
  const str = JSON.stringify;
  return `{"credential":${str(a.credential)},"grant":${str(a.grant)},"kind":${str(a.kind)},"on_behalf_of":${str(a.onBehalfOf)},"principal":${str(a.principal)}}`;
}

/**
 * A journal entry's leaf bytes (CONTRACT 9): the canonical JSON of {seq, operation,
 * account, asset, balance, direction, amount, kind, status, at, counterparty,
 * authorities, after}, members in UTF-16 order, built directly as text (a property
 * test pins it to a generic canonical encoder). Made when the journal is read (store
 * layout 6 stores each entry compactly: JournalChunk); layouts 2-5 stored these bytes.
 * The authorities of an operation are shared by its entries and encoded once.
 */
export function encodeLeaf(p: Posting): string {
  const authorities = leafAuthorities.of(p.authorities);
  const str = JSON.stringify;
  // Joined, not concatenated: one flat string (a template makes a tree of ~30 parts,
  // flattened again by whatever reads it: the hash, a disclosure's JSON).
  return [
    '{"account":', str(p.account), ',"after":{"available":"', decimal(p.after.available), '","encumbered":"', decimal(p.after.encumbered), '","reserved":"', decimal(p.after.reserved),
    '"},"amount":"', decimal(p.amountMinor), '","asset":', str(p.asset), ',"at":', p.atMs, ',"authorities":', authorities, ',"balance":"', p.layer,
    '","counterparty":', orNull(p.counterparty), ',"direction":"', p.direction, '","kind":"', p.kind,
    '","operation":', str(p.operation), ',"seq":', p.seq, ',"status":"', p.status, '"}',
  ].join('');
}

/** Decimal text of an amount; zero (most reserved and encumbered layers) without making a string. */
const decimal = (v: bigint): string => (v === 0n ? '0' : v.toString());

// The values a journal entry's enumerated fields may hold.
const directions = members<Direction>({ debit: true, credit: true });
const layers = members<Layer>({ available: true, reserved: true, encumbered: true });
const postingKinds = members<PostingKind>({ opening: true, transfer: true, reserve: true, capture: true, release: true, expiry: true, recovery: true, deposit: true, withdrawal: true });
const postingStatuses = members<PostingStatus>({ held: true, completed: true, returned: true, reversed: true, opening: true });
const authorityKinds = members<AuthorityKind>({ owner: true, delegated: true, operator: true, issuance: true, recovery: true });

function decodeAuthority(a: Json, what: string): Authority {
  return {
    credential: check.string(a, 'credential', what) as Authority['credential'],
    grant: check.nullableString(a, 'grant', what) as Authority['grant'],
    kind: check.oneOf(a, 'kind', authorityKinds, what),
    onBehalfOf: check.nullableString(a, 'on_behalf_of', what) as Authority['onBehalfOf'],
    principal: check.string(a, 'principal', what) as Authority['principal'],
  };
}

/** A posting from its leaf bytes; the leaf leaves out the operation's reference, given apart. */
export function decodeLeaf(text: string, reference: Posting['reference']): Posting {
  const what = 'journal entry';
  const j = recordJson(text, what);
  const after = check.object(j, 'after', what);
  return {
    seq: check.integer(j, 'seq', what),
    atMs: check.integer(j, 'at', what),
    account: check.string(j, 'account', what) as Posting['account'],
    asset: check.string(j, 'asset', what) as Posting['asset'],
    amountMinor: check.decimal(j, 'amount', what),
    direction: check.oneOf(j, 'direction', directions, what),
    layer: check.oneOf(j, 'balance', layers, what),
    kind: check.oneOf(j, 'kind', postingKinds, what),
    status: check.oneOf(j, 'status', postingStatuses, what),
    operation: check.string(j, 'operation', what),
    counterparty: check.nullableString(j, 'counterparty', what) as Posting['counterparty'],
    authorities: check.objects(j, 'authorities', what).map((a) => decodeAuthority(a, what)),
    reference,
    after: { available: check.decimal(after, 'available', what), reserved: check.decimal(after, 'reserved', what), encumbered: check.decimal(after, 'encumbered', what) },
  };
}

/**
 * An account's index entry (`aa/<account>/<asset>/<seq>`, store layout 4) carries the
 * posting, so statements and movements read it where they seek, in a compact form: what
 * the key does not hold, as one JSON array. Store layout 7 writes
 * `[at, code, amount, operation, counterparty, [authority, …], available, reserved, encumbered, reference]`:
 * bigint as decimal text; direction, balance, kind and status in one number, `code` =
 * direction + 2 × (balance + 3 × (kind + 9 × status)), each its index in the lists below; the
 * operation's reference packed (compact-chunk.ts packRef); the counterparty and each authority
 * as the compact operation form writes them (idText, authorityText: ids without their usual
 * prefix); the members after `available` left out from the last one at its default ("0", "0",
 * null) on. Layouts 4-6 wrote (and layout 7 reads) `[at, amount, direction, balance, kind,
 * status, operation, counterparty, [[credential, grant, kind, on_behalf_of, principal], …],
 * reference, available, reserved, encumbered]`: the second member, a number or a text, tells
 * them apart. Its CONTRACT 9 leaf is encodeLeaf of the decoded posting (the codec property test
 * pins it). Store layout 6's journal chunk holds this text too (JournalChunkText). A genesis opening
 * is written in its own form (encodeIndexedOpening), by genesis and by the moves that rewrite the index.
 */
export function encodeIndexedPosting(p: Posting): string {
  if (p.kind === 'opening' && isGenesisOpening(p)) return encodeIndexedOpening(p.atMs, p.amountMinor, p.direction, p.layer, p.after);
  const code = positionIn(indexedDirections, p.direction) + 2 * (positionIn(indexedLayers, p.layer) + 3 * (positionIn(indexedKinds, p.kind) + 9 * positionIn(indexedStatuses, p.status)));
  const parts: (string | number)[] = [
    '[', p.atMs, ',', code, ',"', decimal(p.amountMinor), '",', packedOperation(p.operation), ',', p.counterparty == null ? 'null' : accountText(p.counterparty), ',',
    postingAuthorities.of(p.authorities), ',"', decimal(p.after.available), '"',
  ];
  const { reserved, encumbered } = p.after;
  if (p.reference != null) parts.push(',"', decimal(reserved), '","', decimal(encumbered), '",', JSON.stringify(p.reference));
  else if (encumbered !== 0n) parts.push(',"', decimal(reserved), '","', decimal(encumbered), '"');
  else if (reserved !== 0n) parts.push(',"', decimal(reserved), '"');
  parts.push(']');
  return parts.join('');
}

// The enumerations of an index entry, by position: the order is the stored format (layout 4), never to be changed.
const indexedDirections: readonly Direction[] = ['debit', 'credit'];
const indexedLayers: readonly Layer[] = ['available', 'reserved', 'encumbered'];
const indexedKinds: readonly PostingKind[] = ['opening', 'transfer', 'reserve', 'capture', 'release', 'expiry', 'recovery', 'deposit', 'withdrawal'];
const indexedStatuses: readonly PostingStatus[] = ['held', 'completed', 'returned', 'reversed', 'opening'];
const indexedAuthorityKinds: readonly AuthorityKind[] = ['owner', 'delegated', 'operator', 'issuance', 'recovery'];
const postingAuthorities = new AuthoritiesText(authorityText);
/** The last operation reference packed and its text: a decision's postings share their operation. */
let lastOperation: string | null = null;
let lastPackedOperation = '';
function packedOperation(operation: string): string {
  if (operation !== lastOperation) {
    lastPackedOperation = JSON.stringify(packRef(operation));
    lastOperation = operation;
  }
  return lastPackedOperation;
}
/** A layout-7 index entry's `code`'s enumerations, by the code. */
interface PostingCode {
  readonly direction: Direction;
  readonly layer: Layer;
  readonly kind: PostingKind;
  readonly status: PostingStatus;
}
const postingCodes: readonly PostingCode[] = indexedStatuses.flatMap((status) =>
  indexedKinds.flatMap((kind) => indexedLayers.flatMap((layer) => indexedDirections.map((direction) => ({ direction, layer, kind, status })))),
);
function positionIn<T>(list: readonly T[], v: T): number {
  const i = list.indexOf(v);
  if (i < 0) fail(`${String(v)} has a place in its stored enumeration`);
  return i;
}
const indexedMembers = ['at', 'amount', 'direction', 'balance', 'kind', 'status', 'operation', 'counterparty', 'authorities', 'reference', 'available', 'reserved', 'encumbered'] as const;
const authorityMembers = ['credential', 'grant', 'kind', 'on_behalf_of', 'principal'] as const;

/**
 * The members of a stored tuple by name, so each is checked like a record's (decode.ts); a tuple of
 * another length is damaged. `required`: how many come first in every tuple (the rest, left out, read as undefined).
 */
function tupleRecord(v: unknown, names: readonly string[], what: string, required = names.length): Json {
  const list = storedList(v, required, names.length, what);
  // A loop, not Object.fromEntries: read for every movement and every compact journal entry's leaf, it was a quarter of the latter's time.
  const record: Json = {};
  for (let i = 0; i < names.length; i++) record[names[i]!] = list[i];
  return record;
}
/** A stored tuple of `required` to `max` members, or the record is damaged. */
function storedList(v: unknown, required: number, max: number, what: string): unknown[] {
  if (!Array.isArray(v) || v.length < required || v.length > max) damaged(what, `is not a list of ${required === max ? '' : `${required} to `}${max} members`);
  return v;
}
function indexed<T>(j: Json, name: string, list: readonly T[], what: string): T {
  const v = list[check.integer(j, name, what)];
  if (v === undefined) damaged(what, `${name} is not one of ${list.length} values`);
  return v;
}

/** The posting of the index entry stored under `key` (the account, asset and position are the key's). */
export function decodeIndexedPosting(key: string, text: string): Posting {
  const what = `account index entry ${key}`;
  const [account, asset, seqText, ...rest] = key.slice(keySpaces.accountAsset.length).split('/');
  if (!key.startsWith(keySpaces.accountAsset) || !account || !asset || !/^[0-9a-f]{16}$/.test(seqText ?? '') || rest.length > 0) damaged(what, 'is not under an index key');
  return indexedPosting(account as Posting['account'], asset as Posting['asset'], parseSeqHex(seqText!), text, what);
}

/**
 * A genesis opening's index entry, store layout 7 (book/genesis.ts writes one per account, and
 * its journal line holds it too): what every opening's posting holds alike (kind and status
 * `opening`, operation `genesis`, no counterparty, genesisOpeningAuthorities, no reference)
 * left out, `[at, amount, direction, balance, available, reserved, encumbered]` as in the
 * full form (encodeIndexedPosting), which layout 6's openings are written in and read as.
 */
export function encodeIndexedOpening(atMs: number, amountMinor: bigint, direction: Direction, layer: Layer, after: Balance): string {
  return `[${atMs},"${decimal(amountMinor)}",${positionIn(indexedDirections, direction)},${positionIn(indexedLayers, layer)},"${decimal(after.available)}","${decimal(after.reserved)}","${decimal(after.encumbered)}"]`;
}
/** The authorities of every genesis opening (one list: the encoders cache a list's text by it). */
export const genesisOpeningAuthorities: readonly Authority[] = [
  { credential: 'did:ledger:cred:genesis' as Authority['credential'], grant: null, kind: 'operator', onBehalfOf: null, principal: builtInPrincipals.operator },
];
/** Whether a posting holds what every genesis opening holds alike (encodeIndexedOpening leaves it out). */
const isGenesisOpening = (p: Posting): boolean =>
  p.status === 'opening' && p.operation === 'genesis' && p.counterparty === null && p.reference === null && sameAuthorities(p.authorities, genesisOpeningAuthorities);
const openingMembers = ['at', 'amount', 'direction', 'balance', 'available', 'reserved', 'encumbered'] as const;

/** The posting of an index entry's compact form `text`, given what the entry's place holds (its account, asset and journal position). */
function indexedPosting(account: Posting['account'], asset: Posting['asset'], seq: number, text: string, what: string): Posting {
  const v = parsed(text, what);
  if (Array.isArray(v) && typeof v[1] === 'number') return storedPosting(account, asset, seq, v, what);
  const opening = Array.isArray(v) && v.length === openingMembers.length;
  const j = tupleRecord(v, opening ? openingMembers : indexedMembers, what);
  return {
    seq,
    atMs: check.integer(j, 'at', what),
    account,
    asset,
    amountMinor: check.decimal(j, 'amount', what),
    direction: indexed(j, 'direction', indexedDirections, what),
    layer: indexed(j, 'balance', indexedLayers, what),
    ...(opening ? openingParts : indexedParts(j, what)),
    after: { available: check.decimal(j, 'available', what), reserved: check.decimal(j, 'reserved', what), encumbered: check.decimal(j, 'encumbered', what) },
  };
}

const postingMembers = ['at', 'code', 'amount', 'operation', 'counterparty', 'authorities', 'available', 'reserved', 'encumbered', 'reference'] as const;
/** The posting of a layout-7 index entry (encodeIndexedPosting), parsed: `v`. */
function storedPosting(account: Posting['account'], asset: Posting['asset'], seq: number, v: unknown[], what: string): Posting {
  const j = tupleRecord(v, postingMembers, what, 7);
  const code = indexed(j, 'code', postingCodes, what);
  const authorities = j.authorities;
  if (!Array.isArray(authorities)) damaged(what, 'authorities is not a list');
  return {
    seq,
    atMs: check.integer(j, 'at', what),
    account,
    asset,
    amountMinor: check.decimal(j, 'amount', what),
    direction: code.direction,
    layer: code.layer,
    kind: code.kind,
    status: code.status,
    operation: unpackRef(check.string(j, 'operation', what), what),
    counterparty: j.counterparty === null ? null : (storedId(j.counterparty, idPrefix.account, 'counterparty', what) as AccountId),
    authorities: authorities.map((a: unknown) => storedAuthority(a, what)),
    reference: j.reference === undefined ? null : (check.nullableString(j, 'reference', what) as Posting['reference']),
    after: {
      available: check.decimal(j, 'available', what),
      reserved: j.reserved === undefined ? 0n : check.decimal(j, 'reserved', what),
      encumbered: j.encumbered === undefined ? 0n : check.decimal(j, 'encumbered', what),
    },
  };
}

/** A posting's members that a genesis opening's entry leaves out. */
type PostingParts = Pick<Posting, 'kind' | 'status' | 'operation' | 'counterparty' | 'authorities' | 'reference'>;
const openingParts: PostingParts = { kind: 'opening', status: 'opening', operation: 'genesis', counterparty: null, authorities: genesisOpeningAuthorities, reference: null };
/** Those members as a full index entry holds them. */
function indexedParts(j: Json, what: string): PostingParts {
  const authorities = j.authorities;
  if (!Array.isArray(authorities)) damaged(what, 'authorities is not a list');
  return {
    kind: indexed(j, 'kind', indexedKinds, what),
    status: indexed(j, 'status', indexedStatuses, what),
    operation: check.string(j, 'operation', what),
    counterparty: check.nullableString(j, 'counterparty', what) as Posting['counterparty'],
    authorities: authorities.map((t: unknown): Authority => {
      const a = tupleRecord(t, authorityMembers, what);
      return {
        credential: check.string(a, 'credential', what) as Authority['credential'],
        grant: check.nullableString(a, 'grant', what) as Authority['grant'],
        kind: indexed(a, 'kind', indexedAuthorityKinds, what),
        onBehalfOf: check.nullableString(a, 'on_behalf_of', what) as Authority['onBehalfOf'],
        principal: check.string(a, 'principal', what) as Authority['principal'],
      };
    }),
    reference: check.nullableString(j, 'reference', what) as Posting['reference'],
  };
}

/**
 * A journal chunk (`j/<first seq>`): consecutive entries, one per line, keyed by the first
 * entry's position. Store layout 6 writes each entry compactly, after a first line
 * `journalChunkMark`: `<account>/<asset>/<index entry>`, the index entry being the account
 * index's compact form of the posting (encodeIndexedPosting: the decider has it already),
 * the entry's position the chunk's first plus its line. Its CONTRACT 9 leaf is made when
 * read: encodeLeaf of the posting decoded (written from the line's text by compactLineLeaf
 * where it can), the bytes layouts 2-5 stored (the codec property
 * test pins them), which wrote the leaves themselves, one per line (the first begins '{'),
 * and are read as they stand.
 */
export const journalChunkMark = '#';

/**
 * A journal chunk being written: each entry's parts kept apart until the chunk is taken
 * and joined once (no string per entry).
 */
export class JournalChunkText {
  private parts: string[] = [journalChunkMark];
  private count = 0;

  /** Entries added since the chunk was last taken. */
  get entries(): number {
    return this.count;
  }

  /** The entry of a posting on `account` in `asset` whose index entry is `indexed`. */
  add(account: string, asset: string, indexed: string): void {
    // The line splits at the first two '/' and the chunk at line breaks: an id or symbol holds neither (keys.ts).
    if (account.includes('/') || account.includes('\n') || asset.includes('/') || asset.includes('\n')) fail(`account ${account} and asset ${asset} name a journal entry without '/' or a line break`);
    this.parts.push('\n', account, '/', asset, '/', indexed);
    this.count++;
  }

  /** The chunk's stored text; the next entry added starts a new chunk. */
  take(): string {
    if (this.count === 0) fail('a journal chunk holds at least one entry');
    const text = this.parts.join('');
    this.parts = [journalChunkMark];
    this.count = 0;
    return text;
  }
}

/** The stored text of a chunk of the postings `ps` (consecutive entries), for writers that hold postings, not their index entries (benches, tests). */
export function encodeJournalChunk(ps: readonly Posting[]): string {
  const chunk = new JournalChunkText();
  for (const p of ps) chunk.add(p.account, p.asset, encodeIndexedPosting(p));
  return chunk.take();
}

/** A stored journal chunk, read: its entries, each one's leaf made when asked for. */
export class JournalChunk {
  private readonly lines: string[];
  /** The line of the first entry: 1 after the mark of the compact form, 0 in layouts 2-5's chunk of leaves. */
  private readonly firstLine: number;

  /** `text` stored under `j/<firstSeq>`. */
  constructor(text: string, private readonly firstSeq: number) {
    this.lines = text.split('\n');
    this.firstLine = firstEntryLine(this.lines);
    if (this.firstLine === 0 && !text.startsWith('{')) damaged(`journal chunk ${firstSeq}`, 'is in no form this ledgerd reads');
    if (this.entries === 0) damaged(`journal chunk ${firstSeq}`, 'holds no entry');
  }

  get entries(): number {
    return this.lines.length - this.firstLine;
  }

  /** The leaf bytes (as text) of the chunk's `i`-th entry, from 0. */
  leaf(i: number): string {
    const line = this.lines[this.firstLine + i];
    if (line === undefined) fail(`journal chunk ${this.firstSeq} holds an entry ${i}`);
    if (this.firstLine === 0) return line;
    const seq = this.firstSeq + i;
    return compactLineLeaf(line, seq) ?? encodeLeaf(journalLinePosting(line, seq));
  }
}

/** The line of a stored chunk's first entry: 1 after the mark of the compact form, 0 in layouts 2-5's chunk of leaves. */
const firstEntryLine = (lines: readonly string[]): number => (lines[0] === journalChunkMark ? 1 : 0);

/** How many entries a stored chunk holds, whichever its form, without reading them. */
export function journalChunkEntries(text: string): number {
  const lines = text.split('\n');
  return lines.length - firstEntryLine(lines);
}

/** The leaves of every entry of a stored chunk: `text` stored under `j/<firstSeq>`. */
export function journalChunkLeaves(text: string, firstSeq: number): string[] {
  const chunk = new JournalChunk(text, firstSeq);
  return Array.from({ length: chunk.entries }, (_, i) => chunk.leaf(i));
}

/** The posting of a compact journal line (its reference, which no leaf holds, as the index entry holds it). */
function journalLinePosting(line: string, seq: number): Posting {
  const what = `journal entry ${seq}`;
  const { accountEnd, assetEnd } = linePlace(line);
  if (accountEnd <= 0 || assetEnd <= accountEnd + 1) damaged(what, 'names no account and asset');
  return indexedPosting(line.slice(0, accountEnd) as Posting['account'], line.slice(accountEnd + 1, assetEnd) as Posting['asset'], seq, line.slice(assetEnd + 1), what);
}

/** Where a compact journal line's account and asset end: its first and second '/' (-1 where there is none). */
function linePlace(line: string): { readonly accountEnd: number; readonly assetEnd: number } {
  const accountEnd = line.indexOf('/');
  return { accountEnd, assetEnd: accountEnd < 0 ? -1 : line.indexOf('/', accountEnd + 1) };
}

/**
 * The leaf of a compact journal line made from its text: amounts copied as the decimal text
 * they are stored as, enumerations named, strings copied with their quotes (no JSON.parse, no
 * bigint, no posting: a checkpoint makes every new entry's leaf). Only a line exactly as
 * encodeIndexedPosting or encodeIndexedOpening writes it, whose texts JSON.stringify would write as they stand (no
 * escape, control character or lone surrogate), is read here; any other gives null, and the
 * checked decoder makes its leaf or refuses it as damaged (the codec tests pin both to
 * encodeLeaf of the decoded posting, damaged lines too).
 */
export function compactLineLeaf(line: string, seq: number): string | null {
  const { accountEnd, assetEnd } = linePlace(line);
  if (accountEnd <= 0 || assetEnd <= accountEnd + 1 || !plainText(line, 0, accountEnd) || !plainText(line, accountEnd + 1, assetEnd)) return null;
  if (line.charCodeAt(assetEnd + 1) !== 91 /* [ */) return null;
  const atStart = assetEnd + 2;
  const atEnd = integerEnd(line, atStart);
  // Layout 7's form (encodeIndexedPosting): a number follows `at`.
  if (isDigit(line.charCodeAt(atEnd + 1))) return storedLineLeaf(line, seq, accountEnd, assetEnd, atStart, atEnd);
  const amountStart = comma(line, atEnd);
  const amountEnd = decimalEnd(line, amountStart);
  const enums = comma(line, amountEnd);
  if (enums < 0) return null;
  const direction = indexedDirections[line.charCodeAt(enums) - 48];
  const layer = indexedLayers[line.charCodeAt(enums + 2) - 48];
  if (direction === undefined || layer === undefined || line.charCodeAt(enums + 1) !== 44 || line.charCodeAt(enums + 3) !== 44) return null;
  const leaf = { line, seq, accountEnd, assetEnd, atStart, atEnd, amountStart, amountEnd, direction, layer };
  // A genesis opening's line (encodeIndexedOpening): its balances follow at once.
  if (line.charCodeAt(enums + 4) === 34 /* " */) return lineLeaf(leaf, openingLeafParts, enums + 4);
  const kind = indexedKinds[line.charCodeAt(enums + 4) - 48];
  const status = indexedStatuses[line.charCodeAt(enums + 6) - 48];
  if (kind === undefined || status === undefined || line.charCodeAt(enums + 5) !== 44 || line.charCodeAt(enums + 7) !== 44) return null;
  const operationStart = enums + 8;
  const operationEnd = stringEnd(line, operationStart);
  const counterpartyStart = comma(line, operationEnd);
  const counterpartyEnd = nullableStringEnd(line, counterpartyStart);
  const authoritiesEnd = layout6Authorities.end(line, comma(line, counterpartyEnd));
  // The reference: no leaf holds it, but the decoder checks it.
  const availableStart = comma(line, nullableStringEnd(line, comma(line, authoritiesEnd)));
  if (availableStart < 0) return null;
  return lineLeaf(leaf, { authorities: layout6Authorities.leafText, counterparty: line.slice(counterpartyStart, counterpartyEnd), kind, operation: line.slice(operationStart, operationEnd), status }, availableStart);
}

/** What a compact line's leaf takes from the line's text, found by compactLineLeaf. */
interface LinePlaces {
  readonly line: string;
  readonly seq: number;
  readonly accountEnd: number;
  readonly assetEnd: number;
  readonly atStart: number;
  readonly atEnd: number;
  readonly amountStart: number;
  readonly amountEnd: number;
  readonly direction: Direction;
  readonly layer: Layer;
}

/** The leaf of a layout-7 line (encodeIndexedPosting), its account, asset and `at` where compactLineLeaf found them; null if it is not plainly written. */
function storedLineLeaf(line: string, seq: number, accountEnd: number, assetEnd: number, atStart: number, atEnd: number): string | null {
  const codeStart = comma(line, atEnd);
  const codeEnd = integerEnd(line, codeStart);
  const code = codeEnd < 0 ? undefined : postingCodes[Number(line.slice(codeStart, codeEnd))];
  if (code === undefined) return null;
  const amountStart = comma(line, codeEnd);
  const amountEnd = decimalEnd(line, amountStart);
  const operationStart = comma(line, amountEnd);
  const operationEnd = stringEnd(line, operationStart);
  if (operationEnd < 0) return null;
  const operation = refLeaf(line.slice(operationStart + 1, operationEnd - 1));
  const counterpartyStart = comma(line, operationEnd);
  const counterpartyEnd = nullableIdEnd(line, counterpartyStart);
  const authoritiesEnd = storedAuthorities.end(line, comma(line, counterpartyEnd));
  const availableStart = comma(line, authoritiesEnd);
  const availableEnd = decimalEnd(line, availableStart);
  if (operation === null || availableEnd < 0) return null;
  // The members left out at their default; the reference, which no leaf holds, checked as the decoder does.
  let end = availableEnd;
  let reserved = '"0"';
  let encumbered = '"0"';
  if (line.charCodeAt(end) === 44) {
    const reservedEnd = decimalEnd(line, end + 1);
    reserved = line.slice(end + 1, reservedEnd);
    end = reservedEnd;
    if (end >= 0 && line.charCodeAt(end) === 44) {
      const encumberedEnd = decimalEnd(line, end + 1);
      encumbered = line.slice(end + 1, encumberedEnd);
      end = encumberedEnd;
      if (end >= 0 && line.charCodeAt(end) === 44) end = nullableStringEnd(line, end + 1);
    }
  }
  if (end < 0 || line.charCodeAt(end) !== 93 /* ] */ || end + 1 !== line.length) return null;
  const places = { line, seq, accountEnd, assetEnd, atStart, atEnd, amountStart, amountEnd, direction: code.direction, layer: code.layer };
  const parts = { authorities: storedAuthorities.leafText, counterparty: idLeaf(line, counterpartyStart, counterpartyEnd, idPrefix.account), kind: code.kind, operation, status: code.status };
  return leafOf(places, parts, line.slice(availableStart, availableEnd), reserved, encumbered);
}

/** The leaf text (quoted) of an operation's stored reference `text` (packRef's, plainly written); null if it is packed otherwise. */
function refLeaf(text: string): string | null {
  if (!text.startsWith('~')) return `"${text}"`;
  if (text.startsWith('~~')) return `"${text.slice(1)}"`;
  const ref = unpackedHexRef(text.slice(1));
  return ref === null ? null : `"${ref}"`;
}

/** Past a stored identifier (idText's, plainly written: the part after its prefix, or one whole in a list of one). */
function idEnd(s: string, at: number): number {
  if (at < 0 || s.charCodeAt(at) !== 91 /* [ */) return stringEnd(s, at);
  const end = stringEnd(s, at + 1);
  return end >= 0 && s.charCodeAt(end) === 93 ? end + 1 : -1;
}
const nullableIdEnd = (s: string, at: number): number => (at >= 0 && s.startsWith('null', at) ? at + 4 : idEnd(s, at));
/** The leaf text of the stored identifier s[start, end) (idEnd's or null) of the kind whose prefix is `prefix`. */
function idLeaf(s: string, start: number, end: number, prefix: string): string {
  const first = s.charCodeAt(start);
  if (first === 110 /* n */) return 'null';
  return first === 91 ? s.slice(start + 1, end - 1) : `"${prefix}${s.slice(start + 1, end)}`;
}
/** A leaf's members that a full line writes and a genesis opening's line leaves out, as leaf text (strings with their quotes). */
interface LeafParts {
  readonly authorities: string;
  readonly counterparty: string;
  readonly kind: PostingKind;
  readonly operation: string;
  readonly status: PostingStatus;
}
const openingLeafParts: LeafParts = { authorities: `[${genesisOpeningAuthorities.map(authorityLeaf).join(',')}]`, counterparty: 'null', kind: 'opening', operation: '"genesis"', status: 'opening' };

/** The leaf of a compact line whose balances start at `availableStart` and end it; null if they are not plainly written. */
function lineLeaf(p: LinePlaces, parts: LeafParts, availableStart: number): string | null {
  const { line } = p;
  const availableEnd = decimalEnd(line, availableStart);
  const reservedStart = comma(line, availableEnd);
  const reservedEnd = decimalEnd(line, reservedStart);
  const encumberedStart = comma(line, reservedEnd);
  const encumberedEnd = decimalEnd(line, encumberedStart);
  if (encumberedEnd < 0 || line.charCodeAt(encumberedEnd) !== 93 /* ] */ || encumberedEnd + 1 !== line.length) return null;
  return leafOf(p, parts, line.slice(availableStart, availableEnd), line.slice(reservedStart, reservedEnd), line.slice(encumberedStart, encumberedEnd));
}

/** The leaf of a compact line from its places and parts and its balances' text (quoted decimals). */
function leafOf(p: LinePlaces, parts: LeafParts, available: string, reserved: string, encumbered: string): string {
  const { line } = p;
  return [
    '{"account":"', line.slice(0, p.accountEnd), '","after":{"available":', available, ',"encumbered":', encumbered,
    ',"reserved":', reserved, '},"amount":', line.slice(p.amountStart, p.amountEnd), ',"asset":"', line.slice(p.accountEnd + 1, p.assetEnd),
    '","at":', line.slice(p.atStart, p.atEnd), ',"authorities":', parts.authorities, ',"balance":"', p.layer, '","counterparty":', parts.counterparty,
    ',"direction":"', p.direction, '","kind":"', parts.kind, '","operation":', parts.operation, ',"seq":', p.seq, ',"status":"', parts.status, '"}',
  ].join('');
}

/**
 * A compact line's authorities read as their leaf text, the last list's kept: a decision's
 * entries share one list (written once: AuthoritiesText), and the same text reads the same.
 */
class LineAuthorities {
  private lastCompact = '';
  /** The leaf text of the list last read. */
  leafText = '';

  /** `item` reads one authority at its '[', pushes its leaf text and gives the index after its ']' (-1 if it is not plainly written). */
  constructor(private readonly item: (line: string, at: number, leaves: string[]) => number) {}

  /** The end of the authorities list at `at` in `line`, its leaf text left in leafText; -1 if it is not plainly written. */
  end(line: string, at: number): number {
    if (at < 0) return -1;
    if (this.lastCompact !== '' && line.startsWith(this.lastCompact, at)) return at + this.lastCompact.length;
    if (line.charCodeAt(at) !== 91 /* [ */) return -1;
    const leaves: string[] = [];
    let p = at + 1;
    if (line.charCodeAt(p) !== 93 /* ] */) {
      for (;;) {
        if (line.charCodeAt(p) !== 91) return -1;
        p = this.item(line, p, leaves);
        if (p < 0) return -1;
        if (line.charCodeAt(p) !== 44) break;
        p++;
      }
      if (line.charCodeAt(p) !== 93) return -1;
    }
    this.lastCompact = line.slice(at, p + 1);
    this.leafText = `[${leaves.join(',')}]`;
    return p + 1;
  }
}

/** Layouts 4-6's authority: `[credential, grant, kind, on_behalf_of, principal]`. */
const layout6Authorities = new LineAuthorities((line, at, leaves) => {
  const credentialStart = at + 1;
  const credentialEnd = stringEnd(line, credentialStart);
  const grantStart = comma(line, credentialEnd);
  const grantEnd = nullableStringEnd(line, grantStart);
  const kindAt = comma(line, grantEnd);
  const kind = kindAt < 0 ? undefined : indexedAuthorityKinds[line.charCodeAt(kindAt) - 48];
  if (kind === undefined) return -1;
  const onBehalfOfStart = comma(line, kindAt + 1);
  const onBehalfOfEnd = nullableStringEnd(line, onBehalfOfStart);
  const principalStart = comma(line, onBehalfOfEnd);
  const principalEnd = stringEnd(line, principalStart);
  if (principalEnd < 0 || line.charCodeAt(principalEnd) !== 93) return -1;
  leaves.push(
    `{"credential":${line.slice(credentialStart, credentialEnd)},"grant":${line.slice(grantStart, grantEnd)},"kind":"${kind}","on_behalf_of":${line.slice(onBehalfOfStart, onBehalfOfEnd)},"principal":${line.slice(principalStart, principalEnd)}}`,
  );
  return principalEnd + 1;
});

/** Layout 7's authority (authorityText): `[principal, credential, kind, on_behalf_of?, grant?]`, ids after their prefix. */
const storedAuthorities = new LineAuthorities((line, at, leaves) => {
  const principalStart = at + 1;
  const principalEnd = idEnd(line, principalStart);
  const credentialStart = comma(line, principalEnd);
  const credentialEnd = idEnd(line, credentialStart);
  const kindAt = comma(line, credentialEnd);
  const kind = kindAt < 0 ? undefined : indexedAuthorityKinds[line.charCodeAt(kindAt) - 48];
  if (kind === undefined) return -1;
  let p = kindAt + 1;
  let onBehalfOf = 'null';
  let grant = 'null';
  if (line.charCodeAt(p) === 44) {
    const onBehalfOfStart = p + 1;
    p = nullableIdEnd(line, onBehalfOfStart);
    if (p < 0) return -1;
    onBehalfOf = idLeaf(line, onBehalfOfStart, p, idPrefix.identity);
    if (line.charCodeAt(p) === 44) {
      const grantStart = p + 1;
      p = nullableIdEnd(line, grantStart);
      if (p < 0) return -1;
      grant = idLeaf(line, grantStart, p, idPrefix.grant);
    }
  }
  if (line.charCodeAt(p) !== 93) return -1;
  leaves.push(
    `{"credential":${idLeaf(line, credentialStart, credentialEnd, idPrefix.credential)},"grant":${grant},"kind":"${kind}","on_behalf_of":${onBehalfOf},"principal":${idLeaf(line, principalStart, principalEnd, idPrefix.identity)}}`,
  );
  return p + 1;
});

// A compact line's parts, read at an index (each gives the index after it, or -1, and -1 reads as -1).
/** Past the ',' at `at`. */
const comma = (s: string, at: number): number => (at >= 0 && s.charCodeAt(at) === 44 ? at + 1 : -1);
/** Past a safe integer written as JSON.stringify writes it (at most 15 digits: longer ones are left to the decoder). */
function integerEnd(s: string, at: number): number {
  if (at < 0) return -1;
  let p = s.charCodeAt(at) === 45 /* - */ ? at + 1 : at;
  const first = s.charCodeAt(p);
  if (first === 48 /* 0 */) return p === at ? p + 1 : -1;
  if (!(first >= 49 && first <= 57)) return -1;
  const digitsStart = p;
  while (isDigit(s.charCodeAt(p))) p++;
  return p - digitsStart <= 15 ? p : -1;
}
/** Past a quoted decimal as a bigint's toString writes it (no '+', '-0' or leading zero). */
function decimalEnd(s: string, at: number): number {
  if (at < 0 || s.charCodeAt(at) !== 34 /* " */) return -1;
  let p = s.charCodeAt(at + 1) === 45 ? at + 2 : at + 1;
  const first = s.charCodeAt(p);
  if (first === 48) return p === at + 1 && s.charCodeAt(p + 1) === 34 ? p + 2 : -1;
  if (!(first >= 49 && first <= 57)) return -1;
  while (isDigit(s.charCodeAt(p))) p++;
  return s.charCodeAt(p) === 34 ? p + 1 : -1;
}
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
/** Past a quoted string that JSON.stringify of its value writes as it stands. */
function stringEnd(s: string, at: number): number {
  if (at < 0 || s.charCodeAt(at) !== 34) return -1;
  const end = plainEnd(s, at + 1, s.length);
  return s.charCodeAt(end) === 34 ? end + 1 : -1;
}
function nullableStringEnd(s: string, at: number): number {
  if (at >= 0 && s.startsWith('null', at)) return at + 4;
  return stringEnd(s, at);
}
/** Whether s[from, to) is text JSON.stringify writes as it stands between quotes. */
const plainText = (s: string, from: number, to: number): boolean => plainEnd(s, from, to) === to;
/** The first index from `from` (before `to`) of a character JSON.stringify would escape: '"', '\\', a control character, a lone surrogate. */
function plainEnd(s: string, from: number, to: number): number {
  let p = from;
  while (p < to) {
    const c = s.charCodeAt(p);
    if (c === 34 || c === 92 || c < 32) return p;
    if (c >= 0xd800 && c <= 0xdfff) {
      const low = s.charCodeAt(p + 1);
      if (c > 0xdbff || p + 1 >= to || !(low >= 0xdc00 && low <= 0xdfff)) return p;
      p += 2;
    } else p++;
  }
  return p;
}

function encodeLeg(l: Leg): Json {
  return { ...l, amountMinor: l.amountMinor.toString() };
}
function decodeLeg(j: Json): Leg {
  const what = 'operation';
  check.string(j, 'from', what);
  check.string(j, 'to', what);
  check.string(j, 'asset', what);
  return { ...(j as unknown as Leg), amountMinor: check.decimal(j, 'amountMinor', what) };
}

/** Commands with no bigint member (custody's and these): stored as they stand. */
type PlainCommand = CustodyCommand | ProposalCommand | Extract<Command, { type: 'release' | 'create_identity' | 'register_credential' | 'revoke_grant' | 'register_party' | 'set_member_role' | 'remove_member' | 'register_asset' | 'bind_asset' | 'deprecate_asset' }>;
const plainCommandTypes: ReadonlySet<string> = new Set([
  ...custodyCommandTypes,
  ...(['release', 'create_identity', 'register_credential', 'revoke_grant', 'register_party', 'set_member_role', 'remove_member', 'register_asset', 'bind_asset', 'deprecate_asset', 'propose', 'reject_proposal', 'set_approval_policy'] satisfies PlainCommand['type'][]),
]);
const isPlainCommand = (c: Command): c is PlainCommand => plainCommandTypes.has(c.type);

function encodeCommand(c: Command): Json {
  if (isPlainCommand(c)) return { ...c };
  switch (c.type) {
    case 'transfer':
      return { ...c, legs: c.legs.map(encodeLeg) };
    case 'reserve':
      return { ...c, amountMinor: c.amountMinor.toString() };
    case 'capture':
      return { ...c, amountMinor: c.amountMinor === null ? null : c.amountMinor.toString() };
    case 'open_account': {
      const limits: Record<string, string> = {};
      for (const [k, v] of Object.entries(c.treasuryLimits)) limits[k] = v.toString();
      return { ...c, treasuryLimits: limits };
    }
    case 'issue_grant':
      return { ...c, terms: grantTermsView(c.terms) };
    case 'withdraw':
      return { ...c, amountMinor: c.amountMinor.toString() };
    case 'settle':
      return {
        ...c,
        blocks: c.blocks.map((b) => ({
          ...b,
          deposits: b.deposits.map(encodeDeposit),
          instructions: b.instructions.map((i) => ({ ...i, amountMinor: i.amountMinor.toString() })),
        })),
      };
    case 'observe':
      return { ...c, deposit: encodeDeposit(c.deposit) };
  }
}
const encodeDeposit = (d: DepositFact): Json => ({ ...d, amountMinor: d.amountMinor.toString() });
function decodeDeposit(j: Json): DepositFact {
  const what = 'operation';
  check.integer(j, 'seq', what);
  check.string(j, 'digest', what);
  check.string(j, 'location', what);
  check.string(j, 'accountRef', what);
  check.nullableInteger(j, 'height', what);
  return { ...(j as unknown as DepositFact), amountMinor: check.decimal(j, 'amountMinor', what) };
}
function decodeInstruction(j: Json): SettleBlock['instructions'][number] {
  const what = 'operation';
  check.string(j, 'digest', what);
  check.string(j, 'location', what);
  return { ...(j as unknown as SettleBlock['instructions'][number]), amountMinor: check.decimal(j, 'amountMinor', what) };
}
function decodeSettleBlock(j: Json): SettleBlock {
  const what = 'operation';
  check.integer(j, 'height', what);
  check.strings(j, 'expired', what);
  check.objects(j, 'attestations', what);
  return { ...(j as unknown as SettleBlock), deposits: check.objects(j, 'deposits', what).map(decodeDeposit), instructions: check.objects(j, 'instructions', what).map(decodeInstruction) };
}

/** A stored reserve's or withdrawal's account (`payer`), asset and deadline checked, and its amount. */
function debitAmount(j: Json, payer: 'payer' | 'account'): bigint {
  const what = 'operation';
  check.string(j, payer, what);
  check.string(j, 'asset', what);
  check.integer(j, 'deadlineMs', what);
  return check.decimal(j, 'amountMinor', what);
}

/**
 * A stored command: its type must be known, and the fields of the commands that carry
 * amounts are checked as they are decoded (a command with none is stored as it stands).
 */
function decodeCommand(j: Json): Command {
  const what = 'operation';
  const type = check.string(j, 'type', what);
  if (plainCommandTypes.has(type)) return j as unknown as Command;
  switch (type as Exclude<Command['type'], PlainCommand['type']>) {
    case 'transfer':
      check.integer(j, 'deadlineMs', what);
      return { ...(j as unknown as Command & { type: 'transfer' }), legs: check.objects(j, 'legs', what).map(decodeLeg) };
    case 'reserve':
      return { ...(j as unknown as Command & { type: 'reserve' }), amountMinor: debitAmount(j, 'payer') };
    case 'capture':
      check.string(j, 'reservation', what);
      check.string(j, 'to', what);
      return { ...(j as unknown as Command & { type: 'capture' }), amountMinor: j.amountMinor === null ? null : check.decimal(j, 'amountMinor', what) };
    case 'open_account':
      check.string(j, 'owner', what);
      check.oneOf(j, 'kind', accountKinds, what);
      check.oneOf(j, 'custody', custodies, what);
      if (j.acknowledged !== undefined) check.nullableString(j, 'acknowledged', what);
      return { ...(j as unknown as Command & { type: 'open_account' }), treasuryLimits: check.decimals(j, 'treasuryLimits', what) };
    case 'issue_grant': {
      const terms = check.object(j, 'terms', what);
      try {
        return { type: 'issue_grant', terms: parseGrantTerms(terms, check.string(terms, 'kind', what) as GrantKind), justification: check.nullableString(j, 'justification', what) };
      } catch (error) {
        // The edge's parser checks the stored terms (as decodeGrant's): what it refuses is damage here.
        if (error instanceof Refused) damaged(what, `terms do not parse: ${error.refusal.description}`);
        throw error;
      }
    }
    case 'withdraw':
      check.object(j, 'destination', what);
      return { ...(j as unknown as Command & { type: 'withdraw' }), amountMinor: debitAmount(j, 'account') };
    case 'settle':
      check.integer(j, 'finalHeight', what);
      check.integer(j, 'headHeight', what);
      // Absent in settle commands written before withdrawals expired (issue 13).
      if (j.due !== undefined) check.strings(j, 'due', what);
      return { ...(j as unknown as Command & { type: 'settle' }), blocks: check.objects(j, 'blocks', what).map(decodeSettleBlock) };
    case 'observe':
      check.boolean(j, 'final', what);
      return { ...(j as unknown as Command & { type: 'observe' }), deposit: decodeDeposit(check.object(j, 'deposit', what)) };
  }
  damaged(what, `command type ${JSON.stringify(type)} is not known`);
}

function encodeHold(h: Hold | null): Json | null {
  return h === null ? null : { ...h, amountMinor: h.amountMinor.toString() };
}
function decodeHold(j: Json): Hold {
  return { ...(j as unknown as Hold), amountMinor: big(j.amountMinor) };
}

/**
 * An operation as layouts 2-6 stored it (`op/` records kept whole, `cmd/` and `ev/` texts of
 * those layouts; store layout 7 writes encodeOperation's form): the JSON object of the
 * record, what JSON.stringify gives for it (a property test pins it). Written now only for
 * books of those layouts (tests, bench/large-book-build.ts).
 */
export function encodeOperationJson(o: Operation): string {
  const str = JSON.stringify;
  return [
    '{"ref":', str(o.ref), ',"cseq":', o.cseq, ',"command":', str(encodeCommand(o.command)),
    ',"actor":', str(o.actor), ',"scope":', orNull(o.scope ?? null), ',"state":"', o.state,
    '","submittedAtMs":', o.submittedAtMs, ',"decidedAtMs":', o.decidedAtMs === null ? 'null' : String(o.decidedAtMs), ',"clientKey":', str(o.clientKey), ',"clientKeyDerived":', o.clientKeyDerived,
    ',"reference":', orNull(o.reference), ',"result":', orNull(o.result), ',"error":', orNull(o.error), ',"hold":', o.hold === null ? 'null' : str(encodeHold(o.hold)), o.act === undefined ? '' : `,"act":${str(o.act)}`,
    o.approval === undefined ? '' : `,"approval":${str(o.approval)}`, o.unapproved === undefined ? '' : ',"unapproved":true', '}',
  ].join('');
}
/** JSON.stringify of a member most operations leave null, without the call for null. */
const orNull = (v: unknown): string => (v === null ? 'null' : JSON.stringify(v));
const operationStates = members<OperationState>({ Received: true, Reserved: true, Instructed: true, Submitted: true, Completed: true, Rejected: true, Expired: true, Captured: true, Released: true });

/** A stored operation's text, in either form: store layout 7's list (encodeOperation) or layouts 2-6's object (encodeOperationJson). */
export function decodeOperation(text: string): Operation {
  return text.charCodeAt(0) === 91 /* [ */ ? decodeCompactOperation(text) : decodeOperationJson(recordJson(text, 'operation'));
}
/** A stored operation (`op/`, `cmd/`, an event) once parsed: the fields the kernel reads are checked. */
export function decodeOperationJson(j: Json): Operation {
  const what = 'operation';
  check.string(j, 'ref', what);
  check.integer(j, 'cseq', what);
  check.oneOf(j, 'state', operationStates, what);
  check.integer(j, 'submittedAtMs', what);
  check.nullableInteger(j, 'decidedAtMs', what);
  check.string(j, 'clientKey', what);
  check.string(check.object(j, 'actor', what), 'principal', what);
  if (j.act !== undefined) check.string(j, 'act', what);
  if (j.approval !== undefined) {
    const approval = check.object(j, 'approval', what);
    check.string(approval, 'proposal', what);
    check.string(approval, 'approver', what);
  }
  if (j.unapproved !== undefined && j.unapproved !== true) damaged(what, 'unapproved is not true');
  const command = check.object(j, 'command', what);
  return {
    ...(j as unknown as Operation),
    command: decodeCommand(command),
    hold: j.hold === null ? null : decodeHold(check.object(j, 'hold', what)),
  };
}

// ---- operations in store layout 7's compact form ----

/**
 * An operation's state as store layout 7 writes it (in `ev/` and `cmd/` chunks: event-chunk.ts):
 * one JSON list of its members by position, like the account index entry (encodeIndexedPosting):
 * amounts as decimal text, enumerations as their place in the lists below (the order is the
 * stored format, never to be changed), an identifier of a known kind as the part after its
 * prefix (`did:ledger:acct:`, `did:ledger:id:`, `did:ledger:cred:`, `did:ledger:grant:`; one
 * without it is written whole in a list of one), and the members after the seventh left out
 * from the last one at its default (null; flags 0) on:
 *
 *   [ref, cseq, clientKey, submittedAtMs, command, actor, state,
 *    reference, act, decidedAtMs − submittedAtMs, result, error, hold, flags, scope, approval]
 *
 * A transfer is `[0, deadlineMs, [from, to, asset, amount]…]`, a reservation `[1, payer, asset,
 * amount, deadlineMs]`, a capture `[2, reservation, to, amount|null]`, a release `[3, reservation]`;
 * any other command (rare beside these) is layouts 2-6's object. The actor, and a hold's
 * authority, is `[principal, credential, kind, on_behalf_of, grant]` (the last two left out when
 * null); a hold `[payer, asset, amount, deadlineMs, authority?]`; a result holding postings alone
 * is their list; flags: 1 the client key derived, 2 unapproved; an approval `[proposal, approver]`.
 * Its first character '[' tells it from layouts 2-6's object (decodeOperation reads both).
 */
export function encodeOperation(o: Operation): string {
  const str = JSON.stringify;
  const parts: (string | number)[] = [headText(o), ',', positionIn(storedStates, o.state)];
  const flags = (o.clientKeyDerived ? 1 : 0) | (o.unapproved === true ? 2 : 0);
  // `== null`: a record of an older writer read as it stands may lack a member (as its object form left it out).
  const tail = [
    o.reference == null ? null : str(o.reference),
    o.act == null ? null : str(o.act),
    o.decidedAtMs == null ? null : o.decidedAtMs - o.submittedAtMs,
    o.result == null ? null : resultText(o.result),
    o.error == null ? null : str(o.error),
    o.hold == null ? null : holdText(o.hold),
    flags === 0 ? null : flags,
    o.scope == null ? null : `[${o.scope.map(accountText).join(',')}]`,
    o.approval == null ? null : `[${str(o.approval.proposal)},${str(o.approval.approver)}]`,
  ];
  let end = tail.length;
  while (end > 0 && tail[end - 1] === null) end--;
  for (let i = 0; i < end; i++) parts.push(',', tail[i] ?? tailDefaults[i]!);
  parts.push(']');
  // Joined into one flat string: one per operation an intake write or a round writes.
  return parts.join('');
}

/** The text of each member after the seventh at its default. */
const tailDefaults = ['null', 'null', 'null', 'null', 'null', 'null', '0', 'null', 'null'];
// The enumerations of a compact operation, by position (the order is the stored format, layout 7).
const storedStates: readonly OperationState[] = ['Received', 'Reserved', 'Instructed', 'Submitted', 'Completed', 'Rejected', 'Expired', 'Captured', 'Released'];
const commandTag = { transfer: 0, reserve: 1, capture: 2, release: 3 } as const;

/** An identifier of the kind whose prefix is `prefix`: the part after it, or one without it whole in a list of one. */
const idText = (prefix: string, id: string): string => (id.startsWith(prefix) ? JSON.stringify(id.slice(prefix.length)) : `[${JSON.stringify(id)}]`);
const accountText = (id: string): string => idText(idPrefix.account, id);
/** A stored identifier (idText) of the kind whose prefix is `prefix`, whole. */
function storedId(v: unknown, prefix: string, name: string, what: string): string {
  if (typeof v === 'string') return prefix + v;
  if (Array.isArray(v) && v.length === 1 && typeof v[0] === 'string') return v[0];
  return damaged(what, `${name} is not an identifier`);
}

/** The text of an operation's members up to its actor (`[ref, cseq, clientKey, submittedAtMs, command, actor`), with those it was made of beside the command. */
interface HeadText extends Pick<Operation, 'ref' | 'cseq' | 'clientKey' | 'submittedAtMs' | 'actor'> {
  readonly text: string;
}
const compactHeads = new WeakMap<Command, HeadText>();
/**
 * An operation is written when acknowledged and again when decided, with the same members up to
 * its actor (the decision's state is the acknowledged one's, changed): their text is made once,
 * kept by command, and reused for an operation that has the same.
 */
function headText(o: Operation): string {
  const kept = compactHeads.get(o.command);
  if (kept !== undefined && kept.ref === o.ref && kept.cseq === o.cseq && kept.clientKey === o.clientKey && kept.submittedAtMs === o.submittedAtMs && kept.actor === o.actor) return kept.text;
  const str = JSON.stringify;
  const text = ['[', str(o.ref), ',', o.cseq, ',', str(o.clientKey), ',', o.submittedAtMs, ',', commandText(o.command), ',', compactActor(o.actor)].join('');
  compactHeads.set(o.command, { ref: o.ref, cseq: o.cseq, clientKey: o.clientKey, submittedAtMs: o.submittedAtMs, actor: o.actor, text });
  return text;
}
const compactActors = new WeakMap<Authority, string>();
/** The last actor encoded and its text: consecutive operations mostly share one actor (intake.ts), found without a WeakMap lookup. */
let lastActor: Authority | null = null;
let lastActorText = '';
function compactActor(actor: Authority): string {
  if (actor !== lastActor) {
    let text = compactActors.get(actor);
    if (text === undefined) {
      text = authorityText(actor);
      compactActors.set(actor, text);
    }
    lastActorText = text;
    lastActor = actor;
  }
  return lastActorText;
}

function commandText(c: Command): string {
  const str = JSON.stringify;
  switch (c.type) {
    case 'transfer': {
      const parts: (string | number)[] = ['[', commandTag.transfer, ',', c.deadlineMs];
      for (const l of c.legs) parts.push(',[', accountText(l.from), ',', accountText(l.to), ',', str(l.asset), ',"', decimal(l.amountMinor), '"]');
      parts.push(']');
      return parts.join('');
    }
    case 'reserve':
      return `[${commandTag.reserve},${accountText(c.payer)},${str(c.asset)},"${decimal(c.amountMinor)}",${c.deadlineMs}]`;
    case 'capture':
      return `[${commandTag.capture},${str(c.reservation)},${accountText(c.to)},${c.amountMinor === null ? 'null' : `"${decimal(c.amountMinor)}"`}]`;
    case 'release':
      return `[${commandTag.release},${str(c.reservation)}]`;
    default:
      return str(encodeCommand(c));
  }
}

function authorityText(a: Authority): string {
  const head = `[${idText(idPrefix.identity, a.principal)},${idText(idPrefix.credential, a.credential)},${positionIn(indexedAuthorityKinds, a.kind)}`;
  const onBehalfOf = a.onBehalfOf == null ? 'null' : idText(idPrefix.identity, a.onBehalfOf);
  if (a.grant != null) return `${head},${onBehalfOf},${idText(idPrefix.grant, a.grant)}]`;
  return a.onBehalfOf == null ? `${head}]` : `${head},${onBehalfOf}]`;
}

function holdText(h: Hold): string {
  const head = `[${accountText(h.payer)},${JSON.stringify(h.asset)},"${decimal(h.amountMinor)}",${h.deadlineMs}`;
  return h.authority == null ? `${head}]` : `${head},${authorityText(h.authority)}]`;
}

function resultText(r: OperationResult): string {
  return onlyPostings(r) ? `[${r.postings!.join(',')}]` : JSON.stringify(r);
}
/** Whether a result holds its journal positions alone (a transfer's, a reservation's): written as their list. */
function onlyPostings(r: OperationResult): boolean {
  if (r.postings === undefined) return false;
  for (const name in r) if (name !== 'postings') return false;
  for (const seq of r.postings) if (!Number.isSafeInteger(seq)) return false;
  return true;
}

/** An operation in the compact form (encodeOperation), its members checked as they are read. */
function decodeCompactOperation(text: string): Operation {
  const what = 'operation';
  const v = storedList(parsed(text, what), 7, 16, what);
  // Its members by name, as tupleRecord gives them, in one literal: this runs for every operation read.
  const j: Json = {
    ref: v[0], cseq: v[1], clientKey: v[2], submittedAtMs: v[3], command: v[4], actor: v[5], state: v[6], reference: v[7], act: v[8], decided: v[9], result: v[10], error: v[11], hold: v[12], flags: v[13],
    scope: v[14], approval: v[15],
  };
  const submittedAtMs = check.integer(j, 'submittedAtMs', what);
  const decided = j.decided === undefined ? null : check.nullableInteger(j, 'decided', what);
  const decidedAtMs = decided === null ? null : submittedAtMs + decided;
  if (decidedAtMs !== null && !Number.isSafeInteger(decidedAtMs)) damaged(what, 'decided is not a time');
  const flags = j.flags === undefined ? 0 : check.integer(j, 'flags', what);
  if (flags < 0 || flags > 3) damaged(what, 'flags is not one of 0 to 3');
  const op: { -readonly [K in keyof Operation]: Operation[K] } = {
    ref: check.string(j, 'ref', what),
    cseq: check.integer(j, 'cseq', what),
    command: storedCommand(j.command, what),
    actor: storedAuthority(j.actor, what),
    scope: j.scope == null ? null : storedAccounts(j.scope, what),
    state: indexed(j, 'state', storedStates, what),
    submittedAtMs,
    decidedAtMs,
    clientKey: check.string(j, 'clientKey', what),
    clientKeyDerived: (flags & 1) !== 0,
    reference: j.reference === undefined ? null : (check.nullableString(j, 'reference', what) as Operation['reference']),
    result: j.result == null ? null : storedResult(j.result, what),
    error: j.error == null ? null : (check.object(j, 'error', what) as unknown as Operation['error']),
    hold: j.hold == null ? null : storedHold(j.hold, what),
  };
  // The members an operation holds only when set, added after the others (as intake.ts makes them).
  const act = j.act === undefined ? null : check.nullableString(j, 'act', what);
  if (act !== null) op.act = act;
  if (j.approval != null) {
    const approval = tupleRecord(j.approval, ['proposal', 'approver'], what);
    op.approval = { proposal: check.string(approval, 'proposal', what), approver: check.string(approval, 'approver', what) as CredentialId };
  }
  if (flags >= 2) op.unapproved = true;
  return op;
}

function storedCommand(v: unknown, what: string): Command {
  if (!Array.isArray(v)) {
    if (typeof v !== 'object' || v === null) damaged(what, 'command is not a list or an object');
    return decodeCommand(v as Json);
  }
  switch (v[0]) {
    case commandTag.transfer: {
      if (v.length < 2) damaged(what, 'a transfer is not [0, deadlineMs, leg…]');
      const deadlineMs = check.integer({ deadlineMs: v[1] }, 'deadlineMs', what);
      return { type: 'transfer', legs: v.slice(2).map((leg) => storedLeg(leg, what)), deadlineMs };
    }
    case commandTag.reserve: {
      const c = tupleRecord(v, ['type', 'payer', 'asset', 'amountMinor', 'deadlineMs'], what);
      return {
        type: 'reserve',
        payer: storedId(c.payer, idPrefix.account, 'payer', what) as AccountId,
        asset: check.string(c, 'asset', what) as AssetSymbol,
        amountMinor: check.decimal(c, 'amountMinor', what),
        deadlineMs: check.integer(c, 'deadlineMs', what),
      };
    }
    case commandTag.capture: {
      const c = tupleRecord(v, ['type', 'reservation', 'to', 'amountMinor'], what);
      return {
        type: 'capture',
        reservation: check.string(c, 'reservation', what),
        to: storedId(c.to, idPrefix.account, 'to', what) as AccountId,
        amountMinor: c.amountMinor === null ? null : check.decimal(c, 'amountMinor', what),
      };
    }
    case commandTag.release:
      return { type: 'release', reservation: check.string(tupleRecord(v, ['type', 'reservation'], what), 'reservation', what) };
  }
  return damaged(what, `command tag ${JSON.stringify(v[0])} is not known`);
}

function storedLeg(v: unknown, what: string): Leg {
  const l = tupleRecord(v, ['from', 'to', 'asset', 'amountMinor'], what);
  return {
    from: storedId(l.from, idPrefix.account, 'from', what) as AccountId,
    to: storedId(l.to, idPrefix.account, 'to', what) as AccountId,
    asset: check.string(l, 'asset', what) as AssetSymbol,
    amountMinor: check.decimal(l, 'amountMinor', what),
  };
}

const compactAuthorityMembers = ['principal', 'credential', 'kind', 'on_behalf_of', 'grant'] as const;
function storedAuthority(v: unknown, what: string): Authority {
  const a = tupleRecord(v, compactAuthorityMembers, what, 3);
  return {
    principal: storedId(a.principal, idPrefix.identity, 'principal', what) as IdentityId,
    credential: storedId(a.credential, idPrefix.credential, 'credential', what) as CredentialId,
    onBehalfOf: a.on_behalf_of == null ? null : (storedId(a.on_behalf_of, idPrefix.identity, 'on_behalf_of', what) as IdentityId),
    grant: a.grant == null ? null : (storedId(a.grant, idPrefix.grant, 'grant', what) as GrantId),
    kind: indexed(a, 'kind', indexedAuthorityKinds, what),
  };
}

function storedHold(v: unknown, what: string): Hold {
  const h = tupleRecord(v, ['payer', 'asset', 'amountMinor', 'deadlineMs', 'authority'], what, 4);
  const hold: Hold = {
    payer: storedId(h.payer, idPrefix.account, 'payer', what) as AccountId,
    asset: check.string(h, 'asset', what) as AssetSymbol,
    amountMinor: check.decimal(h, 'amountMinor', what),
    deadlineMs: check.integer(h, 'deadlineMs', what),
  };
  return h.authority === undefined ? hold : { ...hold, authority: storedAuthority(h.authority, what) };
}

function storedAccounts(v: unknown, what: string): AccountId[] {
  if (!Array.isArray(v)) damaged(what, 'scope is not a list');
  return v.map((id) => storedId(id, idPrefix.account, 'scope', what) as AccountId);
}

function storedResult(v: unknown, what: string): OperationResult {
  if (Array.isArray(v)) {
    if (!v.every((seq) => Number.isSafeInteger(seq))) damaged(what, 'result is not a list of journal positions');
    return { postings: v as number[] };
  }
  if (typeof v !== 'object' || v === null) damaged(what, 'result is not an object or a list of journal positions');
  return v as OperationResult;
}
