/**
 * Properties of grants over small domains, so that narrowings and collisions are
 * frequent: a narrowing that passes the check never allows what its parent forbids,
 * and no window of any grant in a chain ever holds more than its limit. The holder
 * owns every account here; ownership refusals are unit-tested.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type GrantUse, type WindowUsage, authorizeUse, emptyWindowUsage, widenedTerm } from '../../src/auth/grants.js';
import { type Grant, type GrantOp, type GrantSubject, type GrantTerms, type PerWindow } from '../../src/model/model.js';
import type { GrantId } from '../../src/model/values.js';
import { acct, agent, grant, helper, sym, use } from '../support/grants.js';

const ops: GrantOp[] = ['transfer', 'reserve', 'capture', 'release'];
const assets = [sym('USD'), sym('EUR'), sym('BTC')];
const accounts = [acct('h1'), acct('h2'), acct('h3')];

const subset = <T>(xs: readonly T[]) => fc.subarray([...xs], { minLength: 1 });
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });

const subjectArb: fc.Arbitrary<GrantSubject> = fc.oneof(
  fc.constant('delegated_accounts' as const),
  fc.constantFrom(...accounts).map((account) => ({ account })),
  fc.constantFrom(...assets).map((asset) => ({ asset })),
);

const perWindowArb = fc.record({ lengthMs: fc.constantFrom(1_000, 2_000, 5_000), limitMinor: fc.constantFrom(50n, 100n, 300n) });

const termsArb: fc.Arbitrary<GrantTerms> = fc.record({
  kind: fc.constant('delegated' as const),
  principal: fc.constant(agent),
  subject: subjectArb,
  ops: subset(ops),
  assets: maybe(subset(assets)),
  counterparties: maybe(subset(accounts)),
  expiresAtMs: maybe(fc.constantFrom(1_000, 2_000, 3_000)),
  parent: fc.constant(null),
  perOperationMinor: maybe(fc.constantFrom(0n, 50n, 100n, 200n)),
  perWindow: maybe(perWindowArb),
});

const atMost = <T extends number | bigint>(domain: readonly T[], bound: T | null): fc.Arbitrary<T | null> =>
  bound === null ? maybe(fc.constantFrom(...domain)) : fc.constantFrom(...domain.filter((x) => x <= bound));
const listWithin = <T>(domain: readonly T[], bound: readonly T[] | null): fc.Arbitrary<readonly T[] | null> =>
  bound === null ? maybe(subset(domain)) : fc.subarray([...bound]);

/** Terms built to narrow `parent` term by term (the check still has the last word). */
const narrowerArb = (parent: GrantTerms): fc.Arbitrary<GrantTerms> =>
  fc.record({
    kind: fc.constant(parent.kind),
    principal: fc.constant(helper),
    subject: fc.constant(parent.subject),
    ops: fc.subarray([...parent.ops], { minLength: 1 }),
    assets: listWithin(assets, parent.assets),
    counterparties: listWithin(accounts, parent.counterparties),
    expiresAtMs: atMost([1_000, 2_000, 3_000], parent.expiresAtMs),
    parent: fc.constant(null),
    perOperationMinor: atMost([0n, 50n, 100n, 200n], parent.perOperationMinor),
    perWindow:
      parent.perWindow === null
        ? maybe(perWindowArb)
        : fc.record({ lengthMs: fc.constantFrom(parent.perWindow.lengthMs, 2_000, 5_000), limitMinor: fc.constantFrom(0n, parent.perWindow.limitMinor) }).filter((w) => w.lengthMs >= parent.perWindow!.lengthMs),
  });

/** Terms of the child that one mutation may take from arbitrary terms instead. */
const mutableTerms = ['subject', 'ops', 'assets', 'counterparties', 'expiresAtMs', 'perOperationMinor', 'perWindow'] as const;

/**
 * A parent and a child: a narrowing, or a narrowing with one term drawn at random
 * (often a widening, which the check must catch).
 */
const pairArb = termsArb.chain((parent) =>
  fc.tuple(
    fc.constant(parent),
    fc.oneof(
      { arbitrary: narrowerArb(parent), weight: 1 },
      { arbitrary: fc.tuple(narrowerArb(parent), termsArb, fc.constantFrom(...mutableTerms)).map(([narrow, other, term]): GrantTerms => ({ ...narrow, [term]: other[term] })), weight: 2 },
    ),
  ),
);

