/**
 * Grants in the book: giving, revoking and using them. The rules are auth/grants.ts;
 * this module applies them to prefetched records, synchronously, and says what to
 * write. A grant is found for a use by searching the grants the actor holds, in
 * identifier order: the first whose whole chain allows the use is the authority
 * recorded on the postings.
 */
import { assert } from '../assert.js';
import {
  type WindowUsage,
  authorizeUse,
  grantWithinScope,
  decodeGrant,
  decodeWindowUsage,
  emptyWindowUsage,
  encodeGrant,
  encodeWindowUsage,
  grantIssuanceRefusal,
  mayRevoke,
  overIdentity,
  revocationSet,
  revoke,
} from '../auth/grants.js';
import { type Grant, type GrantOp, type GrantTerms } from '../model/model.js';
import { grantChainDepthMax, grantsGivenMax, grantsHeldMax, grantsPerGrantorHolderMax } from '../auth/constants.js';
import { type Actor, type Principals, actingAuthority, authorityToDebit, inScope } from '../auth/authority.js';
import type { RecordWrite } from './decide-auth.js';
import { underOperatorCustody } from '../custody/rule.js';
import { type PrecisionReads, amountText } from '../major-units.js';
import { type Refusal, refusal } from '../errors.js';
import type { Account, Authority, Operation } from '../model/model.js';
import type { AccountId, AssetSymbol, GrantId, IdentityId } from '../model/values.js';
import { givenGrantKey, givenGrantPrefix, grantChildKey, grantChildPrefix, grantKey, grantWindowKey, heldGrantKey, heldGrantPrefix, overGrantKey, partyGrantKey, revokedHeldKey, revokedHeldPrefix } from '../model/keys.js';

/** Grant records and indexes, as prefetched for a round (or an intake). */
export interface GrantReads extends PrecisionReads {
  record(key: string): string | undefined;
  /** Ids under an index prefix (held grants, children), as prefetched: the whole list, or one past its bound. */
  listed(prefix: string): readonly GrantId[];
}

export function readGrant(reads: GrantReads, id: GrantId): Grant | undefined {
  const text = reads.record(grantKey(id));
  return text === undefined ? undefined : decodeGrant(text);
}

/** The grant and each grant it narrows, nearest first; undefined when a link is missing. */
export function chainOf(reads: GrantReads, id: GrantId): Grant[] | undefined {
  const chain: Grant[] = [];
  let next: GrantId | null = id;
  while (next !== null) {
    assert(chain.length < grantChainDepthMax, 'grant chains are bounded at issuance');
    const grant = readGrant(reads, next);
    if (grant === undefined) return undefined;
    chain.push(grant);
    next = grant.terms.parent;
  }
  return chain;
}

/** The writes of a stage that used no grant (most): one shared empty list. */
const noWrites: readonly RecordWrite[] = Object.freeze([]);

/** What one command has used of its grants so far: window usage, and what it moved per grant and asset. */
export class GrantStage {
  // Made on first use: most decisions (a transfer under the actor's own authority) use no grant.
  private usage: Map<GrantId, WindowUsage> | null = null;
  private moved: Map<string, bigint> | null = null;

  usageOf(reads: GrantReads): (id: GrantId) => WindowUsage {
    return (id) => {
      const pending = this.usage?.get(id);
      if (pending) return pending;
      const text = reads.record(grantWindowKey(id));
      return text === undefined ? emptyWindowUsage : decodeWindowUsage(text);
    };
  }

  movedOf(asset: AssetSymbol | null): (id: GrantId) => bigint {
    return (id) => this.moved?.get(`${id} ${asset}`) ?? 0n;
  }

  take(decision: { readonly usage: ReadonlyMap<GrantId, WindowUsage>; readonly moved: ReadonlyMap<GrantId, bigint> }, asset: AssetSymbol | null): void {
    this.usage ??= new Map();
    this.moved ??= new Map();
    for (const [id, usage] of decision.usage) this.usage.set(id, usage);
    for (const [id, minor] of decision.moved) this.moved.set(`${id} ${asset}`, minor);
  }

  /** The window usage records to write if the command is decided. */
  writes(): readonly RecordWrite[] {
    return this.usage === null ? noWrites : [...this.usage].map(([id, u]) => ({ key: grantWindowKey(id), value: encodeWindowUsage(u) }));
  }
}

