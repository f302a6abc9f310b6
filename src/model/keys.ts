/**
 * The store's key layout, every space of it in one module (docs/architecture.md, Keys).
 * Keys are ordered text: fixed-width hex for sequence numbers, so that byte order is
 * numeric order. Every top-level space ends in '/', no id or symbol contains '/', and
 * no space is a prefix of another (test/kernel/keys.test.ts), so a range scan of one
 * space never reads another's records.
 */
import { assert } from '../assert.js';
import type { GrantId, PartyId } from './values.js';

/** By the length of a hex text (at most 14 digits for a safe integer), the zeros that pad it to 16. */
const zerosBefore = Array.from({ length: 17 }, (_, digits) => '0'.repeat(16 - digits));
export function seqHex(n: number): string {
  assert(Number.isSafeInteger(n) && n >= 0, 'sequence number is a safe non-negative integer');
  // A made zeros prefix, not padStart (which makes its filler and the padded text anew: this runs several times per transfer).
  const hex = n.toString(16);
  return zerosBefore[hex.length]! + hex;
}
export function parseSeqHex(text: string): number {
  const n = parseInt(text, 16);
  assert(text.length === 16 && Number.isSafeInteger(n), 'sequence key is 16 hex digits');
  return n;
}

/** The smallest key after every key with this prefix. */
export function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/**
 * The layout written by this code: 2 = journal chunks of leaves, postings in the account
 * index, per-asset totals; 3 = held grants indexed by holder and the identity they reach
 * (`gho/`, `ghro/` instead of `gh/`, `ghr/`: book/migrate-grant-index.ts); 4 = account index
 * entries in a compact form instead of a copy of the leaf (`aa/`: book/migrate-compact-index.ts);
 * 5 = a decided operation stored once, in its event chunk, `op/` saying where
 * (model/event-chunk.ts; book/migrate-operation-pointers.ts), and the Received operations of
 * an intake write in one `cmd/` chunk (book/command-chunks.ts); 6 = journal chunks of entries
 * in a compact form, each leaf made when read (model/codec.ts JournalChunk; layout 5's chunks
 * of leaves are read as they stand); 7 = operation states, the audit trail, client-key records and
 * the operations' index in compact forms, the older forms read as they stand (both moves the
 * mark alone: book/migrate-mark-only.ts); also identities and accounts as tuples without the id
 * their key holds, and a genesis opening's index entry and journal line as encodeIndexedOpening,
 * any other posting's as encodeIndexedPosting's shorter list (one enumerations code, packed reference, ids after their prefix).
 */
export const storeLayout = '7';

