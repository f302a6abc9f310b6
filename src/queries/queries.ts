/**
 * Queries, each answered from one consistent view: a store snapshot and the journal
 * position (`view`) it was taken at. Reads seek by key; nothing scans by offset.
 */
import { type Json, check, damaged, recordJson } from '../model/decode.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { assert } from '../assert.js';
import { type Actor, type Principals, inScope, reaches, unreachableAccount } from '../auth/authority.js';
import { grantWithinScope } from '../auth/grants.js';
import { type Grant } from '../model/model.js';
import { type Party } from '../decide/decide-parties.js';
import { type GrantPage, type GrantPageQuery, anyUnder, grantCoversAccount, grantNamesAccount, grantPage, heldRevokedGrantOver, holdsLiveGrantOver } from '../auth/grant-queries.js';
import {
  decodeAccount,
  decodeBalanceText,
  decodeHead,
  decodeIdentity,
  decodeIndexedPosting,
} from '../model/codec.js';
import { auditScanMax, membersMax, proposalScanMax } from '../constants.js';
import { type Proposal, type ProposalState, decodeProposal, stateAt } from '../auth/proposals.js';
import { type ApprovalPolicy, decodePolicy, defaultPolicy } from '../auth/approvals.js';
import { type AuditItem, auditEntryItems } from '../auth/audit.js';
import { type Member, decodeMember } from '../auth/members.js';
import { assetsMax, integratingPartiesMax, movementsMergeMax, movementsScanChunkEntries, movementsScanMax, statementMovementsMax, trialBalanceGrossBalancesMax, trialBalanceLinesScanFactor } from '../constants.js';
import { type Refusal, refusal, refuse } from '../errors.js';
import type { Account, Asset, Balance, Head, Identity, Operation, Posting } from '../model/model.js';
import { zeroBalance } from '../model/model.js';
import { readTotals, totalMinor } from '../book/totals.js';
import { readOperations } from './operation-records.js';
import type { ReadView, Snapshot } from '../store/port.js';
import { pagedEntries } from '../store/paged.js';
import { type AccountId, type AssetSymbol, type IdentityId, isAccountId } from '../model/values.js';
import { approvalPolicyKey, auditKey, auditPrefix, keys, proposalIdKey, proposalKey, proposalPrefix, memberPrefix, overGrantPrefix, parseSeqHex, partyGrantPrefix, partyPrefix, prefixEnd, seqHex } from '../model/keys.js';

export interface StatementQuery {
  readonly account: AccountId;
  readonly asset: AssetSymbol;
  readonly fromMs: number;
  readonly toMs: number;
  readonly asOf: number | null;
}

export interface Statement {
  readonly account: AccountId;
  readonly asset: AssetSymbol;
  readonly closed: boolean;
  readonly fromMs: number;
  readonly toMs: number;
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly opening: Balance;
  readonly closing: Balance;
  readonly movements: readonly Posting[];
}

export interface MovementsQuery {
  readonly account: AccountId | null;
  readonly identity: IdentityId | null;
  readonly limit: number;
  readonly fromMs: number | null;
  readonly toMs: number | null;
  readonly asset: AssetSymbol | null;
  readonly direction: 'debit' | 'credit' | null;
  readonly cursor: string | null;
}

export interface MovementsPage {
  readonly movements: readonly Posting[];
  readonly next: string | null;
  readonly view: number;
}

/** One page of an identity's accounts (CONTRACT 11), in identifier order. */
export interface AccountsPage {
  readonly items: readonly Account[];
  /** The cursor of the next page, when more follow. */
  readonly next: string | null;
  readonly view: number;
}

/** A page of the trial balance's lines (`trialBalanceLines`); `next` is the last balance key read (account/asset), when more may follow. */
export interface TrialBalanceLines {
  readonly items: readonly { account: AccountId; asset: AssetSymbol; layers: Balance }[];
  readonly next: string | null;
  readonly view: number;
}

export interface TrialBalance {
  readonly accounts: number;
  /** Per asset: the signed sum of every balance, and that sum layer by layer. */
  readonly rows: readonly { asset: AssetSymbol; openingsMinor: bigint; layers: Balance }[];
  readonly unbalanced: readonly { currency: number; layer: number }[];
  readonly view: number;
}