export interface GrantUseRequest {
  readonly op: GrantOp;
  readonly account: Account;
  readonly asset: AssetSymbol | null;
  readonly counterparty: AccountId | null;
  readonly amountMinor: bigint;
  readonly atMs: number;
}

const noAuthority = (what: string) => refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers ${what}`);

/**
 * The grants `holder` holds over `owner`'s accounts, or a refusal when the list is longer
 * than its bound (a decision never works from a truncated list).
 */
function heldGrants(reads: GrantReads, holder: IdentityId, owner: IdentityId): readonly GrantId[] | Refusal {
  const ids = reads.listed(heldGrantPrefix(holder, owner));
  return ids.length > grantsHeldMax ? refusal('ERR-UnboundedGrant', `${holder} holds more than ${grantsHeldMax} grants over ${owner}'s accounts; revoke some`) : ids;
}

/**
 * The authority a grant the actor holds gives for `use`, its window usage and
 * per-operation totals taken into `stage` (which carries earlier uses of the same
 * command), or the refusal of the grant that came closest (a revoked or bounded grant
 * says so). The authority names the identity whose grant covered the act.
 */
export function grantAuthority(actor: Actor, use: GrantUseRequest, reads: GrantReads, stage: GrantStage): Authority | Refusal {
  // Acting on behalf of an identity, only a grant over that identity's accounts serves.
  if (actor.onBehalfOf !== null && actor.onBehalfOf !== use.account.owner) return noAuthority(`account ${use.account.id} on behalf of ${actor.onBehalfOf}`);
  // A scoped credential uses grants only on the accounts within its scope.
  if (!inScope(actor, use.account.id)) return noAuthority(`account ${use.account.id}`);
  // Only grants over the account's owner can cover it (auth/grants.ts): the search reads those alone.
  const held = heldGrants(reads, actor.principal, use.account.owner);
  if ('error' in held) return held;
  let closest: Refusal | null = null;
  for (const id of held) {
    const chain = chainOf(reads, id);
    if (chain === undefined) continue;
    const decision = authorizeUse(
      chain,
      {
        principal: actor.principal,
        op: use.op,
        account: use.account.id,
        accountOwner: use.account.owner,
        accountCustody: use.account.custody,
        accountKind: use.account.kind,
        asset: use.asset,
        counterparty: use.counterparty,
        amountMinor: use.amountMinor,
        atMs: use.atMs,
      },
      stage.usageOf(reads),
      stage.movedOf(use.asset),
      (amountMinor) => (use.asset === null ? String(amountMinor) : amountText(reads, amountMinor, use.asset)),
    );
    if (decision.ok) {
      stage.take(decision, use.asset);
      const grant = chain[0]!;
      return {
        credential: actor.credential,
        grant: grant.id,
        kind: grant.terms.kind === 'issuance' ? 'issuance' : 'delegated',
        onBehalfOf: use.account.owner,
        principal: actor.principal,
      };
    }
    // A refusal naming the bound tells the holder more than "no authority".
    if (closest === null || decision.refusal.error !== 'ERR-NotAuthorised') closest = decision.refusal;
  }
  if (closest !== null && closest.error !== 'ERR-NotAuthorised') return closest;
  // A grant over the owner that was revoked: its use is ERR-AuthorityRevoked (CONTRACT 5).
  const revoked = reads.listed(revokedHeldPrefix(actor.principal, use.account.owner))[0];
  return revoked === undefined ? (closest ?? noAuthority(`account ${use.account.id}`)) : refusal('ERR-AuthorityRevoked', `grant ${revoked} was revoked`);
}

/** The authority to debit `use.account`: the actor's own (owner, operator), else a grant it holds. */
export function debitAuthority(actor: Actor, use: GrantUseRequest, reads: GrantReads, principals: Principals, stage: GrantStage): Authority | Refusal {
  return authorityToDebit(actor, use.account, principals) ?? custodySays(actor, use, principals, grantAuthority(actor, use, reads, stage));
}

/**
 * The operator refused for want of authority over an owned account is told that custody is why
 * (CONTRACT 8): its own authority covers delegated accounts only.
 */
function custodySays(actor: Actor, use: GrantUseRequest, principals: Principals, found: Authority | Refusal): Authority | Refusal {
  if (!('error' in found) || found.error !== 'ERR-NotAuthorised' || actor.principal !== principals.operator) return found;
  if (underOperatorCustody(use.account) || use.account.kind === 'treasury' || !inScope(actor, use.account.id)) return found;
  return refusal('ERR-NotAuthorised', `owned custody: the operator cannot ${custodyVerbs[use.op] ?? use.op} account ${use.account.id}; only its owner, or a grant its owner gave, can`);
}

