/**
 * What a round (or an intake round) reads, from the cache or the store: everything its
 * decisions need, in one store round trip per kind where it can, so that deciding
 * (round-builder.ts, decide/precheck.ts) reads only what is prefetched.
 */
import { type Actor, type Principals, actingAuthority, debitKind, opensAccountFor } from '../auth/authority.js';
import { loadHeldGrants, loadIssuance, loadList, loadRevocation } from '../auth/grant-loader.js';
import * as bounds from '../constants.js';
import { custodyNeeds, restrictable } from '../custody/decide-custody.js';
import { type DirectCommand, recordNeeds } from '../decide/decide-auth.js';
import { precheckNeeds } from '../decide/precheck.js';
import { decodeAccount, decodeBalanceText, decodeIdentity } from '../model/codec.js';
import type { IdSource } from '../model/ids.js';
import { type ExpirySpace, approvalPolicyKey, expiryScanEnd, expirySpaces, keys, memberKey, memberPrefix, proposalIdKey, proposalsOpenKey, partyPrefix, settlementKeys } from '../model/keys.js';
import { commandRole } from '../auth/members.js';
import { decodeProposal, proposalByIdKey, proposalIdOf } from '../auth/proposals.js';
import { type Account, type Asset, type Balance, type Command, type Identity, type Operation, isCustodyCommand, zeroBalance } from '../model/model.js';
import type { AccountId, GrantId } from '../model/values.js';
import { readOperation } from '../queries/queries.js';
import { settlementFollowUps, settlementNeeds } from '../settlement/prefetch.js';
import type { Store } from '../store/port.js';
import type { GenerationalCache } from './cache.js';
import { Overlay } from './overlay.js';
import type { RoundReads } from './round-builder.js';

/** The kernel's reads of the committed book, through its cache. */
export class BookReader {
  constructor(
    private readonly store: Store,
    private readonly cache: GenerationalCache<Account | Balance | Identity>,
    private readonly principals: Principals,
    private readonly ids: IdSource,
  ) {}

  async operation(ref: string): Promise<Operation | undefined> {
    return readOperation(this.store, ref, this.ids.cseqOf);
  }

  /**
   * Everything a decision round reads: the overlay its decisions read, then what the
   * round prunes (read here so that building it reads nothing): the expiry index entries
   * of challenges and sessions expired by `atMs` when `pruneAuth`.
   */
  async roundReads(
    assets: ReadonlyMap<string, Asset>,
    atMs: number,
    batch: readonly Operation[],
    expiring: readonly Operation[],
    direct: readonly DirectCommand[],
    pruneAuth: boolean,
  ): Promise<RoundReads> {
    const overlay = await this.prefetch(assets, batch, expiring, direct);
    const expiredAuth = pruneAuth ? await this.expiredAuth(atMs) : null;
    return { overlay, expiredAuth };
  }

  /** Expired challenges' and sessions' index entries (a bounded number of each), challenges first. */
  private async expiredAuth(atMs: number): Promise<string[]> {
    const out: string[] = [];
    for (const space of ['chalx', 'tokx'] as const satisfies readonly ExpirySpace[]) {
      for await (const [key] of this.store.entries({ gte: expirySpaces[space], lt: expiryScanEnd(space, atMs), limit: bounds.expiriesPerWriteMax })) out.push(key);
    }
    return out;
  }