/** The command sequence number an operation reference was drawn for (IdSource.cseqOf). */
export type CseqOf = (ref: string) => number | null;

/** Balances read a page for the trial balance's debits and credits. */
const grossPageEntries = 1000;

const cursorSeqHexLength = 16;
const cursorFilterHexLength = 16;

/** A read-only view of the book at one journal position. Close it when done. */
export class BookView {
  private constructor(
    private readonly snap: Snapshot,
    readonly head: Head,
    private readonly assets: ReadonlyMap<string, Asset>,
    private readonly principals: Principals,
    /** Decision times after this view are at least this (statement `closed`). */
    private readonly timeFloorMs: number,
    private readonly cseqOf: CseqOf,
  ) {}

  static async open(snap: Snapshot, assets: ReadonlyMap<string, Asset>, principals: Principals, timeFloorMs: number, cseqOf: CseqOf): Promise<BookView> {
    const headText = await snap.get(keys.head);
    assert(headText !== undefined, 'a sealed book has a head');
    return new BookView(snap, decodeHead(headText), assets, principals, timeFloorMs, cseqOf);
  }

  get view(): number {
    return this.head.postingSeq;
  }

  close(): Promise<void> {
    return this.snap.close();
  }

  /** The view's records, for the operator's listings (ops-listings.ts), which read key spaces of their own. */
  get records(): ReadView {
    return this.snap;
  }

  async account(id: AccountId): Promise<Account | undefined> {
    const text = await this.snap.get(keys.account(id));
    return text === undefined ? undefined : decodeAccount(text, keys.account(id));
  }

  async identity(id: IdentityId): Promise<Identity | undefined> {
    const text = await this.snap.get(keys.identity(id));
    return text === undefined ? undefined : decodeIdentity(text, keys.identity(id));
  }

  /** Unknown and unreachable give the same refusal: only the operator learns that an account does not exist. */
  private unreachable(actor: Actor, id: AccountId): never {
    const r = unreachableAccount(actor, id, this.principals);
    refuse(r.error, r.description);
  }

  /** An account the actor reaches; unknown and unreachable give the same refusal. */
  async reachableAccount(actor: Actor, id: AccountId): Promise<Account> {
    const account = await this.account(id);
    if (account === undefined || !reaches(actor, account, this.principals)) this.unreachable(actor, id);
    return account;
  }

  /**
   * The account view's reach (spec endpoint 12): whoever reaches the account, and a
   * holder of a live grant over its owner (within the credential's scope).
   */
  async viewableAccount(actor: Actor, id: AccountId): Promise<Account> {
    const account = await this.account(id);
    if (account === undefined) this.unreachable(actor, id);
    if (reaches(actor, account, this.principals)) return account;
    if (!inScope(actor, id) || !(await this.holdsGrantOver(actor.principal, account.owner))) this.unreachable(actor, id);
    return account;
  }

  /**
   * The balances' reach (CONTRACT 11): whoever reaches the account, and a holder of a
   * live grant that names this account (within the credential's scope); a grant over
   * another account of the same owner reads only the account view.
   */
  async balancesAccount(actor: Actor, id: AccountId): Promise<Account> {
    const account = await this.account(id);
    if (account === undefined) this.unreachable(actor, id);
    if (reaches(actor, account, this.principals)) return account;
    const named = inScope(actor, id) && (await holdsLiveGrantOver(this.snap, actor.principal, account.owner, this.timeFloorMs, (g) => grantNamesAccount(g, account)));
    if (!named) this.unreachable(actor, id);
    return account;
  }

