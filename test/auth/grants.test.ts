import { describe, expect, it } from 'vitest';
import { AssertionFailure } from '../../src/assert.js';
import { builtInPrincipals as principals } from '../../src/auth/authority.js';
import { grantChainDepthMax, grantChildrenMax, grantWindowUsesMax } from '../../src/auth/constants.js';
import {
  type GrantIssuance,
  type WindowUsage,
  authorizeUse,
  decodeGrant,
  decodeWindowUsage,
  emptyWindowUsage,
  encodeGrant,
  encodeWindowUsage,
  grantIssuanceRefusal,
  grantListingItem,
  mayRevoke,
  parseGrantTerms,
  parseIssuanceGrantRequest,
  revocationSet,
  revoke,
} from '../../src/auth/grants.js';
import { type Grant } from '../../src/model/model.js';
import type { GrantId } from '../../src/model/values.js';
import { acct, agent, gid, grant, helper, holder, sym, terms, use } from '../support/grants.js';
import { refusedWith } from '../support/refusals.js';

const wire = {
  kind: 'delegated',
  principal: agent,
  subject: { account: acct('h1') },
  ops: ['transfer', 'reserve'],
  assets: ['USD'],
  counterparties: [acct('shop')],
  expires: 5_000,
  parent: null,
  per_operation: '250',
  per_window: { length: 86_400_000, limit: '1000' },
};

describe('parsing terms', () => {
  it('reads every field, amounts as bigint', () => {
    expect(parseGrantTerms(wire, 'delegated')).toEqual(
      terms({ ops: ['transfer', 'reserve'], assets: [sym('USD')], counterparties: [acct('shop')], expiresAtMs: 5_000, perOperationMinor: 250n, perWindow: { lengthMs: 86_400_000, limitMinor: 1000n } }),
    );
  });

  it('reads the four subject forms', () => {
    const subjectOf = (subject: unknown, ops = ['transfer']) => parseGrantTerms({ ...wire, subject, ops }, 'delegated').subject;
    expect(subjectOf('delegated_accounts')).toBe('delegated_accounts');
    expect(subjectOf({ asset: 'EUR' })).toEqual({ asset: 'EUR' });
    expect(subjectOf({ identity: 'did:ledger:id:kid' }, ['open_account'])).toEqual({ identity: 'did:ledger:id:kid' });
  });

  it.each([
    ['an unknown field', { ...wire, note: 1 }],
    ['another kind', { ...wire, kind: 'issuance' }],
    ['no ops', { ...wire, ops: [] }],
    ['an unknown op', { ...wire, ops: ['steal'] }],
    ['a repeated op', { ...wire, ops: ['transfer', 'transfer'] }],
    ['a subject with two keys', { ...wire, subject: { account: acct('h1'), asset: 'USD' } }],
    ['an unknown subject', { ...wire, subject: 'all_accounts' }],
    ['open_account over an account', { ...wire, ops: ['open_account'] }],
    ['an identity subject for transfers', { ...wire, subject: { identity: holder } }],
    ['a window too short', { ...wire, per_window: { length: 10, limit: '1' } }],
    ['a window with an extra field', { ...wire, per_window: { length: 86_400_000, limit: '1', rolling: true } }],
    ['a bad principal', { ...wire, principal: 'alice' }],
    ['a negative expiry', { ...wire, expires: -1 }],
  ])('refuses %s as ERR-MalformedCommand', (_name, body) => {
    expect(refusedWith(() => parseGrantTerms(body, 'delegated'))).toBe('ERR-MalformedCommand');
  });

  it('reads an issuance request and needs its justification', () => {
    const grantBody = { ...wire, kind: 'issuance', subject: { asset: 'USD' }, ops: ['transfer'], counterparties: null };
    expect(parseIssuanceGrantRequest({ grant: grantBody, justification: 'monthly float' })).toMatchObject({ justification: 'monthly float', terms: { kind: 'issuance' } });
    expect(refusedWith(() => parseIssuanceGrantRequest({ grant: grantBody }))).toBe('ERR-JustificationRequired');
    expect(refusedWith(() => parseIssuanceGrantRequest({ grant: grantBody, justification: '  ' }))).toBe('ERR-JustificationRequired');
    expect(refusedWith(() => parseIssuanceGrantRequest({ grant: grantBody, justification: 'x'.repeat(2000) }))).toBe('ERR-MalformedCommand');
    expect(refusedWith(() => parseIssuanceGrantRequest({ grant: { ...grantBody, subject: 'delegated_accounts' }, justification: 'j' }))).toBe('ERR-MalformedCommand');
    expect(refusedWith(() => parseIssuanceGrantRequest({ grant: { ...grantBody, parent: 'did:ledger:grant:g1' }, justification: 'j' }))).toBe('ERR-MalformedCommand');
  });
});