const custodyVerbs: Partial<Record<GrantOp, string>> = { transfer: 'debit', withdraw: 'debit', reserve: 'reserve on', capture: 'capture on', release: 'release on' };

/**
 * The authority to finish (capture or release) `reservation`, held against `payer`:
 * the payer's owner and the operator by themselves, anyone else only under a grant
 * naming the op. A caller that neither submitted the reservation nor holds a grant
 * that comes near it does not learn it exists (ERR-UnknownOperation).
 */
export function finishAuthority(
  actor: Actor,
  reservation: Operation,
  payer: Account,
  use: Omit<GrantUseRequest, 'account'> & { readonly op: 'capture' | 'release' },
  reads: GrantReads,
  principals: Principals,
  stage: GrantStage,
): Authority | Refusal {
  const hidden = refusal('ERR-UnknownOperation', `no reservation ${reservation.ref} is visible to the caller`);
  // A scoped credential finishes nothing held against an account outside its scope.
  if (!inScope(actor, payer.id)) return hidden;
  const direct = actingAuthority(actor, principals, payer);
  if (direct !== null) return direct;
  const viaGrant = custodySays(actor, { ...use, account: payer }, principals, grantAuthority(actor, { ...use, account: payer }, reads, stage));
  // Its submitter, and the operator (which sees every operation), learn why; anyone else only that a live grant of its covers the reservation but not this much.
  if (!('error' in viaGrant) || reservation.actor.principal === actor.principal || actor.principal === principals.operator || viaGrant.error === 'ERR-BoundExceeded') return viaGrant;
  return hidden;
}

const isLive = (grant: Grant, atMs: number) => grant.revokedAtMs === null && (grant.terms.expiresAtMs === null || atMs < grant.terms.expiresAtMs);

/**
 * The live grants under an index prefix, and deletions of the entries of grants no
 * longer live (dropped as the list is read, so the index stays within its bound).
 */
function liveUnder(reads: GrantReads, prefix: string, atMs: number): { live: Grant[]; drops: RecordWrite[] } {
  const live: Grant[] = [];
  const drops: RecordWrite[] = [];
  for (const id of reads.listed(prefix)) {
    const grant = readGrant(reads, id);
    if (grant !== undefined && isLive(grant, atMs)) live.push(grant);
    else drops.push({ key: prefix + id, value: null });
  }
  return { live, drops };
}

/**
 * Why `grantor` may not give `holder` one more grant over `over`'s accounts (each bound
 * counts live grants only), with the stale entries to drop. A holder's space is per
 * identity reached: only that identity and those it delegated to share it, each grantor
 * at most its share, so a stranger's grants fill no space the holder needs for anyone else's.
 */
function spaceRefusal(reads: GrantReads, grantor: IdentityId, holder: IdentityId, over: IdentityId, atMs: number): { refusal: Refusal | null; drops: RecordWrite[] } {
  const held = liveUnder(reads, heldGrantPrefix(holder, over), atMs);
  const given = liveUnder(reads, givenGrantPrefix(grantor), atMs);
  const drops = [...held.drops, ...given.drops];
  const fromGrantor = held.live.filter((g) => g.grantor === grantor).length;
  if (fromGrantor >= grantsPerGrantorHolderMax) return { refusal: refusal('ERR-UnboundedGrant', `${holder} already holds ${grantsPerGrantorHolderMax} live grants from ${grantor} over ${over}'s accounts, the most allowed`), drops };
  if (held.live.length >= grantsHeldMax) return { refusal: refusal('ERR-UnboundedGrant', `${holder} already holds ${grantsHeldMax} live grants over ${over}'s accounts, the most allowed`), drops };
  if (given.live.length >= grantsGivenMax) return { refusal: refusal('ERR-UnboundedGrant', `${grantor} has given ${grantsGivenMax} live grants, the most allowed`), drops };
  return { refusal: null, drops };
}