  /**
   * Why `caller` may not name `identity` in `on-behalf-of`, or null when it may: an
   * identity of the book over which it holds a live grant (the operator and the
   * identities principal: any). One whose grants over it were revoked is told so
   * (ERR-AuthorityRevoked, CONTRACT 5), as the use of a revoked grant is everywhere.
   */
  async onBehalfOfRefusal(caller: IdentityId, identity: IdentityId): Promise<Refusal | null> {
    const notAuthorised = refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers acting on behalf of ${identity}`);
    if ((await this.snap.get(keys.identity(identity))) === undefined) return notAuthorised;
    if (caller === this.principals.operator || caller === this.principals.identities || (await this.holdsGrantOver(caller, identity))) return null;
    return (await heldRevokedGrantOver(this.snap, caller, identity)) ? refusal('ERR-AuthorityRevoked', `the grants ${caller} held over ${identity} were revoked`) : notAuthorised;
  }

  /** Whether `holder` holds a live grant over `identity` (it may act on its behalf). */
  holdsGrantOver(holder: IdentityId, identity: IdentityId): Promise<boolean> {
    return holdsLiveGrantOver(this.snap, holder, identity, this.timeFloorMs);
  }

  /**
   * Grants over an identity (endpoint 15), a page at a time: all of them to the
   * identity itself, the operator and the identities principal; to anyone else those
   * it holds or gave, and ERR-NotAuthorised when there are none. A scoped credential
   * sees only grants over one account within its scope.
   */
  async identityGrants(actor: Actor, identity: IdentityId, q: GrantPageQuery): Promise<GrantPage> {
    const { operator, identities } = this.principals;
    const inView = (g: Grant) => grantWithinScope(g, actor.scope);
    if (actor.principal === identity || actor.principal === operator || actor.principal === identities) return grantPage(this.snap, overGrantPrefix(identity), q, inView);
    const own = partyGrantPrefix(identity, actor.principal);
    if (!(await anyUnder(this.snap, own))) refuse('ERR-NotAuthorised', `the initiating principal holds no authority that covers the grants over ${identity}`);
    return grantPage(this.snap, own, q, inView);
  }

  /** Grants that can touch an account (endpoint 16), a page at a time: the operator's or the owner's to read. */
  async accountGrants(actor: Actor, id: AccountId, q: GrantPageQuery): Promise<GrantPage> {
    const account = await this.account(id);
    const mayList = account !== undefined && inScope(actor, id) && (actor.principal === this.principals.operator || actor.principal === account.owner);
    if (!mayList) this.unreachable(actor, id);
    return grantPage(this.snap, overGrantPrefix(account.owner), q, (g) => grantCoversAccount(g, account));
  }

  /** Integrating parties, in identifier order (bounded by registration). */
  async parties(): Promise<Party[]> {
    const out: Party[] = [];
    for await (const [, text] of this.snap.entries({ gte: partyPrefix, lt: prefixEnd(partyPrefix), limit: integratingPartiesMax })) out.push(decodeParty(text));
    return out;
  }

  /**
   * A page of the audit trail, oldest first, after `afterSeq`: at most `limit` items, of
   * `member` alone when named. A filtered page reads at most `auditScanMax` items, so it
   * may hold fewer than `limit` and still carry `next` (the seq to go on after).
   */
  async audit(q: { afterSeq: number; limit: number; member: string | null }): Promise<{ items: AuditItem[]; nextAfterSeq: number | null }> {
    const items: AuditItem[] = [];
    let last = q.afterSeq;
    let scanned = 0;
    // A chunk (`au/<first seq>`) may begin before the item after the cursor: start at the entry holding it.
    let from = auditKey(q.afterSeq + 1);
    for await (const [key] of this.snap.entries({ gte: auditPrefix, lte: from, reverse: true, limit: 1 })) from = key;
    read: for await (const [key, text] of this.snap.entries({ gte: from, lt: prefixEnd(auditPrefix), limit: auditScanMax })) {
      for (const item of auditEntryItems(key, text)) {
        if (item.seq <= q.afterSeq) continue;
        last = item.seq;
        scanned++;
        if (q.member === null || item.member === q.member) items.push(item);
        if (items.length === q.limit || scanned === auditScanMax) break read;
      }
    }
    const more = items.length === q.limit || scanned === auditScanMax;
    return { items, nextAfterSeq: more ? last : null };
  }

  /**
   * A page of proposals, newest first, before `beforeCseq` (the cursor) when given: at most
   * `limit`, of `state` alone when named (as at `nowMs`: an open one past its time is
   * expired). A filtered page reads at most `proposalScanMax` and may hold fewer with `next`.
   */
  async proposals(q: { beforeCseq: number | null; limit: number; state: ProposalState | null; nowMs: number }): Promise<{ items: Proposal[]; nextBeforeCseq: number | null }> {
    const items: Proposal[] = [];
    let last: number | null = null;
    let scanned = 0;
    const lt = q.beforeCseq === null ? prefixEnd(proposalPrefix) : proposalKey(q.beforeCseq);
    for await (const [, text] of this.snap.entries({ gte: proposalPrefix, lt, limit: proposalScanMax, reverse: true })) {
      const p = decodeProposal(text);
      last = p.cseq;
      scanned++;
      if (q.state === null || stateAt(p, q.nowMs) === q.state) items.push(p);
      if (items.length === q.limit) break;
    }
    const more = items.length === q.limit || scanned === proposalScanMax;
    return { items, nextBeforeCseq: more ? last : null };
  }

  /** One proposal by id, or undefined. */
  async proposal(id: string): Promise<Proposal | undefined> {
    const cseq = await this.snap.get(proposalIdKey(id));
    const text = cseq === undefined ? undefined : await this.snap.get(proposalKey(Number(cseq)));
    return text === undefined ? undefined : decodeProposal(text);
  }

  /** The approval policy in force (CONTRACT 13). */
  async approvalPolicy(): Promise<ApprovalPolicy> {
    const text = await this.snap.get(approvalPolicyKey);
    return text === undefined ? defaultPolicy : decodePolicy(text);
  }

  /** Every member of the operator, removed ones too (CONTRACT 13), in name order. */
  async members(): Promise<Member[]> {
    const out: Member[] = [];
    for await (const [, text] of this.snap.entries({ gte: memberPrefix, lt: prefixEnd(memberPrefix), limit: membersMax })) out.push(decodeMember(text));
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.addedAtMs - b.addedAtMs));
  }

  /** Every asset the account has held (each has a balance record from its first posting), in symbol order. */
  async balances(account: AccountId): Promise<{ asset: AssetSymbol; balance: Balance }[]> {
    const prefix = keys.accountBalancesPrefix(account);
    const out: { asset: AssetSymbol; balance: Balance }[] = [];
    for await (const [key, text] of this.snap.entries({ gte: prefix, lt: prefixEnd(prefix), limit: assetsMax })) {
      out.push({ asset: key.slice(prefix.length) as AssetSymbol, balance: decodeBalanceText(text) });
    }
    return out;
  }

  /**
   * The accounts an identity owns (CONTRACT 11), read by the owner, the operator and the identities
   * principal; a scoped credential sees only the accounts in its scope. An unknown identity owns none.
   */
  async accountsOf(actor: Actor, owner: IdentityId, limit: number, cursor: string | null): Promise<AccountsPage> {
    const { operator, identities } = this.principals;
    if (actor.principal !== owner && actor.principal !== operator && actor.principal !== identities) {
      refuse('ERR-NotAuthorised', `the initiating principal holds no authority that covers the accounts of ${owner}`);
    }
    const text = await this.snap.get(keys.identity(owner));
    const owned = text === undefined ? [] : decodeIdentity(text, keys.identity(owner)).accounts;
    const after = cursor === null ? null : parseAccountCursor(cursor);
    const ids = owned.filter((id) => inScope(actor, id) && (after === null || id > after)).sort();
    const page = ids.slice(0, limit);
    const items = await Promise.all(
      page.map(async (id) => {
        const account = await this.account(id);
        assert(account !== undefined && account.owner === owner, `account ${id} of ${owner} exists and is owned by it`);
        return account;
      }),
    );
    return { items, next: ids.length > limit ? accountCursor(page[page.length - 1]!) : null, view: this.view };
  }

  async balance(account: AccountId, asset: AssetSymbol): Promise<Balance> {
    const text = await this.snap.get(keys.balance(account, asset));
    return text === undefined ? zeroBalance : decodeBalanceText(text);
  }

  operation(ref: string): Promise<Operation | undefined> {
    return readOperation(this.snap, ref, this.cseqOf);
  }

  /** A settlement record (src/settlement/book.ts) as of this view. */
  settlementRecord(key: string): Promise<string | undefined> {
    return this.snap.get(key);
  }

  /** Alias lookup (spec endpoint 14). */
  async alias(actor: Actor, source: string, name: string): Promise<AccountId> {
    const target = await this.snap.get(keys.alias(source, name));
    if (target === undefined) {
      if ((await this.snap.get(keys.archived(source, name))) !== undefined) {
        refuse('ERR-IdentifierArchived', `${source}:${name} names a prior system's identifier the initial state left out`);
      }
      refuse('ERR-UnknownAccount', 'no account with that alias is reachable by the caller');
    }
    const account = await this.account(target as AccountId);
    if (account === undefined || !reaches(actor, account, this.principals)) refuse('ERR-UnknownAccount', 'no account with that alias is reachable by the caller');
    return account.id;
  }

  // ---------------------------------------------------------------- statements

  async statement(actor: Actor, q: StatementQuery): Promise<Statement> {
    if (q.fromMs > q.toMs) refuse('ERR-QueryUnbounded', 'from is after to');
    if (q.asOf !== null && q.asOf > this.view) refuse('ERR-QueryUnbounded', `as_of ${q.asOf} is a view the book has not reached (now ${this.view})`);
    if (!this.assets.has(q.asset)) refuse('ERR-UnknownAsset', `asset ${q.asset} is not registered`);
    await this.reachableAccount(actor, q.account);
    const view = q.asOf ?? this.view;
    const fromSeq = await this.firstSeqAtOrAfter(q.fromMs, view);
    const endSeq = await this.firstSeqAtOrAfter(q.toMs, view);
    const prefix = keys.accountAsset(q.account, q.asset, 0).slice(0, -16);

    let opening = zeroBalance;
    for await (const [key, text] of this.snap.entries({ gte: prefix, lt: prefix + seqHex(fromSeq), reverse: true, limit: 1 })) opening = decodeIndexedPosting(key, text).after;
    const texts: [string, string][] = [];
    for await (const entry of this.snap.entries({ gte: prefix + seqHex(fromSeq), lt: prefix + seqHex(endSeq), limit: statementMovementsMax + 1 })) texts.push(entry);
    if (texts.length > statementMovementsMax) refuse('ERR-QueryUnbounded', `the period holds more than ${statementMovementsMax} movements; ask for a shorter one`);
    const movements = texts.map(([key, text]) => decodeIndexedPosting(key, text));
    return {
      account: q.account,
      asset: q.asset,
      closed: q.toMs <= this.timeFloorMs,
      fromMs: q.fromMs,
      toMs: q.toMs,
      fromSeq,
      toSeq: endSeq - 1,
      opening,
      closing: movements.length > 0 ? movements[movements.length - 1]!.after : opening,
      movements,
    };
  }

  /**
   * The first journal position in 1..view+1 whose entry is at or after `atMs`
   * (view+1 when none is). Entry times never decrease with the sequence and a chunk's
   * entries share one time, so the first chunk in the time index at or after `atMs`
   * answers it in one seek.
   */
  private async firstSeqAtOrAfter(atMs: number, view: number): Promise<number> {
    const from = keys.journalTime(Math.max(0, atMs), 0);
    for await (const [key] of this.snap.entries({ gte: from, lt: prefixEnd(keys.journalTimePrefix), limit: 1 })) {
      return Math.min(parseSeqHex(key.slice(from.length - 16)), view + 1);
    }
    return view + 1;
  }

  // ---------------------------------------------------------------- movements

  async movements(actor: Actor, q: MovementsQuery): Promise<MovementsPage> {
    if (q.asset !== null && !this.assets.has(q.asset)) refuse('ERR-UnknownAsset', `asset ${q.asset} is not registered`);
    const prefixes = await this.indexPrefixes(await this.subjectAccounts(actor, q), q.asset);
    const fingerprint = filterFingerprint(q);
    let startSeq = q.fromMs === null ? 1 : await this.firstSeqAtOrAfter(q.fromMs, this.view);
    if (q.cursor !== null) startSeq = Math.max(startSeq, parseCursor(q.cursor, fingerprint, this.view));
    const endSeq = q.toMs === null ? this.view + 1 : await this.firstSeqAtOrAfter(q.toMs, this.view);

    const source = new MergedSeqs(this.snap, prefixes, startSeq, endSeq);
    try {
      return await this.page(q, source, fingerprint);
    } finally {
      await source.close();
    }
  }

  private async page(q: MovementsQuery, source: MergedSeqs, fingerprint: string): Promise<MovementsPage> {
    const out: Posting[] = [];
    let scanned = 0;
    let resumeSeq: number | null = null;
    while (out.length < q.limit) {
      if (scanned >= movementsScanMax) {
        resumeSeq = (await source.peek())?.seq ?? null;
        break;
      }
      // Unfiltered, every entry read goes on the page: read no more than it still lacks.
      const wanted = q.direction === null ? q.limit - out.length : movementsScanChunkEntries;
      const chunk = await source.take(Math.min(wanted, movementsScanChunkEntries, movementsScanMax - scanned));
      if (chunk.length === 0) break;
      for (const [i, entry] of chunk.entries()) {
        scanned++;
        const p = decodeIndexedPosting(entry.key, entry.text);
        if (q.direction === null || p.direction === q.direction) out.push(p);
        if (out.length === q.limit) {
          // Give back what this chunk read past the full page.
          source.unread(chunk.slice(i + 1));
          break;
        }
      }
    }
    if (out.length === q.limit) resumeSeq = (await source.peek())?.seq ?? null;
    return { movements: out, next: resumeSeq === null ? null : makeCursor(resumeSeq, fingerprint), view: this.view };
  }

  /** The (account, asset) indexes a movements read merges: the asset named, or every asset each account holds. */
  private async indexPrefixes(accounts: readonly AccountId[], asset: AssetSymbol | null): Promise<string[]> {
    const prefixes: string[] = [];
    for (const account of accounts) {
      if (asset !== null) {
        prefixes.push(keys.accountAssetPrefix(account, asset));
        continue;
      }
      const balances = keys.accountBalancesPrefix(account);
      for await (const [key] of this.snap.entries({ gte: balances, lt: prefixEnd(balances), limit: assetsMax })) {
        prefixes.push(keys.accountAssetPrefix(account, key.slice(balances.length)));
      }
    }
    if (prefixes.length > movementsMergeMax) refuse('ERR-QueryUnbounded', `the read spans ${prefixes.length} account-asset pairs, more than ${movementsMergeMax}; filter by account or asset`);
    return prefixes;
  }

  private async subjectAccounts(actor: Actor, q: MovementsQuery): Promise<AccountId[]> {
    if (q.account !== null) return [(await this.reachableAccount(actor, q.account)).id];
    assert(q.identity !== null, 'movements name an account or an identity');
    const text = await this.snap.get(keys.identity(q.identity));
    const identity = text === undefined ? undefined : decodeIdentity(text, keys.identity(q.identity));
    const ids = identity?.accounts ?? [];
    const accounts = await Promise.all(ids.map((id) => this.account(id)));
    const reached = accounts.filter((a): a is Account => a !== undefined && reaches(actor, a, this.principals)).map((a) => a.id);
    if (reached.length === 0 && actor.principal !== q.identity && actor.principal !== this.principals.operator && actor.principal !== this.principals.identities) {
      refuse('ERR-NotAuthorised', 'the initiating principal holds no authority that covers any account of that identity');
    }
    return reached;
  }

  // ---------------------------------------------------------------- trial balance

  async trialBalance(asset: AssetSymbol | null): Promise<TrialBalance> {
    if (asset !== null && !this.assets.has(asset)) refuse('ERR-UnknownAsset', `asset ${asset} is not registered`);
    // The totals every round keeps (src/book/totals.ts): one read per asset, however large the book.
    const symbols = [...this.assets.keys()].filter((a) => asset === null || a === asset);
    const totals = await readTotals(this.snap, symbols);
    const rows = [...totals.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([symbol, layers]) => ({ asset: symbol as AssetSymbol, openingsMinor: totalMinor(layers), layers }));
    return {
      accounts: this.head.accounts,
      rows,
      unbalanced: rows.filter((r) => r.openingsMinor !== 0n).map((r) => ({ currency: this.assets.get(r.asset)!.code, layer: this.view })),
      view: this.view,
    };
  }

  /**
   * Per asset, the debit balances (accounts whose balance, every layer, is below zero: treasuries)
   * and the credit balances (above zero), both as positive sums: the two columns of an
   * accountant's trial balance, equal when the book balances. The stored totals keep only the net
   * per layer, so this reads every balance: refused past `trialBalanceGrossBalancesMax`.
   */
  async trialBalanceGross(asset: AssetSymbol | null): Promise<Map<string, { debitsMinor: bigint; creditsMinor: bigint }>> {
    const gross = new Map<string, { debitsMinor: bigint; creditsMinor: bigint }>();
    let read = 0;
    // A page at a time (a Postgres book reads each page in one query), one past the bound to know it is passed.
    for await (const [key, value] of pagedEntries(this.snap, keys.balancePrefix, grossPageEntries, trialBalanceGrossBalancesMax + 1)) {
      if (++read > trialBalanceGrossBalancesMax) refuse('ERR-QueryUnbounded', `debits and credits need every balance read, and the book holds more than ${trialBalanceGrossBalancesMax}; read them page by page with accounts=true`);
      const symbol = key.slice(key.lastIndexOf('/') + 1);
      if (asset !== null && symbol !== asset) continue;
      const net = totalMinor(decodeBalanceText(value));
      const sums = gross.get(symbol) ?? { debitsMinor: 0n, creditsMinor: 0n };
      gross.set(symbol, net < 0n ? { ...sums, debitsMinor: sums.debitsMinor - net } : { ...sums, creditsMinor: sums.creditsMinor + net });
    }
    return gross;
  }

  /**
   * The trial balance's lines: each account's balance in each asset (every layer), in key order
   * (account, then asset), `limit` at most, after the position `after` (a previous page's last).
   * At most `limit * trialBalanceLinesScanFactor` balances are read a page, so a filter by asset
   * that matches few ends a page early, with a `next` to go on from.
   */
  async trialBalanceLines(asset: AssetSymbol | null, limit: number, after: string | null): Promise<TrialBalanceLines> {
    if (asset !== null && !this.assets.has(asset)) refuse('ERR-UnknownAsset', `asset ${asset} is not registered`);
    const items: { account: AccountId; asset: AssetSymbol; layers: Balance }[] = [];
    const scanMax = limit * trialBalanceLinesScanFactor;
    let last: string | null = null;
    let scanned = 0;
    const range = { gt: after === null ? keys.balancePrefix : keys.balancePrefix + after, lt: prefixEnd(keys.balancePrefix), limit: scanMax + 1 };
    for await (const [key, value] of this.snap.entries(range)) {
      // One more than a page was read: there is more after the last line kept.
      if (items.length === limit || scanned === scanMax) return { items, next: last, view: this.view };
      scanned++;
      last = key.slice(keys.balancePrefix.length);
      const split = last.lastIndexOf('/');
      const symbol = last.slice(split + 1) as AssetSymbol;
      if (asset === null || symbol === asset) items.push({ account: last.slice(0, split) as AccountId, asset: symbol, layers: decodeBalanceText(value) });
    }
    return { items, next: null, view: this.view };
  }
}