describe('stored form and listing', () => {
  it('round-trips a grant and shows the spec listing item', () => {
    const g = grant('g1', parseGrantTerms(wire, 'delegated'), { grantedAtMs: 7, revokedAtMs: 9 });
    expect(decodeGrant(encodeGrant(g))).toEqual(g);
    expect(grantListingItem(g)).toEqual({ grant: gid('g1'), granted_at: 7, grantor: holder, revoked: 9, terms: wire });
  });

  it('treats a stored grant that does not parse as a bug', () => {
    const text = encodeGrant(grant('g1')).replace('"transfer"', '"steal"');
    expect(() => decodeGrant(text)).toThrow(AssertionFailure);
  });

  it('round-trips window usage', () => {
    const usage: WindowUsage = { uses: [{ atMs: 1, amountMinor: 10n ** 30n }, { atMs: 2, amountMinor: 5n }] };
    expect(decodeWindowUsage(encodeWindowUsage(usage))).toEqual(usage);
  });
});

describe('giving grants', () => {
  const issuance = (over: Partial<GrantIssuance>): GrantIssuance => ({
    terms: terms(),
    grantor: holder,
    principals,
    subjectAccountOwner: holder,
    parentChain: [],
    parentChildren: 0,
    nowMs: 1_000,
    ...over,
  });
  const parent = grant('p', { perOperationMinor: 500n, perWindow: { lengthMs: 10_000, limitMinor: 2_000n }, assets: [sym('USD')], counterparties: [acct('shop')], expiresAtMs: 9_000, principal: agent });
  const narrowed = (over: Parameters<typeof terms>[0]) =>
    issuance({ grantor: agent, parentChain: [parent], terms: terms({ ...parent.terms, parent: parent.id, principal: helper, ...over }) });

  it('takes a bounded grant of the holder over its own account', () => {
    expect(grantIssuanceRefusal(issuance({}))).toBeNull();
  });

  it('refuses a delegated grant without a bound (ERR-UnboundedGrant)', () => {
    expect(grantIssuanceRefusal(issuance({ terms: terms({ perOperationMinor: null }) }))).toMatchObject({ error: 'ERR-UnboundedGrant' });
  });

  it("refuses a grant over another's account, and an identity grant by a stranger", () => {
    expect(grantIssuanceRefusal(issuance({ subjectAccountOwner: helper }))).toMatchObject({ error: 'ERR-NotAuthorised' });
    expect(grantIssuanceRefusal(issuance({ subjectAccountOwner: undefined }))).toMatchObject({ error: 'ERR-NotAuthorised' });
    const opens = terms({ subject: { identity: helper }, ops: ['open_account'] });
    expect(grantIssuanceRefusal(issuance({ terms: opens }))).toMatchObject({ error: 'ERR-NotAuthorised' });
    expect(grantIssuanceRefusal(issuance({ terms: opens, grantor: helper }))).toBeNull();
    expect(grantIssuanceRefusal(issuance({ terms: opens, grantor: principals.identities }))).toBeNull();
  });

  it('lets the operator alone give issuance grants', () => {
    const issue = terms({ kind: 'issuance', subject: { asset: sym('USD') }, perOperationMinor: null });
    expect(grantIssuanceRefusal(issuance({ terms: issue, grantor: principals.operator }))).toBeNull();
    expect(grantIssuanceRefusal(issuance({ terms: issue, grantor: holder }))).toMatchObject({ error: 'ERR-NotAuthorised' });
  });

  it('takes a narrowing by the holder of the parent', () => {
    expect(grantIssuanceRefusal(narrowed({}))).toBeNull();
    expect(grantIssuanceRefusal(narrowed({ perOperationMinor: 100n, perWindow: { lengthMs: 20_000, limitMinor: 1_000n }, expiresAtMs: 8_000 }))).toBeNull();
  });

  it.each([
    ['ops', { ops: ['transfer', 'reserve'] as const }],
    ['assets', { assets: null }],
    ['assets', { assets: [sym('USD'), sym('EUR')] }],
    ['counterparties', { counterparties: null }],
    ['expires', { expiresAtMs: null }],
    ['expires', { expiresAtMs: 9_001 }],
    ['per_operation', { perOperationMinor: 501n }],
    ['per_operation', { perOperationMinor: null }],
    ['per_window', { perWindow: null }],
    ['per_window', { perWindow: { lengthMs: 9_999, limitMinor: 2_000n } }],
    ['per_window', { perWindow: { lengthMs: 10_000, limitMinor: 2_001n } }],
    ['subject', { subject: 'delegated_accounts' as const }],
  ])('refuses a narrowing that widens %s (ERR-UnboundedGrant)', (term, over) => {
    expect(grantIssuanceRefusal(narrowed(over as Parameters<typeof terms>[0]))).toMatchObject({ error: 'ERR-UnboundedGrant', description: expect.stringContaining(term) });
  });

  it('keeps the subject: one account is not within "delegated_accounts", whose custody may change', () => {
    const wide = { ...parent, terms: { ...parent.terms, subject: 'delegated_accounts' as const } };
    const child = terms({ ...wide.terms, parent: wide.id, principal: helper, subject: { account: acct('h1') } });
    expect(grantIssuanceRefusal(issuance({ grantor: agent, parentChain: [wide], terms: child }))).toMatchObject({ error: 'ERR-UnboundedGrant', description: expect.stringContaining('subject') });
  });

  it('refuses narrowing a grant one does not hold, a revoked or expired one, too deep or too wide a tree', () => {
    expect(grantIssuanceRefusal({ ...narrowed({}), grantor: helper })).toMatchObject({ error: 'ERR-NotAuthorised' });
    expect(grantIssuanceRefusal({ ...narrowed({}), parentChain: [] })).toMatchObject({ error: 'ERR-NotAuthorised' });
    expect(grantIssuanceRefusal({ ...narrowed({}), parentChain: [{ ...parent, revokedAtMs: 5 }] })).toMatchObject({ error: 'ERR-AuthorityRevoked' });
    expect(grantIssuanceRefusal({ ...narrowed({}), nowMs: 9_000 })).toMatchObject({ error: 'ERR-NotAuthorised' });
    expect(grantIssuanceRefusal({ ...narrowed({}), parentChildren: grantChildrenMax })).toMatchObject({ error: 'ERR-UnboundedGrant' });
    const deep = Array.from({ length: grantChainDepthMax }, () => parent);
    expect(grantIssuanceRefusal({ ...narrowed({}), parentChain: deep })).toMatchObject({ error: 'ERR-UnboundedGrant' });
  });
});