  /** Reads everything a round's decisions need, from the cache or in one store round trip per kind. */
  private async prefetch(assets: ReadonlyMap<string, Asset>, batch: readonly Operation[], expiring: readonly Operation[], direct: readonly DirectCommand[]): Promise<Overlay> {
    const overlay = new Overlay(assets);
    await this.loadRecords(overlay, [...batch.map((op) => op.command), ...direct].flatMap(recordNeeds));
    await this.loadMembers(overlay, batch);
    await this.loadProposals(overlay, proposalNeeds(batch, direct));
    const accountIds = new Set<string>();
    const balanceKeys = new Set<string>();
    const identityIds = new Set<string>();
    const needBalance = (account: string, asset: string) => {
      accountIds.add(account);
      balanceKeys.add(overlay.balanceKey(account, asset));
    };

    const reservationRefs = new Set<string>();
    for (const op of batch) {
      const c = op.command;
      if (c.type === 'capture' || c.type === 'release') reservationRefs.add(c.reservation);
    }
    const inBatch = reservationRefs.size === 0 ? null : new Set(batch.map((op) => op.ref));
    for (const ref of reservationRefs) {
      if (inBatch!.has(ref)) continue;
      const op = await this.operation(ref);
      if (op) overlay.operations.set(op.ref, op);
    }
    for (const op of expiring) overlay.operations.set(op.ref, op);
    for (const op of batch) overlay.operations.set(op.ref, op);

    for (const op of expiring) needBalance(op.hold!.payer, op.hold!.asset);
    /** Accounts whose every balance a decision reads (a recovery's sweep, a close). */
    const wholeAccounts = new Set<string>();
    for (const op of batch) {
      const c = op.command;
      // Every command reads its actor's identity: a restricted one's commands are refused (CONTRACT 10).
      if (restrictable(op.actor.principal, this.principals)) identityIds.add(op.actor.principal);
      if (isCustodyCommand(c)) {
        const needs = custodyNeeds(c, null);
        for (const id of needs.accounts) accountIds.add(id);
        for (const id of needs.identities) identityIds.add(id);
        // A recovery's sweep and a close read every balance of the account.
        if (c.type === 'complete_custody_change' || c.type === 'close_account') wholeAccounts.add(c.account);
        continue;
      }
      switch (c.type) {
        case 'transfer':
          for (const leg of c.legs) {
            needBalance(leg.from, leg.asset);
            needBalance(leg.to, leg.asset);
          }
          break;
        case 'reserve':
          needBalance(c.payer, c.asset);
          break;
        case 'capture':
        case 'release': {
          const reservation = overlay.operations.get(c.reservation);
          if (reservation?.command.type === 'reserve') {
            needBalance(reservation.command.payer, reservation.command.asset);
            if (c.type === 'capture') needBalance(c.to, reservation.command.asset);
          }
          if (c.type === 'capture') accountIds.add(c.to);
          break;
        }
        case 'open_account':
          identityIds.add(c.owner);
          accountIds.add(this.ids.accountId(op.cseq));
          break;
        case 'create_identity':
          identityIds.add(this.ids.identityId(op.cseq));
          break;
        case 'register_credential':
          identityIds.add(c.identity);
          break;
        case 'issue_grant':
          for (const id of precheckNeeds(c).accounts) accountIds.add(id);
          break;
        case 'revoke_grant':
          break;
        case 'set_member_role':
        case 'remove_member':
          break;
        case 'register_party':
          for (const principal of c.principals) identityIds.add(principal);
          await loadList(this.store, overlay, partyPrefix, bounds.integratingPartiesMax);
          break;
        case 'withdraw':
          needBalance(c.account, c.asset);
          await loadList(this.store, overlay, settlementKeys.accountPendingPrefix(c.account), bounds.pendingWithdrawalsPerAccountMax);
          break;
        case 'register_asset':
        case 'deprecate_asset':
          break;
        case 'bind_asset':
        case 'settle':
        case 'observe': {
          // Two steps: the records the layer's facts name, then the accounts and withdrawals those records name.
          const recordKeys = settlementNeeds(c).filter((key) => !overlay.records.has(key));
          const texts = await this.store.getMany(recordKeys);
          for (const [i, key] of recordKeys.entries()) overlay.records.set(key, texts[i]);
          for (const ref of settlementFollowUps(c, overlay).operations) {
            if (overlay.operations.has(ref)) continue;
            const found = await this.operation(ref);
            if (found) overlay.operations.set(ref, found);
          }
          // Read again now that the withdrawals are in: their accounts and balances.
          const followUps = settlementFollowUps(c, overlay);
          for (const [account, asset] of followUps.balances) needBalance(account, asset);
          for (const account of followUps.accounts) accountIds.add(account);
          break;
        }
      }
    }
    await this.load(overlay.accounts, [...accountIds].map((id) => overlay.accountKey(id)), decodeAccount);
    await this.prefetchCompletions(overlay, assets, batch, needBalance, identityIds);
    for (const id of wholeAccounts) for (const asset of assets.keys()) needBalance(id, asset);
    await this.load(overlay.identities, [...identityIds].map(keys.identity), decodeIdentity);
    // A balance never stored reads as zero.
    await this.load(overlay.balances, [...balanceKeys], decodeBalanceText, zeroBalance);
    const owners = roundOwners(batch, overlay);
    // Only an issuance draws its grant's id.
    for (const op of batch) {
      const loading = this.loadGrantNeeds(overlay, op.command, { ...op.actor, scope: op.scope }, op.command.type === 'issue_grant' ? this.ids.grantId(op.cseq) : null, owners);
      if (loading !== undefined) await loading;
    }
    return overlay;
  }