/** Every top-level key space, once. */
export const keySpaces = {
  /** The head, the command counter, the seal, the store layout, the id epoch. */
  meta: 'meta/',
  /** Per-asset totals: the sum of every balance, layer by layer. */
  totals: 'tb/',
  /** Registered assets, by symbol. */
  asset: 'asset/',
  /** Identities, by id. */
  identity: 'id/',
  /** Accounts, by id. */
  account: 'acct/',
  /** Balances (three layers), by account then asset. */
  balance: 'bal/',
  /** The journal: chunks of its entries (each giving its CONTRACT 9 leaf), by first journal position. */
  journal: 'j/',
  /** Each journal chunk by time then first position. */
  journalTime: 'jt/',
  /** Per account and asset, its postings by journal position. */
  accountAsset: 'aa/',
  /** Decided operations, by reference: where each one's latest event is. */
  operation: 'op/',
  /** Acknowledged commands not all decided, one chunk per intake write, by first cseq; each operation compact since layout 7 (model/codec.ts encodeOperation). */
  command: 'cmd/',
  /** Every operation by submission time then cseq (the operator's listing, newest first): its reference, command type and principal; since layout 7 in chunks of one time and consecutive cseqs (queries/operation-index.ts). */
  operationTime: 'ot/',
  /** Client-key records of submitted commands, by principal then client key. */
  clientKey: 'ck/',
  /** Reservations awaiting their deadline, by deadline then reference. */
  expiry: 'x/',
  /** Decision events, chunks of a round's, by first event sequence number: the stored state of every decided operation, compact since layout 7 (as `cmd/`'s). */
  event: 'ev/',
  /** Aliases, by source then name. */
  alias: 'alias/',
  /** Archived aliases, by source then name. */
  archived: 'arch/',
  /** Credentials, by id. */
  credential: 'cred/',
  /** Bearer tokens (API keys, sessions), by SHA-256 of the token. */
  token: 'tok/',
  /** Expiry index of sessions, by expiry time then token hash. */
  tokenExpiry: 'tokx/',
  /** Used challenges, by SHA-256 of the challenge. */
  challenge: 'chal/',
  /** Expiry index of used challenges, by expiry time then challenge hash. */
  challengeExpiry: 'chalx/',
  /** Grants, by id. */
  grant: 'grant/',
  /** Live grants narrowed from a grant, by parent then child. */
  grantChild: 'gch/',
  /** Rolling-window usage of a windowed grant, by id. */
  grantWindow: 'gwin/',
  /** Layout 2's live held grants, by holder then grant: read only to migrate them to `gho/`. */
  heldGrant: 'gh/',
  /** Layout 2's revoked held grants, by holder then grant: read only to migrate them to `ghro/`. */
  revokedHeld: 'ghr/',
  /** Live grants a principal holds, by holder, the identity whose accounts they reach, then grant. */
  heldGrantOver: 'gho/',
  /** Revoked grants a principal held, by holder, the identity they reached, then grant. */
  revokedHeldOver: 'ghro/',
  /** Live grants a principal gave, by grantor then grant. */
  givenGrant: 'gg/',
  /** Every grant over an identity, by identity then grant. */
  overGrant: 'gi/',
  /** Grants over an identity a party holds or gave, by identity, party, grant. */
  partyGrant: 'gip/',
  /** Integrating parties, by id. */
  party: 'party/',
  /** What the book keeps of settlement: its meta, deposits, instructions, pending withdrawals, attestations. */
  settlement: 'sl/',
  /** The account a deposit reference names. */
  depositRef: 'dref/',
  /** The embedded settlement layer (settlement/embedded.ts). */
  layer: 'L/',
  /** Stored Merkle subtrees, by level then index. */
  merkle: 'mt/',
  /** Checkpoints, by number. */
  checkpoint: 'cp/',
  /** How far checkpoints have taken in the layer. */
  checkpointIngest: 'cpi/',
  /** Liabilities trees (CONTRACT 12.2), by checkpoint then asset: each account's leaf, blocks of leaf hashes, the nodes above. */
  liabilities: 'lt/',
  /** Stored replies of commands decided at once, by principal then SHA-256 of the client key. */
  directReply: 'dck/',
  /** Members of the operator principal (CONTRACT 13), by credential. */
  member: 'mem/',
  /** The operator audit trail (CONTRACT 13), by sequence number; since layout 7 a round's items in chunks by the first one's (auth/audit.ts). */
  audit: 'au/',
  /** Proposals (CONTRACT 13), by the proposing command's sequence number (newest last). */
  proposal: 'prop/',
  /** A proposal's record key, by its id. */
  proposalId: 'propi/',
  /** Each member's open proposals (the bound per member), by credential. */
  proposalsOpen: 'propn/',
  /** The approval policy in force (CONTRACT 13). */
  approvals: 'apol/',
} as const;

const s = keySpaces;

