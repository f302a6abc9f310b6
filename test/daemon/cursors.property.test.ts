/**
 * Issue 20 item 7: a cursor is a position the daemon issued, or a refusal. Every listing that
 * takes a hex `cursor` is fed random hex, random text and mutations of a cursor it issued
 * (one digit changed, cut, lengthened, moved to another listing); each answer is a 4xx refusal
 * with the `{error, description}` shape, never a 500, and the issued cursor still reads its page.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, decided, refusalOf, useDaemon } from './support.js';

const acct = (name: string) => `did:ledger:acct:${name}`;
const id = (name: string) => `did:ledger:id:${name}`;
const shared = useDaemon({ alice: 10_000n, bob: 10_000n });
const alice = shared.as('alice');

async function command(api: Client, path: string, body: unknown): Promise<void> {
  const sent = await api.post(path, body, undefined, { 'client-key': randomUUID() });
  expect([200, 202], sent.text).toContain(sent.status);
  expect((await decided(api, sent.body.operation_reference)).body.state, path).toBe('Completed');
}

/** Every listing that pages with a hex cursor, as a query without the cursor (one item a page, so each has a next). */
const listings: Record<string, string> = {
  'movements of an account': `/v1/movements?account=${acct('alice')}&limit=1`,
  'movements of an identity': `/v1/movements?identity=${id('alice')}&limit=1`,
  'movements of an asset': `/v1/movements?account=${acct('alice')}&asset=USD&limit=1`,
  "an identity's accounts": `/v1/accounts?owner=${id('alice')}&limit=1`,
  "an identity's grants": `/v1/identities/${encodeURIComponent(id('alice'))}/grants?limit=1`,
  "an account's grants": `/v1/accounts/${encodeURIComponent(acct('alice'))}/grants?limit=1`,
};
const issued: Record<string, string> = {};

beforeAll(async () => {
  for (let i = 0; i < 3; i++) await command(alice, '/v1/transfers', { legs: [{ from: acct('alice'), to: acct('bob'), asset: 'USD', amount: '1' }] });
  for (let i = 0; i < 2; i++) await command(alice, '/v1/accounts', { custody: 'delegated', kind: 'customer', owner: id('alice') });
  for (const per of ['10', '20']) {
    await command(alice, '/v1/grants', { kind: 'delegated', principal: id('bob'), subject: { account: acct('alice') }, ops: ['transfer'], per_operation: per });
  }
  for (const [name, path] of Object.entries(listings)) {
    const first = await alice.get(path);
    expect(first.status, `${name}: ${first.text}`).toBe(200);
    expect(typeof first.body.next, `${name} has a second page`).toBe('string');
    issued[name] = first.body.next;
  }
});

const hexDigit = fc.constantFrom(...'0123456789abcdef');
const hex = (maxLength: number) => fc.string({ unit: hexDigit, minLength: 1, maxLength });

/** A cursor the daemon issued, changed: one digit, cut short, lengthened, or its halves swapped. */
function mutated(cursor: string): fc.Arbitrary<string> {
  const at = fc.nat({ max: cursor.length - 1 });
  return fc.oneof(
    fc.tuple(at, hexDigit).filter(([i, d]) => cursor[i] !== d).map(([i, d]) => cursor.slice(0, i) + d + cursor.slice(i + 1)),
    fc.integer({ min: 1, max: cursor.length - 1 }).map((n) => cursor.slice(0, n)),
    hex(16).map((tail) => cursor + tail),
    hex(16).map((head) => head + cursor),
    fc.constant(cursor.slice(cursor.length / 2) + cursor.slice(0, cursor.length / 2)).filter((c) => c !== cursor),
  );
}

async function expectRefused(path: string, cursor: string): Promise<void> {
  const r = await alice.get(`${path}&cursor=${encodeURIComponent(cursor)}`);
  expect(r.status, `${path} cursor=${cursor}: ${r.status} ${r.text}`).toBeGreaterThanOrEqual(400);
  expect(r.status, `${path} cursor=${cursor}: ${r.text}`).toBeLessThan(500);
  refusalOf(r);
}

describe('cursors', () => {
  it('read the next page when given back as issued', async () => {
    for (const [name, path] of Object.entries(listings)) {
      const r = await alice.get(`${path}&cursor=${issued[name]}`);
      expect(r.status, `${name}: ${r.text}`).toBe(200);
    }
  });

  it('refuse a well-formed cursor naming a position no page ends at', async () => {
    for (const [name, path] of Object.entries(listings)) {
      const cursor = issued[name]!;
      await expectRefused(path, 'f'.repeat(16) + cursor.slice(16));
      await expectRefused(path, '0'.repeat(cursor.length));
    }
  });

  it('refuse random and mutated cursors with a 4xx, on every listing', async () => {
    const names = Object.keys(listings);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...names).chain((name) =>
          fc.tuple(
            fc.constant(name),
            fc.oneof(
              { weight: 3, arbitrary: mutated(issued[name]!) },
              { weight: 1, arbitrary: hex(80) },
              { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
              // Another listing's cursor.
              { weight: 1, arbitrary: fc.constantFrom(...names.filter((n) => issued[n] !== issued[name]).map((n) => issued[n]!)) },
            ),
          ),
        ),
        async ([name, cursor]) => expectRefused(listings[name]!, cursor),
      ),
      { numRuns: 300 },
    );
  });
});

describe('numbered positions', () => {
  it("are checked whole: a checkpoints page's `before` reads or refuses, an events `after` past the latest is refused", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 25 }), async (digits) => {
        const page = await alice.get(`/v1/checkpoints?before=${digits}`);
        if (page.status !== 200) expect(refusalOf(page).status, page.text).toBe(400);
        // Events are numbered from 1 and this book has a few dozen: any 3-digit-or-longer number is past the latest.
        const events = await alice.get(`/v1/events?after=${digits}999`);
        expect(refusalOf(events).status, events.text).toBe(400);
      }),
      { numRuns: 100 },
    );
  });
});