  /**
   * What completing a custody change reads besides the account: the change's new owner
   * and the recovery's destination, every balance of which the sweep may credit; and what
   * a close reads: the owner, whose closed accounts stop counting toward its bound. The
   * change is on the committed account record: the precheck accepted the completion only
   * once the change was decided, so it was opened in an earlier round.
   */
  private async prefetchCompletions(overlay: Overlay, assets: ReadonlyMap<string, Asset>, batch: readonly Operation[], needBalance: (account: string, asset: string) => void, identityIds: Set<string>): Promise<void> {
    const extra = new Set<string>();
    for (const op of batch) {
      const c = op.command;
      if (c.type !== 'complete_custody_change' && c.type !== 'close_account') continue;
      const needs = custodyNeeds(c, { account: (id) => overlay.accounts.get(keys.account(id)) });
      for (const id of needs.identities) identityIds.add(id);
      for (const id of needs.accounts) {
        if (!overlay.accounts.has(keys.account(id))) extra.add(id);
        for (const asset of assets.keys()) needBalance(id, asset);
      }
    }
    await this.load(overlay.accounts, [...extra].map(keys.account), decodeAccount);
  }

  /**
   * The member record of each operator command's credential (the decision checks it is
   * live and its role, CONTRACT 13), and every member when a command changes members.
   */
  private async loadMembers(overlay: Overlay, batch: readonly Operation[]): Promise<void> {
    const acting = batch.filter((op) => op.actor.principal === this.principals.operator).map((op) => memberKey(op.actor.credential));
    const changing = batch.some((op) => commandRole(op.command) === 'admin');
    const all = changing ? (await loadList(this.store, overlay, memberPrefix, bounds.membersMax)).map(memberKey) : [];
    await this.loadRecords(overlay, [...new Set([...acting, ...all])].filter((key) => !overlay.records.has(key)));
  }

  /**
   * What proposal decisions read (CONTRACT 13): the policy and the member's open list for a
   * new one; for a rejection or an approval, the proposal (by id, then its record), its
   * proposer's open list and the approver's member record. A proposal made earlier in the
   * same round is in the overlay by then.
   */
  private async loadProposals(overlay: Overlay, needs: readonly { proposal: string | null; approver: string | null; proposing: string | null }[]): Promise<void> {
    const deciding = needs.flatMap((n) => (n.proposal === null ? [] : [n.proposal]));
    const proposing = needs.flatMap((n) => (n.proposing === null ? [] : [n.proposing]));
    if (deciding.length === 0 && proposing.length === 0) return;
    const missing = (keys: readonly string[]) => [...new Set(keys)].filter((key) => !overlay.records.has(key));
    await this.loadRecords(overlay, missing([
      ...(proposing.length > 0 ? [approvalPolicyKey] : []),
      ...proposing.map(proposalsOpenKey),
      ...deciding.map(proposalIdKey),
      ...needs.flatMap((n) => (n.approver === null ? [] : [memberKey(n.approver)])),
    ]));
    await this.loadRecords(overlay, missing(deciding.flatMap((id) => proposalByIdKey(overlay, id) ?? [])));
    const proposers = deciding.flatMap((id) => {
      const key = proposalByIdKey(overlay, id);
      const text = key === null ? undefined : overlay.records.get(key);
      return text === undefined ? [] : [proposalsOpenKey(decodeProposal(text).proposerCredential)];
    });
    await this.loadRecords(overlay, missing(proposers));
  }

  /** Loads records by key into `overlay` (as stored text; undefined when absent), in one round trip. */
  async loadRecords(overlay: Overlay, recordKeys: readonly string[]): Promise<void> {
    if (recordKeys.length === 0) return;
    const texts = await this.store.getMany(recordKeys);
    for (const [i, key] of recordKeys.entries()) overlay.records.set(key, texts[i]);
  }