/** The book's own records. */
export const keys = {
  head: `${s.meta}head`,
  cseq: `${s.meta}cseq`,
  sealed: `${s.meta}sealed`,
  /** The store layout the book was written in (storeLayout); a book of another layout is not opened. */
  layout: `${s.meta}layout`,
  /** The book's id epoch (decimal; absent: 0), drawn afresh by each restore (IdSource: keyedIds). */
  idsEpoch: `${s.meta}ids-epoch`,
  /** Present once `ot/` indexes every operation (written by intake; built at open for a book from before it). */
  operationTimeBuilt: `${s.meta}ot-built`,
  tb: (asset: string) => `${s.totals}${asset}`,
  tbPrefix: s.totals,
  asset: (sym: string) => `${s.asset}${sym}`,
  assetPrefix: s.asset,
  identity: (id: string) => `${s.identity}${id}`,
  account: (id: string) => `${s.account}${id}`,
  accountPrefix: s.account,
  balance: (acct: string, asset: string) => `${s.balance}${acct}/${asset}`,
  balancePrefix: s.balance,
  /** A chunk of the journal: the leaves of the entries from `firstSeq` on (a round writes its entries in chunks of at most journalChunkEntriesMax). */
  journal: (firstSeq: number) => `${s.journal}${seqHex(firstSeq)}`,
  journalPrefix: s.journal,
  /** Each journal chunk by its time then position: the first entry at or after a time is one seek. */
  journalTime: (atMs: number, firstSeq: number) => `${s.journalTime}${seqHex(atMs)}/${seqHex(firstSeq)}`,
  journalTimePrefix: s.journalTime,
  /** Per account and asset, its entries by journal position, each carrying the posting in a compact form (encodeIndexedPosting). */
  accountAsset: (acct: string, asset: string, seq: number) => `${s.accountAsset}${acct}/${asset}/${seqHex(seq)}`,
  accountAssetPrefix: (acct: string, asset: string) => `${s.accountAsset}${acct}/${asset}/`,
  accountBalancesPrefix: (acct: string) => `${s.balance}${acct}/`,
  /** A decided operation: where its latest event is (model/event-chunk.ts), or, in a book migrated to layout 5 whose event had been pruned, the operation itself. */
  operation: (ref: string) => `${s.operation}${ref}`,
  /** The Received operations of one intake write from `firstCseq` on (book/command-chunks.ts), deleted by the decision of its last command; in layout 4, one command's. */
  command: (firstCseq: number) => `${s.command}${seqHex(firstCseq)}`,
  commandPrefix: s.command,
  /** An operation in the operator's listing, by submission time then cseq: byte order is time order. */
  operationTime: (submittedAtMs: number, cseq: number) => `${s.operationTime}${seqHex(submittedAtMs)}/${seqHex(cseq)}`,
  operationTimePrefix: s.operationTime,
  clientKey: (principal: string, key: string) => `${s.clientKey}${principal}/${key}`,
  /** Reservations awaiting their deadline, in deadline order. */
  expiry: (deadlineMs: number, ref: string) => `${s.expiry}${seqHex(deadlineMs)}/${ref}`,
  expiryPrefix: s.expiry,
  /** Events of one decision round (at most eventChunkEventsMax: a round writes as many chunks as it needs), keyed by the first event's sequence number; kept for good. */
  eventChunk: (firstSeq: number) => `${s.event}${seqHex(firstSeq)}`,
  eventPrefix: s.event,
  alias: (source: string, name: string) => `${s.alias}${encodeURIComponent(source)}/${encodeURIComponent(name)}`,
  archived: (source: string, name: string) => `${s.archived}${encodeURIComponent(source)}/${encodeURIComponent(name)}`,
  /** The reply of a command decided at once, by its caller and the SHA-256 of its client key. */
  directReply: (principal: string, clientKeyHashHex: string) => `${s.directReply}${principal}/${clientKeyHashHex}`,
} as const;

// ---- credentials, tokens, challenges ----

export const credentialKey = (id: string) => `${s.credential}${id}`;
export const tokenKey = (hashHex: string) => `${s.token}${hashHex}`;
/** A used challenge, by its hash (auth/challenges.ts: challengeKey). */
export const usedChallengeKey = (hashHex: string): string => `${s.challenge}${hashHex}`;

/**
 * Expiry indexes: `<space>/<expiresAtMs, 16 hex digits>/<hash>` sorts by time, so the
 * records expired at `nowMs` are one ordered scan from `<space>/` up to
 * `expiryScanEnd(space, nowMs)`, and pruning never reads live ones (auth/expiry.ts).
 */
export const expirySpaces = { chalx: s.challengeExpiry, tokx: s.tokenExpiry } as const;
export type ExpirySpace = keyof typeof expirySpaces;

export function expiryKey(space: ExpirySpace, expiresAtMs: number, hashHex: string): string {
  return `${expirySpaces[space]}${seqHex(expiresAtMs)}/${hashHex}`;
}

