/** Builders for grant tests: terms, grants and uses with sensible defaults. */
import type { GrantUse } from '../../src/auth/grants.js';
import type { Grant, GrantTerms } from '../../src/model/model.js';
import type { AccountId, AssetSymbol, GrantId, IdentityId } from '../../src/model/values.js';

export const holder = 'did:ledger:id:holder' as IdentityId;
export const agent = 'did:ledger:id:agent' as IdentityId;
export const helper = 'did:ledger:id:helper' as IdentityId;
export const acct = (id: string) => `did:ledger:acct:${id}` as AccountId;
export const sym = (s: string) => s as AssetSymbol;
export const gid = (id: string) => `did:ledger:grant:${id}` as GrantId;

export function terms(over: Partial<GrantTerms> = {}): GrantTerms {
  return {
    kind: 'delegated',
    principal: agent,
    subject: { account: acct('h1') },
    ops: ['transfer'],
    assets: null,
    counterparties: null,
    expiresAtMs: null,
    parent: null,
    perOperationMinor: 1_000n,
    perWindow: null,
    ...over,
  };
}

export function grant(id: string, over: Partial<GrantTerms> = {}, extra: Partial<Omit<Grant, 'terms'>> = {}): Grant {
  return { id: gid(id), grantor: holder, grantedAtMs: 0, revokedAtMs: null, justification: null, terms: terms(over), ...extra };
}

export function use(over: Partial<GrantUse> = {}): GrantUse {
  return {
    principal: agent,
    op: 'transfer',
    account: acct('h1'),
    accountOwner: holder,
    accountCustody: 'delegated',
    accountKind: 'customer',
    asset: sym('USD'),
    counterparty: acct('shop'),
    amountMinor: 100n,
    atMs: 1_000,
    ...over,
  };
}