  /**
   * Grants a decision (or precheck) of `command` reads: the actor's held grants when
   * it may lack authority of its own over an account it debits, opens or finishes a
   * reservation on (an account unknown now may be opened earlier in the same round),
   * what a grant's issuance or revocation walks. Accounts and reservations are already
   * in the overlay. `newGrant` is the id an issuance would draw (null at intake).
   * Held grants are read per owner reached: the owner of each account as read, and
   * `roundOwners`, every owner an account may get earlier in the same round (none at intake).
   * Undefined when there is nothing to read (most commands): no promise to wait on.
   */
  loadGrantNeeds(overlay: Overlay, command: Command, actor: Actor, newGrant: GrantId | null, roundOwners: readonly string[] = []): Promise<void> | undefined {
    // Methods, not closures made per call: this runs for every command, at intake and in its round.
    switch (command.type) {
      case 'transfer': {
        // Leg by leg (no list of the accounts made).
        let lacks = false;
        for (const leg of command.legs) if ((lacks = this.lacksAuthority(overlay, actor, leg.from))) break;
        return lacks ? loadHeldGrants(this.store, overlay, actor.principal, this.ownersOf(overlay, precheckNeeds(command).accounts, roundOwners)) : undefined;
      }
      case 'reserve':
      case 'withdraw': {
        const accounts = precheckNeeds(command).accounts;
        return accounts.some((id) => this.lacksAuthority(overlay, actor, id)) ? loadHeldGrants(this.store, overlay, actor.principal, this.ownersOf(overlay, accounts, roundOwners)) : undefined;
      }
      case 'capture':
      case 'release': {
        const reservation = overlay.operations.get(command.reservation);
        const payerId = reservation?.command.type === 'reserve' ? reservation.command.payer : undefined;
        const payer = payerId === undefined ? undefined : overlay.accounts.get(keys.account(payerId));
        // Without authority of its own over the payer (the operator has none over an owned account), only a grant serves.
        return payer === undefined || actingAuthority(actor, this.principals, payer) === null ? loadHeldGrants(this.store, overlay, actor.principal, this.ownersOf(overlay, payerId === undefined ? [] : [payerId], roundOwners)) : undefined;
      }
      case 'open_account':
        return opensAccountFor(actor, command.owner, this.principals) ? undefined : loadHeldGrants(this.store, overlay, actor.principal, [command.owner]);
      case 'issue_grant':
        return loadIssuance(this.store, overlay, { grantor: actor.principal, holder: command.terms.principal, terms: command.terms, newGrant });
      case 'revoke_grant':
        return loadRevocation(this.store, overlay, command.grant);
      default:
        return undefined;
    }
  }

  /** Whether the actor may not debit the account by itself (unknown now: it may be opened earlier in the round). */
  private lacksAuthority(overlay: Overlay, actor: Actor, id: AccountId): boolean {
    const account = overlay.accounts.get(overlay.accountKey(id));
    return account === undefined || debitKind(actor, account, this.principals) === null;
  }

  /** The owners of the accounts as read, and every owner an account may get earlier in the round. */
  private ownersOf(overlay: Overlay, ids: readonly string[], roundOwners: readonly string[]): string[] {
    return [...ids.flatMap((id) => overlay.accounts.get(keys.account(id))?.owner ?? []), ...roundOwners];
  }

  /** Reads `storeKeys` into `into`, from the cache or in one round trip; a key not stored gets `absent`. */
  async load<T extends Account | Balance | Identity>(into: Map<string, T | undefined>, storeKeys: readonly string[], decode: (text: string, key: string) => T, absent: T | undefined = undefined): Promise<void> {
    const misses: string[] = [];
    for (const key of storeKeys) {
      const cached = this.cache.get(key) as T | undefined;
      if (cached !== undefined) into.set(key, cached);
      else misses.push(key);
    }
    if (misses.length === 0) return;
    const changesBefore = this.cache.changeCount;
    const texts = await this.store.getMany(misses);
    // A round that landed while the store was read may have set newer values in the cache: these are then used by this caller alone.
    const keep = this.cache.changeCount === changesBefore;
    // Index loops: an entries() iterator makes a pair per key, and this runs for every balance and account a round reads.
    for (let i = 0; i < misses.length; i++) {
      const key = misses[i]!;
      const text = texts[i];
      const value = text === undefined ? undefined : decode(text, key);
      into.set(key, value ?? absent);
      if (value !== undefined && keep) this.cache.set(key, value);
    }
  }
}

/** What each command (and approved act) of a round reads of proposals: the proposal it decides, its approver, the member proposing. */
function proposalNeeds(batch: readonly Operation[], direct: readonly DirectCommand[]): { proposal: string | null; approver: string | null; proposing: string | null }[] {
  const needs: { proposal: string | null; approver: string | null; proposing: string | null }[] = [];
  for (const op of batch) {
    const need = { proposal: proposalIdOf(op), approver: op.approval?.approver ?? null, proposing: op.command.type === 'propose' ? op.actor.credential : null };
    // A command that reads none (a transfer, mostly) adds nothing.
    if (need.proposal !== null || need.approver !== null || need.proposing !== null) needs.push(need);
  }
  for (const d of direct) if (d.type === 'record_act' && d.approval !== undefined) needs.push({ proposal: d.approval.proposal, approver: d.approval.approver, proposing: null });
  return needs;
}

/**
 * Every identity an account may come to be owned by earlier in a round, as the round's
 * grant uses may find it: the owners of accounts the round opens, and both parties of
 * each custody change it completes (a succession hands an account over in place).
 */
function roundOwners(batch: readonly Operation[], overlay: Overlay): string[] {
  const owners = new Set<string>();
  for (const { command: c } of batch) {
    if (c.type === 'open_account') owners.add(c.owner);
    if (c.type === 'complete_custody_change') for (const id of custodyNeeds(c, { account: (id) => overlay.accounts.get(keys.account(id)) }).identities) owners.add(id);
  }
  return [...owners];
}