/** Exclusive upper end of the index entries expired at `nowMs` (expired: `nowMs >= expiresAtMs`). */
export function expiryScanEnd(space: ExpirySpace, nowMs: number): string {
  return `${expirySpaces[space]}${seqHex(nowMs + 1)}/`;
}

// ---- grants and parties ----

export const grantKey = (id: GrantId): string => `${s.grant}${id}`;
/** Parent → children index: the grants narrowed from `parent` are one prefix scan. */
export const grantChildKey = (parent: GrantId, child: GrantId): string => `${s.grantChild}${parent}/${child}`;
export const grantChildPrefix = (parent: GrantId): string => `${s.grantChild}${parent}/`;
/** Rolling-window usage of one windowed grant. */
export const grantWindowKey = (id: GrantId): string => `${s.grantWindow}${id}`;

/**
 * Indexes. `gho/`, `gg/` and `gch/` are what the decider searches and counts, and hold
 * live grants only: a revocation deletes its grants' entries, and an issuance drops
 * those that expired from the lists it reads. `ghro/` keeps revoked held grants for the
 * refusal's code; `gi/` and `gip/` feed the listings and keep every grant.
 * Held grants are indexed by holder and by the identity whose accounts they reach (the
 * root grantor, or an `{identity}` subject's identity): a use searches only the grants
 * over the account's owner, and only that owner and those it delegated to can give
 * them, so a stranger's grants never take a holder's space over anyone else.
 */
/** Grants held by a principal over `over`'s accounts. */
export const heldGrantKey = (holder: string, over: string, grant: GrantId) => `${s.heldGrantOver}${holder}/${over}/${grant}`;
export const heldGrantPrefix = (holder: string, over: string) => `${s.heldGrantOver}${holder}/${over}/`;
/** Grants over `over` a principal held until they were revoked: read (the latest few) only to tell ERR-AuthorityRevoked from ERR-NotAuthorised. */
export const revokedHeldKey = (holder: string, over: string, grant: GrantId) => `${s.revokedHeldOver}${holder}/${over}/${grant}`;
export const revokedHeldPrefix = (holder: string, over: string) => `${s.revokedHeldOver}${holder}/${over}/`;
/** Grants a principal gave. */
export const givenGrantKey = (grantor: string, grant: GrantId) => `${s.givenGrant}${grantor}/${grant}`;
export const givenGrantPrefix = (grantor: string) => `${s.givenGrant}${grantor}/`;
/** Grants over an identity (its accounts, or opening its accounts): the identity listing. */
export const overGrantKey = (identity: string, grant: GrantId) => `${s.overGrant}${identity}/${grant}`;
export const overGrantPrefix = (identity: string) => `${s.overGrant}${identity}/`;
/** Grants over an identity that `party` holds or gave: the identity listing as anyone else sees it. */
export const partyGrantKey = (identity: string, party: string, grant: GrantId) => `${s.partyGrant}${identity}/${party}/${grant}`;
export const partyGrantPrefix = (identity: string, party: string) => `${s.partyGrant}${identity}/${party}/`;

export const partyKey = (id: PartyId): string => `${s.party}${id}`;
export const partyPrefix = s.party;
export const memberKey = (credential: string): string => `${s.member}${credential}`;
export const memberPrefix = s.member;
export const auditKey = (seq: number): string => `${s.audit}${seqHex(seq)}`;
export const auditPrefix = s.audit;
export const proposalKey = (cseq: number): string => `${s.proposal}${seqHex(cseq)}`;
export const proposalPrefix = s.proposal;
export const proposalIdKey = (id: string): string => `${s.proposalId}${id}`;
export const proposalsOpenKey = (credential: string): string => `${s.proposalsOpen}${credential}`;
export const approvalPolicyKey = `${s.approvals}policy`;

// ---- settlement ----