// ---------------------------------------------------------------- cursors

function filterFingerprint(q: MovementsQuery): string {
  const filters = JSON.stringify([q.account, q.identity, q.fromMs, q.toMs, q.asset, q.direction]);
  return bytesToHex(sha256(new TextEncoder().encode(filters))).slice(0, cursorFilterHexLength);
}

/** A cursor is the next journal position to read and a fingerprint of the filters it belongs to. */
function makeCursor(seq: number, fingerprint: string): string {
  return seqHex(seq) + fingerprint;
}

/** The position a cursor names: one a page of this view could end at (1..view+1), else a refusal. */
function parseCursor(cursor: string, fingerprint: string, view: number): number {
  if (cursor.length !== cursorSeqHexLength + cursorFilterHexLength || !/^[0-9a-f]+$/.test(cursor)) {
    refuse('ERR-MalformedCommand', 'cursor is not one this service issued');
  }
  if (cursor.slice(cursorSeqHexLength) !== fingerprint) refuse('ERR-MalformedCommand', 'cursor belongs to a query with other filters');
  const seq = Number.parseInt(cursor.slice(0, cursorSeqHexLength), 16);
  if (!(seq >= 1 && seq <= view + 1)) refuse('ERR-MalformedCommand', 'cursor names no position of the journal');
  return seq;
}