const useArb: fc.Arbitrary<GrantUse> = fc
  .record({
    op: fc.constantFrom(...ops),
    account: fc.constantFrom(...accounts),
    accountCustody: fc.constantFrom('delegated' as const, 'owned' as const),
    asset: fc.constantFrom(...assets),
    counterparty: maybe(fc.constantFrom(...accounts)),
    amountMinor: fc.constantFrom(1n, 50n, 100n, 150n, 250n, 400n),
    atMs: fc.integer({ min: 0, max: 4_000 }),
  })
  .map((u) => use(u));

/** A use aimed at what `t` covers, so that allowed uses are common. */
const useWithin = (t: GrantTerms): fc.Arbitrary<GrantUse> => {
  const pick = <T>(allowed: readonly T[] | null, all: readonly T[]) => fc.constantFrom(...(allowed !== null && allowed.length > 0 ? allowed : all));
  return fc
    .record({
      op: fc.constantFrom(...t.ops),
      account: typeof t.subject === 'object' && 'account' in t.subject ? fc.constant(t.subject.account) : fc.constantFrom(...accounts),
      accountCustody: fc.constantFrom('delegated' as const, 'delegated' as const, 'owned' as const),
      asset: typeof t.subject === 'object' && 'asset' in t.subject ? fc.constant(t.subject.asset) : pick(t.assets, assets),
      counterparty: pick(t.counterparties, accounts),
      amountMinor: fc.constantFrom(1n, 50n, 100n, 150n, 250n),
      atMs: fc.integer({ min: 0, max: 4_000 }),
    })
    .map((u) => use(u));
};

/** A grant as if it were a root of its own, so its terms are judged alone. */
const alone = (id: string, t: GrantTerms): Grant => ({ ...grant(id), terms: { ...t, parent: null } });

describe('narrowing', () => {
  /** Feeds `uses` to the child alone; every use it allows, the parent alone (fed the same) allows too. */
  function parentAllowsWhatChildAllows(parentTerms: GrantTerms, childTerms: GrantTerms, uses: readonly GrantUse[]): void {
    const child = alone('c', childTerms);
    const parent = alone('p', parentTerms);
    let childUsage = emptyWindowUsage;
    let parentUsage = emptyWindowUsage;
    for (const u of uses) {
      const viaChild = authorizeUse([child], { ...u, principal: childTerms.principal }, () => childUsage);
      if (!viaChild.ok) continue;
      childUsage = viaChild.usage.get(child.id) ?? childUsage;
      const viaParent = authorizeUse([parent], { ...u, principal: parentTerms.principal }, () => parentUsage);
      expect(viaParent.ok).toBe(true);
      if (viaParent.ok) parentUsage = viaParent.usage.get(parent.id) ?? parentUsage;
    }
  }

  // Times mostly move forward, in steps around the window lengths, as decisions do.
  const timedUses = (use: fc.Arbitrary<GrantUse>) =>
    fc.array(fc.tuple(use, fc.integer({ min: 0, max: 1_500 })), { minLength: 1, maxLength: 10 }).map((steps) => {
      let atMs = 0;
      return steps.map(([u, stepMs]) => ({ ...u, atMs: (atMs += stepMs) }));
    });

  it('a grant that narrows its parent never allows a use the parent forbids, over any history of uses', () => {
    const scenario = pairArb.chain(([parent, child]) =>
      fc.tuple(fc.constant(parent), fc.constant(child), timedUses(fc.oneof({ arbitrary: useWithin(child), weight: 4 }, { arbitrary: useArb, weight: 1 }))),
    );
    fc.assert(
      fc.property(scenario, ([parentTerms, childTerms, uses]) => {
        fc.pre(widenedTerm(childTerms, parentTerms) === null);
        parentAllowsWhatChildAllows(parentTerms, childTerms, uses);
      }),
      { numRuns: 1000 },
    );
  });

  it('the same holds for windows alone: a longer window with a lower limit never lets more through', () => {
    const bare = (perWindow: PerWindow, principal = agent) => ({ ...grant('x').terms, principal, perOperationMinor: null, perWindow });
    fc.assert(
      fc.property(perWindowArb, perWindowArb, timedUses(useArb.map((u) => ({ ...u, op: 'transfer' as const, account: acct('h1'), counterparty: null }))), (parentWindow, childWindow, uses) => {
        const parentTerms = { ...bare(parentWindow), counterparties: null };
        const childTerms = { ...bare(childWindow, helper), counterparties: null };
        fc.pre(widenedTerm(childTerms, parentTerms) === null);
        parentAllowsWhatChildAllows(parentTerms, childTerms, uses);
      }),
      { numRuns: 300 },
    );
  });

  it('a use through a chain is allowed only if every grant of it allows the use alone', () => {
    fc.assert(
      fc.property(termsArb, termsArb, useArb, (parentTerms, childTerms, u) => {
        const parent = alone('p', parentTerms);
        const child: Grant = { ...grant('c'), grantor: agent, terms: { ...childTerms, principal: helper, parent: parent.id } };
        const none = () => emptyWindowUsage;
        const viaChain = authorizeUse([child, parent], { ...u, principal: helper }, none).ok;
        const each = authorizeUse([alone('c', { ...childTerms, principal: helper })], { ...u, principal: helper }, none).ok && authorizeUse([parent], u, none).ok;
        expect(viaChain).toBe(each);
      }),
      { numRuns: 300 },
    );
  });
});