export function decideIssueGrant(
  command: { readonly terms: GrantTerms; readonly justification: string | null },
  actor: Actor,
  reads: GrantReads & { account(id: AccountId): Account | undefined },
  input: { readonly atMs: number; readonly principals: Principals; readonly newGrantId: GrantId },
): { records: RecordWrite[]; grant: GrantId } | Refusal {
  const { terms } = command;
  const parentChain = terms.parent === null ? [] : (chainOf(reads, terms.parent) ?? []);
  const subjectAccount = typeof terms.subject === 'object' && 'account' in terms.subject ? reads.account(terms.subject.account) : undefined;
  // A scoped credential delegates over its own accounts only: one named account within its scope.
  if (!grantWithinScope({ terms }, actor.scope)) return noAuthority('accounts outside its credential scope');
  const children = terms.parent === null ? { live: [], drops: [] } : liveUnder(reads, grantChildPrefix(terms.parent), input.atMs);
  const refused = grantIssuanceRefusal({
    terms,
    grantor: actor.principal,
    principals: input.principals,
    subjectAccountOwner: subjectAccount?.owner,
    parentChain,
    parentChildren: children.live.length,
    nowMs: input.atMs,
  });
  if (refused) return refused;
  if (terms.kind === 'issuance' && subjectAccount !== undefined && subjectAccount.kind !== 'treasury') {
    return noAuthority(`issuance out of ${subjectAccount.id}, not a treasury account`);
  }
  // CONTRACT 5: value leaves a treasury only under an issuance grant.
  if (terms.kind === 'delegated' && subjectAccount?.kind === 'treasury') return noAuthority(`account ${subjectAccount.id}: value leaves a treasury only under an issuance grant`);
  const root = parentChain.length > 0 ? parentChain[parentChain.length - 1]!.grantor : actor.principal;
  const over = overIdentity(terms, root);
  const space = spaceRefusal(reads, actor.principal, terms.principal, over, input.atMs);
  if (space.refusal) return space.refusal;
  const grant: Grant = { id: input.newGrantId, grantor: actor.principal, grantedAtMs: input.atMs, revokedAtMs: null, justification: command.justification, terms };
  const records: RecordWrite[] = [
    ...children.drops,
    ...space.drops,
    { key: grantKey(grant.id), value: encodeGrant(grant) },
    { key: heldGrantKey(terms.principal, over, grant.id), value: '' },
    { key: givenGrantKey(grant.grantor, grant.id), value: '' },
    { key: overGrantKey(over, grant.id), value: '' },
    ...[...new Set([terms.principal, grant.grantor])].map((party) => ({ key: partyGrantKey(over, party, grant.id), value: '' })),
  ];
  if (terms.parent !== null) records.push({ key: grantChildKey(terms.parent, grant.id), value: '' });
  // Written now so a use later in the same round reads it like any other grant's.
  if (terms.perWindow !== null) records.push({ key: grantWindowKey(grant.id), value: encodeWindowUsage(emptyWindowUsage) });
  return { records, grant: grant.id };
}

export function decideRevokeGrant(
  command: { readonly grant: GrantId },
  actor: Actor,
  reads: GrantReads,
  input: { readonly atMs: number; readonly principals: Principals },
): RecordWrite[] | Refusal {
  const grant = readGrant(reads, command.grant);
  // A scoped credential revokes only grants over an account within its scope.
  if (grant === undefined || !mayRevoke(grant, actor.principal, input.principals) || !grantWithinScope(grant, actor.scope)) {
    return noAuthority(`grant ${command.grant}`);
  }
  const chain = chainOf(reads, grant.id);
  assert(chain !== undefined, 'a stored grant narrows stored grants');
  // Narrowings keep their parent's subject and root: the whole set reaches one identity.
  const over = overIdentity(grant.terms, chain[chain.length - 1]!.grantor);
  const set = revocationSet(grant.id, (id) => reads.listed(grantChildPrefix(id)));
  const grants = set.map((id) => readGrant(reads, id)).filter((g): g is Grant => g !== undefined);
  // A revoked grant leaves the indexes the decider reads; the listings keep it.
  return revoke(grants, input.atMs).flatMap((g) => [
    { key: grantKey(g.id), value: encodeGrant(g) },
    { key: heldGrantKey(g.terms.principal, over, g.id), value: null },
    { key: revokedHeldKey(g.terms.principal, over, g.id), value: '' },
    { key: givenGrantKey(g.grantor, g.id), value: null },
    ...(g.terms.parent === null ? [] : [{ key: grantChildKey(g.terms.parent, g.id), value: null }]),
  ]);
}