/** An account listing's cursor: the last account of the page as hex, the next page starting after it. */
function accountCursor(last: AccountId): string {
  return bytesToHex(new TextEncoder().encode(last));
}

function parseAccountCursor(cursor: string): AccountId {
  const id = /^(?:[0-9a-f]{2})+$/.test(cursor) ? new TextDecoder().decode(hexToBytes(cursor)) : '';
  if (!isAccountId(id)) refuse('ERR-MalformedCommand', 'cursor is not one this service issued');
  return id;
}

// ---------------------------------------------------------------- merged index reads

/** An index entry: its journal position and the posting it carries. */
interface IndexedEntry {
  readonly seq: number;
  readonly key: string;
  readonly text: string;
}

/**
 * The entries of some (account, asset) indexes, in journal order, read by seeking
 * each index and merging.
 */
class MergedSeqs {
  private readonly heads: { iterator: AsyncIterator<[string, string]>; prefix: string; current: IndexedEntry | null }[] = [];
  private started = false;
  private returned: IndexedEntry[] = [];

  constructor(
    private readonly snap: Snapshot,
    private readonly prefixes: readonly string[],
    private readonly startSeq: number,
    private readonly endSeq: number,
  ) {}

  private async start(): Promise<void> {
    this.started = true;
    if (this.startSeq >= this.endSeq) return;
    for (const prefix of this.prefixes) {
      // A page reads at most movementsScanMax entries, and one more for its cursor.
      const iterator = this.snap.entries({ gte: prefix + seqHex(this.startSeq), lt: prefix + seqHex(this.endSeq), limit: movementsScanMax + 1 })[Symbol.asyncIterator]();
      const head = { iterator, prefix, current: null as IndexedEntry | null };
      await this.advance(head);
      this.heads.push(head);
    }
  }