describe('rolling windows', () => {
  const windowArb = fc.record({ lengthMs: fc.constantFrom(1_000, 5_000), limitMinor: fc.constantFrom(100n, 1_000n) });
  const step = fc.record({ viaChild: fc.boolean(), amountMinor: fc.bigInt({ min: 1n, max: 700n }), atMs: fc.integer({ min: 0, max: 20_000 }) });

  it('never lets any window of any grant in a chain exceed its limit, whatever the order of uses and times', () => {
    fc.assert(
      fc.property(windowArb, windowArb, fc.array(step, { maxLength: 60 }), (parentWindow, childWindow, steps) => {
        const parent = grant('p', { perOperationMinor: null, perWindow: parentWindow, counterparties: null });
        const child: Grant = { ...grant('c', { principal: helper, parent: parent.id, perOperationMinor: null, perWindow: childWindow }), grantor: agent };
        const usage = new Map<GrantId, WindowUsage>();
        // Every accepted use, as recorded in each grant's window (its effective time).
        const accepted = new Map<GrantId, { atMs: number; amountMinor: bigint }[]>([[parent.id, []], [child.id, []]]);
        for (const s of steps) {
          const chain = s.viaChild ? [child, parent] : [parent];
          const d = authorizeUse(chain, use({ principal: chain[0]!.terms.principal, amountMinor: s.amountMinor, atMs: s.atMs }), (id) => usage.get(id) ?? emptyWindowUsage);
          if (!d.ok) {
            expect(d.refusal.error).toBe('ERR-BoundExceeded');
            continue;
          }
          for (const [id, after] of d.usage) {
            usage.set(id, after);
            accepted.get(id)!.push(after.uses.at(-1)!);
          }
        }
        for (const [g, window] of [[parent, parentWindow], [child, childWindow]] as const) {
          const uses = accepted.get(g.id)!;
          for (const end of uses) {
            const inWindow = uses.filter((u) => u.atMs > end.atMs - window.lengthMs && u.atMs <= end.atMs);
            expect(inWindow.reduce((sum, u) => sum + u.amountMinor, 0n) <= window.limitMinor).toBe(true);
          }
          // Recorded times never go back, so the check at each use covers every window.
          expect(uses.every((u, i) => i === 0 || uses[i - 1]!.atMs <= u.atMs)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('with times in order, a use is refused only when its window would pass the limit', () => {
    fc.assert(
      fc.property(windowArb, fc.array(step, { maxLength: 40 }), (window, steps) => {
        const g = grant('g', { perOperationMinor: null, perWindow: window });
        let usage = emptyWindowUsage;
        const history: { atMs: number; amountMinor: bigint }[] = [];
        for (const s of [...steps].sort((a, b) => a.atMs - b.atMs)) {
          const usedMinor = history.filter((h) => h.atMs > s.atMs - window.lengthMs).reduce((sum, h) => sum + h.amountMinor, 0n);
          const d = authorizeUse([g], use({ amountMinor: s.amountMinor, atMs: s.atMs }), () => usage);
          expect(d.ok).toBe(usedMinor + s.amountMinor <= window.limitMinor);
          if (d.ok) {
            usage = d.usage.get(g.id)!;
            history.push({ atMs: s.atMs, amountMinor: s.amountMinor });
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