export const settlementKeys = {
  /** `{height, cut}`: the last final height taken in and the inbox length at it. */
  meta: `${s.settlement}meta`,
  /** An inbox record the book met, by seq. */
  deposit: (seq: number) => `${s.settlement}dep/${seqHex(seq)}`,
  depositPrefix: `${s.settlement}dep/`,
  /** An instruction the book issued, by digest: the withdrawal's operation reference. */
  instruction: (digest: string) => `${s.settlement}ins/${digest}`,
  /** Withdrawals not yet Completed or Expired, by their instruction's expiry height, then operation reference. */
  pending: (expiry: number, ref: string) => `${s.settlement}pend/${seqHex(expiry)}/${ref}`,
  pendingPrefix: `${s.settlement}pend/`,
  /** The first key past every pending withdrawal whose expiry is at most `height`. */
  pendingAfter: (height: number) => `${s.settlement}pend/${seqHex(height + 1)}/`,
  /** Withdrawals not yet Completed or Expired, per account (bounded by pendingWithdrawalsPerAccountMax). */
  accountPending: (account: string, ref: string) => `${s.settlement}pa/${account}/${ref}`,
  accountPendingPrefix: (account: string) => `${s.settlement}pa/${account}/`,
  /** The latest attestation of an asset's location met in a final block (AttestationRecord). */
  attestation: (asset: string) => `${s.settlement}att/${asset}`,
  attestationPrefix: `${s.settlement}att/`,
  /** The account a deposit reference names. */
  depositRef: (ref: string) => `${s.depositRef}${ref}`,
};

/** The embedded settlement layer's own records. */
export const layerKeys = {
  meta: `${s.layer}meta`,
  block: (height: number) => `${s.layer}b/${seqHex(height)}`,
  blockPrefix: `${s.layer}b/`,
  inbox: (seq: number) => `${s.layer}in/${seqHex(seq)}`,
  inboxPrefix: `${s.layer}in/`,
  mempool: (n: number) => `${s.layer}mp/${seqHex(n)}`,
  mempoolPrefix: `${s.layer}mp/`,
  /** Each anchor submitted, by number: the height that carried it, or null while waiting. */
  anchor: (number: number) => `${s.layer}a/${seqHex(number)}`,
  /** Each instruction handed to the layer, by digest (handing it again changes nothing). */
  instruction: (digest: string) => `${s.layer}i/${digest}`,
  location: (location: string) => `${s.layer}loc/${location}`,
  locationPrefix: `${s.layer}loc/`,
};

// ---- checkpoints ----

export const merkleKeys = {
  node: (level: number, index: number) => `${s.merkle}${level.toString(16).padStart(2, '0')}/${seqHex(index)}`,
};

/** A checkpoint's liabilities tree in one asset (checkpoints/liabilities.ts). */
export const liabilitiesKeys = {
  /** An account's leaf: its index and layers. */
  account: (number: number, asset: string, account: string) => `${s.liabilities}${seqHex(number)}/${asset}/a/${account}`,
  /** The (hash, sum) of the leaves of one block, in index order. */
  block: (number: number, asset: string, block: number) => `${s.liabilities}${seqHex(number)}/${asset}/b/${seqHex(block)}`,
  /** The (hash, sum) of the node over leaves lo .. lo+n-1, for nodes above a block. */
  node: (number: number, asset: string, lo: number, n: number) => `${s.liabilities}${seqHex(number)}/${asset}/n/${seqHex(lo)}/${seqHex(n)}`,
};

export const checkpointKeys = {
  checkpoint: (number: number) => `${s.checkpoint}${seqHex(number)}`,
  prefix: s.checkpoint,
  ingested: `${s.checkpointIngest}ingested`,
};

// ---- ownership ----

/** The meta records the layout names (every `meta/` key of `keys`). */
const metaRecords: ReadonlySet<string> = new Set(Object.values(keys as Record<string, unknown>).filter((k): k is string => typeof k === 'string' && k.startsWith(s.meta)));
const spaces: readonly string[] = Object.values(keySpaces);

/**
 * Whether some part of the layout owns `key`: one of the meta records it names, or a key
 * inside one of its spaces. A restore refuses any other record, and `ledgerd check` names
 * it: no code reads it, so it can only be damage or a planted record.
 */
export function ownedKey(key: string): boolean {
  if (key.startsWith(s.meta)) return metaRecords.has(key);
  return spaces.some((space) => key.length > space.length && key.startsWith(space));
}

/** The layout's space holding `key`, or null; a scan of the store skips past it in one seek. */
export function spaceHolding(key: string): string | null {
  return spaces.find((space) => key.startsWith(space)) ?? null;
}