  private async advance(head: (typeof this.heads)[number]): Promise<void> {
    const r = await head.iterator.next();
    head.current = r.done ? null : { seq: parseSeqHex(r.value[0].slice(head.prefix.length)), key: r.value[0], text: r.value[1] };
  }

  async peek(): Promise<IndexedEntry | undefined> {
    if (this.returned.length > 0) return this.returned[0];
    if (!this.started) await this.start();
    let min: IndexedEntry | undefined;
    for (const h of this.heads) if (h.current !== null && (min === undefined || h.current.seq < min.seq)) min = h.current;
    return min;
  }

  async take(n: number): Promise<IndexedEntry[]> {
    const out = this.returned.splice(0, n);
    while (out.length < n) {
      const next = await this.peek();
      if (next === undefined) break;
      const head = this.heads.find((h) => h.current === next)!;
      out.push(next);
      await this.advance(head);
    }
    return out;
  }

  unread(entries: readonly IndexedEntry[]): void {
    this.returned = [...entries, ...this.returned];
  }

  async close(): Promise<void> {
    await Promise.all(this.heads.map((h) => h.iterator.return?.()));
  }
}

/**
 * An operation by reference: decided ones through `op/`, undecided ones in the intake chunk
 * of their cseq (operation-records.ts). `op/` is read first, since a chunk lives until its
 * last command is decided; a command decided (and its chunk deleted) between the two reads
 * is found by reading `op/` again.
 */
export async function readOperation(view: ReadView, ref: string, cseqOf: CseqOf): Promise<Operation | undefined> {
  // A reference no command was drawn for may still name a decided operation of an older id scheme.
  return (await readOperations(view, [{ ref, cseq: cseqOf(ref) }]))[0];
}

/** A stored integrating party (`party/`), checked. */
function decodeParty(text: string): Party {
  const what = 'party';
  const j = recordJson(text, what);
  check.string(j, 'id', what);
  check.integer(j, 'registeredAtMs', what);
  const principals = j.principals;
  if (!Array.isArray(principals)) damaged(what, 'principals is not a list');
  for (const tie of principals) {
    if (typeof tie !== 'object' || tie === null) damaged(what, 'a principal tie is not an object');
    check.string(tie as Json, 'principal', what);
    check.integer(tie as Json, 'tiedAtMs', what);
  }
  return j as unknown as Party;
}
