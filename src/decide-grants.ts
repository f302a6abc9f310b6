/**
 * Grants in the book: giving, revoking and using them. The rules are auth/grants.ts;
 * this module applies them to prefetched records, synchronously, and says what to
 * write. A grant is found for a use by searching the grants the actor holds, in
 * identifier order: the first whose whole chain allows the use is the authority
 * recorded on the postings.
 */
import { assert } from './assert.js';
import {
  type Grant,
  type GrantOp,
  type GrantTerms,
  type WindowUsage,
  authorizeUse,
  decodeGrant,
  decodeWindowUsage,
  emptyWindowUsage,
  encodeGrant,
  encodeWindowUsage,
  grantChildKey,
  grantIssuanceRefusal,
  grantKey,
  grantWindowKey,
  mayRevoke,
  revocationSet,
  revoke,
} from './auth/grants.js';
import { grantChainDepthMax } from './auth/constants.js';
import { type Actor, type Principals, authorityToDebit, inScope } from './authority.js';
import type { RecordWrite } from './decide-auth.js';
import { type Refusal, refusal } from './errors.js';
import type { Account, Authority } from './model.js';
import type { AccountId, AssetSymbol, GrantId, IdentityId } from './values.js';

/** Grants held by a principal: one prefix scan. */
export const heldGrantKey = (holder: string, grant: GrantId) => `gh/${holder}/${grant}`;
export const heldGrantPrefix = (holder: string) => `gh/${holder}/`;
/** Grants over an identity (its accounts, or opening its accounts): the identity listing. */
export const overGrantKey = (identity: string, grant: GrantId) => `gi/${identity}/${grant}`;
export const overGrantPrefix = (identity: string) => `gi/${identity}/`;

/** Grant records and indexes, as prefetched for a round (or an intake). */
export interface GrantReads {
  record(key: string): string | undefined;
  /** Ids under an index prefix (held grants, children), as prefetched. */
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

function usageOf(reads: GrantReads, staged: ReadonlyMap<GrantId, WindowUsage>) {
  return (id: GrantId): WindowUsage => {
    const pending = staged.get(id);
    if (pending) return pending;
    const text = reads.record(grantWindowKey(id));
    return text === undefined ? emptyWindowUsage : decodeWindowUsage(text);
  };
}

export interface GrantUseRequest {
  readonly op: GrantOp;
  readonly account: Account;
  readonly asset: AssetSymbol | null;
  readonly counterparty: AccountId | null;
  readonly amountMinor: bigint;
  readonly atMs: number;
}

/**
 * The authority a grant the actor holds gives for `use`, with the window usage it
 * leaves (`staged` carries usage from earlier legs of the same command), or the
 * refusal of the grant that came closest (a revoked or bounded grant says so).
 */
export function grantAuthority(
  actor: Actor,
  use: GrantUseRequest,
  reads: GrantReads,
  staged: ReadonlyMap<GrantId, WindowUsage>,
): { authority: Authority; usage: ReadonlyMap<GrantId, WindowUsage> } | Refusal {
  // Acting on behalf of an identity, only a grant over that identity's accounts serves.
  if (actor.onBehalfOf !== null && actor.onBehalfOf !== use.account.owner) {
    return refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers account ${use.account.id} on behalf of ${actor.onBehalfOf}`);
  }
  let closest: Refusal | null = null;
  for (const id of reads.listed(heldGrantPrefix(actor.principal))) {
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
      usageOf(reads, staged),
    );
    if (decision.ok) {
      const grant = chain[0]!;
      return {
        authority: {
          credential: actor.credential,
          grant: grant.id,
          kind: grant.terms.kind === 'issuance' ? 'issuance' : 'delegated',
          onBehalfOf: actor.onBehalfOf ?? use.account.owner,
          principal: actor.principal,
        },
        usage: decision.usage,
      };
    }
    // A refusal naming the bound or the revocation tells the holder more than "no authority".
    if (closest === null || decision.refusal.error !== 'ERR-NotAuthorised') closest = decision.refusal;
  }
  return closest ?? refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers account ${use.account.id}`);
}

/**
 * The authority to debit `use.account`: the actor's own (owner, operator), else a
 * grant it holds. A grant's window usage goes into `staged`, to be written only if
 * the whole command is decided.
 */
export function debitAuthority(
  actor: Actor,
  use: GrantUseRequest,
  reads: GrantReads,
  principals: Principals,
  staged: Map<GrantId, WindowUsage>,
): Authority | Refusal {
  const direct = authorityToDebit(actor, use.account, principals);
  if (direct !== null) return direct;
  if (!inScope(actor, use.account.id)) return refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers account ${use.account.id}`);
  const viaGrant = grantAuthority(actor, use, reads, staged);
  if ('error' in viaGrant) return viaGrant;
  for (const [id, usage] of viaGrant.usage) staged.set(id, usage);
  return viaGrant.authority;
}

export function usageWrites(usage: ReadonlyMap<GrantId, WindowUsage>): RecordWrite[] {
  return [...usage].map(([id, u]) => ({ key: grantWindowKey(id), value: encodeWindowUsage(u) }));
}

/** The identity whose accounts a grant reaches: the root grantor, or the identity an {identity} subject names. */
function overIdentity(terms: GrantTerms, rootGrantor: IdentityId): IdentityId {
  return typeof terms.subject === 'object' && 'identity' in terms.subject ? terms.subject.identity : rootGrantor;
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
  const withinScope = typeof terms.subject === 'object' && 'account' in terms.subject ? inScope(actor, terms.subject.account) : actor.scope === undefined || actor.scope === null;
  if (!withinScope) return refusal('ERR-NotAuthorised', 'the initiating principal holds no authority that covers accounts outside its credential scope');
  const refused = grantIssuanceRefusal({
    terms,
    grantor: actor.principal,
    principals: input.principals,
    subjectAccountOwner: subjectAccount?.owner,
    parentChain,
    parentChildren: terms.parent === null ? 0 : reads.listed(`gch/${terms.parent}/`).length,
    nowMs: input.atMs,
  });
  if (refused) return refused;
  if (terms.kind === 'issuance' && subjectAccount !== undefined && subjectAccount.kind !== 'treasury') {
    return refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers issuance out of ${subjectAccount.id}, not a treasury account`);
  }
  const grant: Grant = { id: input.newGrantId, grantor: actor.principal, grantedAtMs: input.atMs, revokedAtMs: null, justification: command.justification, terms };
  const root = parentChain.length > 0 ? parentChain[parentChain.length - 1]!.grantor : actor.principal;
  const records: RecordWrite[] = [
    { key: grantKey(grant.id), value: encodeGrant(grant) },
    { key: heldGrantKey(terms.principal, grant.id), value: '' },
    { key: overGrantKey(overIdentity(terms, root), grant.id), value: '' },
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
  if (grant === undefined || !mayRevoke(grant, actor.principal, input.principals)) {
    return refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers grant ${command.grant}`);
  }
  const set = revocationSet(grant.id, (id) => reads.listed(`gch/${id}/`));
  const grants = set.map((id) => readGrant(reads, id)).filter((g): g is Grant => g !== undefined);
  return revoke(grants, input.atMs).map((g) => ({ key: grantKey(g.id), value: encodeGrant(g) }));
}