describe('using grants', () => {
  const none = () => emptyWindowUsage;

  it('allows a use within the terms and names the grant', () => {
    expect(authorizeUse([grant('g')], use(), none)).toEqual({ ok: true, grant: gid('g'), usage: new Map(), moved: new Map([[gid('g'), 100n]]) });
  });

  it.each([
    ['another principal', use({ principal: helper })],
    ['another op', use({ op: 'reserve' })],
    ['another account', use({ account: acct('h2') })],
    ['an account the grantor no longer owns', use({ accountOwner: helper })],
    ['at expiry', use({ atMs: 2_000 })],
    ['another asset', use({ asset: sym('EUR') })],
    ['another counterparty', use({ counterparty: acct('casino') })],
    ['no counterparty', use({ counterparty: null })],
  ])('refuses %s (ERR-NotAuthorised)', (_name, u) => {
    const g = grant('g', { expiresAtMs: 2_000, assets: [sym('USD')], counterparties: [acct('shop')] });
    expect(authorizeUse([g], u, none)).toMatchObject({ ok: false, refusal: { error: 'ERR-NotAuthorised' } });
  });

  it('covers delegated accounts of the grantor only while in delegated custody', () => {
    const g = grant('g', { subject: 'delegated_accounts' });
    expect(authorizeUse([g], use({ account: acct('any') }), none).ok).toBe(true);
    expect(authorizeUse([g], use({ accountCustody: 'owned' }), none)).toMatchObject({ refusal: { error: 'ERR-NotAuthorised' } });
  });

  it('covers every account of the grantor in one asset with an {asset} subject', () => {
    const g = grant('g', { subject: { asset: sym('USD') } });
    expect(authorizeUse([g], use({ account: acct('other') }), none).ok).toBe(true);
    expect(authorizeUse([g], use({ asset: sym('EUR') }), none)).toMatchObject({ refusal: { error: 'ERR-NotAuthorised' } });
  });

  it('opens accounts for the named identity under an {identity} grant', () => {
    const g = grant('g', { subject: { identity: helper }, ops: ['open_account'] }, { grantor: helper });
    const opening = use({ op: 'open_account', account: acct('new'), accountOwner: helper, asset: null, counterparty: null, amountMinor: 0n });
    expect(authorizeUse([g], opening, none).ok).toBe(true);
    expect(authorizeUse([g], { ...opening, accountOwner: holder }, none)).toMatchObject({ refusal: { error: 'ERR-NotAuthorised' } });
  });

  it('issues only out of treasury accounts', () => {
    const g = grant('g', { kind: 'issuance', subject: { asset: sym('USD') }, perOperationMinor: null }, { grantor: principals.operator });
    const issue = use({ accountOwner: principals.operator, accountKind: 'treasury', amountMinor: 10n ** 20n });
    expect(authorizeUse([g], issue, none).ok).toBe(true);
    expect(authorizeUse([g], { ...issue, accountKind: 'customer' }, none)).toMatchObject({ refusal: { error: 'ERR-NotAuthorised' } });
  });

  it('moves no treasury value under a delegated grant, whoever gave it', () => {
    const g = grant('g', { subject: { asset: sym('USD') } }, { grantor: principals.operator });
    const out = use({ accountOwner: principals.operator, accountKind: 'treasury' });
    expect(authorizeUse([g], out, none)).toMatchObject({ refusal: { error: 'ERR-NotAuthorised' } });
    expect(authorizeUse([g], { ...out, accountKind: 'customer' }, none).ok).toBe(true);
  });

  it('bounds per_operation over everything the operation moved under each grant of the chain', () => {
    const parent = grant('p', { perOperationMinor: 100n });
    const child = grant('c', { principal: helper, parent: gid('p'), perOperationMinor: 80n }, { grantor: agent });
    const first = authorizeUse([child, parent], use({ principal: helper, amountMinor: 50n }), none);
    expect(first).toMatchObject({ ok: true, moved: new Map([[gid('c'), 50n], [gid('p'), 50n]]) });
    const moved = (first as { moved: ReadonlyMap<GrantId, bigint> }).moved;
    expect(authorizeUse([child, parent], use({ principal: helper, amountMinor: 30n }), none, (id) => moved.get(id) ?? 0n).ok).toBe(true);
    expect(authorizeUse([child, parent], use({ principal: helper, amountMinor: 31n }), none, (id) => moved.get(id) ?? 0n)).toMatchObject({ refusal: { error: 'ERR-BoundExceeded' } });
    // Another grant of the same parent shares the parent's bound.
    expect(authorizeUse([parent], use({ amountMinor: 51n }), none, (id) => moved.get(id) ?? 0n)).toMatchObject({ refusal: { error: 'ERR-BoundExceeded' } });
  });

  it('refuses beyond per_operation (ERR-BoundExceeded), at the bound allows', () => {
    const g = grant('g', { perOperationMinor: 100n });
    expect(authorizeUse([g], use({ amountMinor: 100n }), none).ok).toBe(true);
    expect(authorizeUse([g], use({ amountMinor: 101n }), none)).toMatchObject({ refusal: { error: 'ERR-BoundExceeded' } });
  });

  it('keeps a rolling window: uses older than its length fall out', () => {
    const g = grant('g', { perOperationMinor: null, perWindow: { lengthMs: 1_000, limitMinor: 300n } });
    let usage = emptyWindowUsage;
    const at = (atMs: number, amountMinor: bigint) => {
      const d = authorizeUse([g], use({ atMs, amountMinor }), () => usage);
      if (d.ok) usage = d.usage.get(g.id)!;
      return d.ok ? 'ok' : d.refusal.error;
    };
    expect(at(0, 200n)).toBe('ok');
    expect(at(500, 100n)).toBe('ok');
    expect(at(999, 1n)).toBe('ERR-BoundExceeded');
    expect(at(1_000, 200n)).toBe('ok'); // the use at 0 has left the window (0, 1000]
    expect(usage.uses.map((u) => u.atMs)).toEqual([500, 1_000]);
    expect(at(1_499, 1n)).toBe('ERR-BoundExceeded');
    expect(at(1_500, 100n)).toBe('ok');
    // A use stamped in the past counts at the latest time, never before it.
    expect(at(100, 100n)).toBe('ERR-BoundExceeded');
  });

  it('refuses rather than forgets when the window holds its most uses', () => {
    const g = grant('g', { perOperationMinor: null, perWindow: { lengthMs: 1_000_000, limitMinor: 10n ** 9n } });
    const usage: WindowUsage = { uses: Array.from({ length: grantWindowUsesMax }, (_, i) => ({ atMs: i, amountMinor: 1n })) };
    expect(authorizeUse([g], use({ atMs: grantWindowUsesMax, amountMinor: 1n }), () => usage)).toMatchObject({ refusal: { error: 'ERR-BoundExceeded' } });
  });

  it('checks the whole chain: a use through a child counts toward the parent window', () => {
    const parent = grant('p', { perOperationMinor: null, perWindow: { lengthMs: 1_000, limitMinor: 300n } });
    const child = grant('c', { principal: helper, parent: parent.id, perOperationMinor: 200n, perWindow: { lengthMs: 1_000, limitMinor: 300n } }, { grantor: agent });
    const usage = new Map<GrantId, WindowUsage>();
    const through = (chain: Grant[], principal = chain[0]!.terms.principal, amountMinor = 150n) => {
      const d = authorizeUse(chain, use({ principal, amountMinor }), (id) => usage.get(id) ?? emptyWindowUsage);
      if (d.ok) for (const [id, u] of d.usage) usage.set(id, u);
      return d.ok ? 'ok' : d.refusal.error;
    };
    expect(through([child, parent])).toBe('ok');
    expect(through([parent])).toBe('ok');
    expect(through([child, parent], helper, 1n)).toBe('ERR-BoundExceeded');
    expect(usage.get(parent.id)?.uses).toHaveLength(2);
    expect(usage.get(child.id)?.uses).toHaveLength(1);
  });

  it('refuses any use once a grant in the chain is revoked (ERR-AuthorityRevoked)', () => {
    const parent = grant('p', {}, { revokedAtMs: 10 });
    const child = grant('c', { principal: helper, parent: parent.id }, { grantor: agent });
    expect(authorizeUse([child, parent], use({ principal: helper }), none)).toMatchObject({ refusal: { error: 'ERR-AuthorityRevoked' } });
  });

  it('asserts the chain is linked', () => {
    expect(() => authorizeUse([grant('c'), grant('p')], use(), none)).toThrow(AssertionFailure);
  });
});

describe('revoking grants', () => {
  it('revokes a grant and every grant narrowed from it, and nothing else', () => {
    const children: Record<string, string[]> = { a: ['b', 'c'], b: ['d'], c: [], d: ['e'], x: ['y'] };
    const childrenOf = (id: GrantId) => (children[id.slice('did:ledger:grant:'.length)] ?? []).map(gid);
    expect(revocationSet(gid('a'), childrenOf)).toEqual(['a', 'b', 'c', 'd', 'e'].map(gid));
    expect(revocationSet(gid('c'), childrenOf)).toEqual([gid('c')]);
  });

  it('stamps only grants not yet revoked', () => {
    const set = [grant('a'), grant('b', {}, { revokedAtMs: 3 })];
    expect(revoke(set, 9)).toEqual([{ ...set[0], revokedAtMs: 9 }]);
  });

  it('is open to the grantor, the holder and the operator', () => {
    const g = grant('g');
    expect([holder, agent, principals.operator, helper].map((p) => mayRevoke(g, p, principals))).toEqual([true, true, true, false]);
  });
});
