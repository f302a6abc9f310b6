/**
 * Record encodings (the keys they are stored under: keys.ts). Records are JSON with
 * bigint written as decimal text, field by field (no tagging that a client string
 * could imitate). A decoded record is checked before the kernel trusts it.
 */
import { assert } from '../assert.js';
import { grantTermsView, parseGrantTerms } from '../auth/grants.js';
import { type CustodyCommand, type GrantKind, custodyCommandTypes } from './model.js';
import { type Json, check, damaged, decimalText, members, parsed, recordJson } from './decode.js';
import type {
  Account,
  AccountKind,
  AccountStatus,
  Authority,
  Asset,
  AssetBinding,
  AssetKind,
  AssetStatus,
  Custody,
  Balance,
  Command,
  Head,
  Hold,
  Identity,
  DepositFact,
  Leg,
  SettleBlock,
  Operation,
  OperationState,
  Posting,
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
/** A stored balance (`bal/`, `tb/`) from its text. */
export const decodeBalanceText = (text: string): Balance => decodeBalance(recordJson(text, 'balance'));

export function encodeAccount(a: Account): string {
  const limits: Record<string, string> = {};
  for (const [k, v] of Object.entries(a.treasuryLimits)) limits[k] = v.toString();
  return JSON.stringify({ ...a, treasuryLimits: limits });
}
// The values a stored record's enumerated fields may hold.
const accountKinds = members<AccountKind>({ customer: true, treasury: true });
const custodies = members<Custody>({ delegated: true, owned: true });
const accountStatuses = members<AccountStatus>({ active: true, frozen: true, closed: true });
const assetKinds = members<AssetKind>({ fiat: true, stable: true, native: true, other: true });
const assetStatuses = members<AssetStatus>({ active: true, deprecated: true });
const assetBindings = members<AssetBinding>({ book_only: true, binding: true, bound: true });

export function decodeAccount(text: string): Account {
  const what = 'account';
  const j = recordJson(text, what);
  check.string(j, 'id', what);
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
export const encodeIdentity = (i: Identity): string => JSON.stringify(i);
export function decodeIdentity(text: string): Identity {
  const what = 'identity';
  const j = recordJson(text, what);
  check.string(j, 'id', what);
  check.integer(j, 'createdAtMs', what);
  check.strings(j, 'accounts', what);
  return j as unknown as Identity;
}
export const encodeHead = (h: Head): string => JSON.stringify(h);
export function decodeHead(text: string): Head {
  const what = 'head';
  const j = recordJson(text, what);
  for (const name of ['decidedCseq', 'postingSeq', 'eventSeq', 'lastAtMs', 'accounts']) check.integer(j, name, what);
  return j as unknown as Head;
}

const encodedAuthorities = new WeakMap<readonly Authority[], string>();

/** An authority as a leaf member: every member present, in canonical order. */
function authorityLeaf(a: Authority): string {
  const str = JSON.stringify;
  return `{"credential":${str(a.credential)},"grant":${str(a.grant)},"kind":${str(a.kind)},"on_behalf_of":${str(a.onBehalfOf)},"principal":${str(a.principal)}}`;
}

/**
 * A journal entry's leaf bytes (CONTRACT 9): the canonical JSON of {seq, operation,
 * account, asset, balance, direction, amount, kind, status, at, counterparty,
 * authorities, after}, members in UTF-16 order, built directly as text (a property
 * test pins it to a generic canonical encoder). The journal stores exactly these
 * bytes, so checkpoints hash what was written without encoding anything again. The
 * authorities of an operation are shared by its entries and encoded once.
 */
export function encodeLeaf(p: Posting): string {
  let authorities = encodedAuthorities.get(p.authorities);
  if (authorities === undefined) {
    authorities = `[${p.authorities.map(authorityLeaf).join(',')}]`;
    encodedAuthorities.set(p.authorities, authorities);
  }
  const str = JSON.stringify;
  // Joined, not concatenated: one flat string (a template makes a tree of ~30 parts that
  // lives as long as the round's batch and is flattened again by each writer).
  return [
    '{"account":', str(p.account), ',"after":{"available":"', p.after.available, '","encumbered":"', p.after.encumbered, '","reserved":"', p.after.reserved,
    '"},"amount":"', p.amountMinor, '","asset":', str(p.asset), ',"at":', p.atMs, ',"authorities":', authorities, ',"balance":"', p.layer,
    '","counterparty":', p.counterparty === null ? 'null' : str(p.counterparty), ',"direction":"', p.direction, '","kind":"', p.kind,
    '","operation":', str(p.operation), ',"seq":', p.seq, ',"status":"', p.status, '"}',
  ].join('');
}

/** A posting from its leaf bytes; the leaf leaves out the operation's reference, given apart. */
export function decodeLeaf(text: string, reference: Posting['reference']): Posting {
  const j = recordJson(text, 'journal entry');
  const after = check.object(j, 'after', 'journal entry');
  return {
    seq: j.seq as number,
    atMs: j.at as number,
    account: j.account as Posting['account'],
    asset: j.asset as Posting['asset'],
    amountMinor: big(j.amount),
    direction: j.direction as Posting['direction'],
    layer: j.balance as Posting['layer'],
    kind: j.kind as Posting['kind'],
    status: j.status as Posting['status'],
    operation: j.operation as string,
    counterparty: j.counterparty as Posting['counterparty'],
    authorities: (j.authorities as Json[]).map((a) => ({ credential: a.credential, grant: a.grant, kind: a.kind, onBehalfOf: a.on_behalf_of, principal: a.principal }) as Authority),
    reference,
    after: { available: big(after.available), reserved: big(after.reserved), encumbered: big(after.encumbered) },
  };
}

/**
 * An account's index entry carries the whole posting, so statements and movements
 * read it where they seek: the leaf, a newline (a leaf holds none: JSON escapes it),
 * and the reference as a JSON string.
 */
export function encodeIndexedPosting(leaf: string, reference: Posting['reference']): string {
  return [leaf, reference === null ? 'null' : JSON.stringify(reference)].join('\n');
}
export function decodeIndexedPosting(text: string): Posting {
  const cut = text.indexOf('\n');
  assert(cut > 0, 'an index entry holds a leaf and a reference');
  const reference = parsed(text.slice(cut + 1), 'journal entry');
  if (reference !== null && typeof reference !== 'string') damaged('journal entry', 'reference is not text or null');
  return decodeLeaf(text.slice(0, cut), reference as Posting['reference']);
}

/** A journal chunk: the leaves of consecutive entries, one per line, keyed by the first entry's position. */
export const encodeJournalChunk = (leaves: readonly string[]): string => leaves.join('\n');
export const journalChunkLeaves = (text: string): string[] => text.split('\n');

function encodeLeg(l: Leg): Json {
  return { ...l, amountMinor: l.amountMinor.toString() };
}
function decodeLeg(j: Json): Leg {
  return { ...(j as unknown as Leg), amountMinor: big(j.amountMinor) };
}

/** Commands with no bigint member (custody's and these): stored as they stand. */
type PlainCommand = CustodyCommand | Extract<Command, { type: 'release' | 'create_identity' | 'register_credential' | 'revoke_grant' | 'register_party' | 'register_asset' | 'bind_asset' | 'deprecate_asset' }>;
const plainCommandTypes: ReadonlySet<string> = new Set([
  ...custodyCommandTypes,
  ...(['release', 'create_identity', 'register_credential', 'revoke_grant', 'register_party', 'register_asset', 'bind_asset', 'deprecate_asset'] satisfies PlainCommand['type'][]),
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
const decodeDeposit = (j: Json): DepositFact => ({ ...(j as unknown as DepositFact), amountMinor: big(j.amountMinor) });
function decodeCommand(j: Json): Command {
  if (plainCommandTypes.has(j.type as string)) return j as unknown as Command;
  switch (j.type as Exclude<Command['type'], PlainCommand['type']>) {
    case 'transfer':
      return { ...(j as unknown as Command & { type: 'transfer' }), legs: (j.legs as Json[]).map(decodeLeg) };
    case 'reserve':
      return { ...(j as unknown as Command & { type: 'reserve' }), amountMinor: big(j.amountMinor) };
    case 'capture':
      return { ...(j as unknown as Command & { type: 'capture' }), amountMinor: j.amountMinor === null ? null : big(j.amountMinor) };
    case 'open_account': {
      const limits: Record<string, bigint> = {};
      for (const [k, v] of Object.entries(j.treasuryLimits as Json)) limits[k] = big(v);
      return { ...(j as unknown as Command & { type: 'open_account' }), treasuryLimits: limits };
    }
    case 'issue_grant': {
      const terms = j.terms as Json;
      return { type: 'issue_grant', terms: parseGrantTerms(terms, terms.kind as GrantKind), justification: j.justification as string | null };
    }
    case 'withdraw':
      return { ...(j as unknown as Command & { type: 'withdraw' }), amountMinor: big(j.amountMinor) };
    case 'settle': {
      const blocks = (j.blocks as Json[]).map((b) => ({
        ...(b as unknown as SettleBlock),
        deposits: (b.deposits as Json[]).map(decodeDeposit),
        instructions: (b.instructions as Json[]).map((i) => ({ ...(i as unknown as SettleBlock['instructions'][number]), amountMinor: big(i.amountMinor) })),
      }));
      return { ...(j as unknown as Command & { type: 'settle' }), blocks };
    }
    case 'observe':
      return { ...(j as unknown as Command & { type: 'observe' }), deposit: decodeDeposit(j.deposit as Json) };
  }
  damaged('operation', `command type ${JSON.stringify(j.type)} is not known`);
}

function encodeHold(h: Hold | null): Json | null {
  return h === null ? null : { ...h, amountMinor: h.amountMinor.toString() };
}
function decodeHold(j: Json): Hold {
  return { ...(j as unknown as Hold), amountMinor: big(j.amountMinor) };
}

const encodedCommands = new WeakMap<Command, string>();
const encodedActors = new WeakMap<Authority, string>();

function cachedJson<T extends object>(cache: WeakMap<T, string>, value: T, encode: (v: T) => unknown): string {
  let text = cache.get(value);
  if (text === undefined) {
    text = JSON.stringify(encode(value));
    cache.set(value, text);
  }
  return text;
}

/**
 * An operation is written when acknowledged and again when decided, with the same
 * command and actor: those are encoded once and reused. The text is what
 * JSON.stringify gives for the record (a property test pins it).
 */
export function encodeOperation(o: Operation): string {
  const str = JSON.stringify;
  // Joined into one flat string: it is written twice (its record and its event chunk).
  return [
    '{"ref":', str(o.ref), ',"cseq":', o.cseq, ',"command":', cachedJson(encodedCommands, o.command, encodeCommand),
    ',"actor":', cachedJson(encodedActors, o.actor, (a) => a), ',"scope":', str(o.scope ?? null), ',"state":"', o.state,
    '","submittedAtMs":', o.submittedAtMs, ',"decidedAtMs":', str(o.decidedAtMs), ',"clientKey":', str(o.clientKey), ',"clientKeyDerived":', o.clientKeyDerived,
    ',"reference":', str(o.reference), ',"result":', str(o.result), ',"error":', str(o.error), ',"hold":', str(encodeHold(o.hold)), '}',
  ].join('');
}
const operationStates = members<OperationState>({ Received: true, Reserved: true, Instructed: true, Submitted: true, Completed: true, Rejected: true, Expired: true, Captured: true, Released: true });

export function decodeOperation(text: string): Operation {
  return decodeOperationJson(recordJson(text, 'operation'));
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
  const command = check.object(j, 'command', what);
  return {
    ...(j as unknown as Operation),
    command: decodeCommand(command),
    hold: j.hold === null ? null : decodeHold(check.object(j, 'hold', what)),
  };
}
