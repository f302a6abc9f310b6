/**
 * Books written by the last releases that write store layouts 2 to 6 (test/fixtures/layout-2
 * to layout-6, the same book; make-book.mjs says how), each migrated by `ledgerd migrate` to
 * this ledgerd's layout and served:
 * it answers what that daemon answered — balances, movements, custody, operations, members and
 * the audit trail, checkpoints with their consistency and liabilities proofs (checked by the
 * independent verifier too), its disclosure — checks clean, its grants still work, and it goes
 * on deciding and anchoring. Every later layout's migration must keep this test passing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FixtureBook, eventsFromStart, fixtureBook, layFixtureBook } from '../support/fixture-books.js';
import { independentlyVerify } from '../support/independent-verifier.js';
import { verifyConsistencyReply, verifyLiabilities } from '../support/independent-audit.js';
import { client, decided, ledgerdRun, startDaemon, until, useTempDirs } from './support.js';

const newDir = useTempDirs();
/** Several ledgerd processes and a checkpoint anchored block by block: slow on a loaded machine. */
const slowTestMs = 180_000;

async function fixtureDataDir(fixture: FixtureBook): Promise<string> {
  const dir = newDir();
  await layFixtureBook(fixture, dir, undefined, {
    'ledgerd.json': readFileSync(join(fixture.dir, 'ledgerd.json'), 'utf8'),
    'liabilities.key': readFileSync(join(fixture.dir, 'liabilities.key'), 'utf8'),
  });
  return dir;
}

describe.each(['2', '3', '4', '5', '6'])('a layout-%s book from the release that wrote it', (layout) => {
  const fixture = fixtureBook(`layout-${layout}`);
  const { keys, expected } = fixture;
  it('migrates, checks clean, answers what its daemon answered, proves its checkpoints, and goes on deciding and anchoring', async () => {
    const dir = await fixtureDataDir(fixture);
    const refused = await ledgerdRun(['check', '--data-dir', dir]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(new RegExp(`store layout ${layout}; this ledgerd reads \\d+: run ledgerd migrate`));
    const migrated = await ledgerdRun(['migrate', '--data-dir', dir]);
    expect(migrated.code, migrated.stdout + migrated.stderr).toBe(0);
    const checked = await ledgerdRun(['check', '--data-dir', dir]);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    expect(checked.stdout).toMatch(/: consistent\n$/);

    const daemon = await startDaemon({ dataDir: dir });
    try {
      const op = client(daemon.url, keys.operator);
      const alice = client(daemon.url, keys.alice!);
      for (const [account, body] of Object.entries(expected.balances)) expect((await op.get(`/v1/accounts/${account}/balances`)).body).toMatchObject(body as object);
      for (const [account, body] of Object.entries(expected.movements)) expect((await op.get(`/v1/movements?account=${account}&limit=1000`)).body).toMatchObject(body as object);
      for (const [account, body] of Object.entries(expected.custody)) expect((await op.get(`/v1/accounts/${account}/custody`)).body).toEqual(body);
      expect((await op.get('/v1/trial-balance')).body).toMatchObject(expected.trialBalance);
      for (const [ref, body] of Object.entries(expected.operations)) expect((await op.get(`/v1/operations/${ref}`)).body).toMatchObject(body as object);
      expect((await op.get('/v1/assets')).body).toEqual(expected.assets);
      expect((await op.get('/v1/ops/members')).body).toEqual(expected.members);
      // The trail, and then the backup the fixture was taken by: recorded before its snapshot, so the book holds it (CONTRACT 13).
      const trail = (await op.get('/v1/ops/audit?limit=1000')).body.items;
      expect(trail.slice(0, -1)).toEqual(expected.audit.items);
      expect(trail.at(-1)).toMatchObject({ act: 'backup', member: 'root' });
      expect((await op.get('/v1/clerk')).body).toEqual(expected.clerk);
      expect(await eventsFromStart(daemon.url, keys.operator, expected.events.length)).toMatchObject(expected.events);

      // Checkpoints, their consistency and a holder's liabilities proof: the same bytes, and each verifies independently.
      const chain = (await op.get('/v1/checkpoints')).body;
      expect(chain).toEqual(expected.checkpoints);
      const oldestFirst = [...chain.items].reverse();
      const instance = expected.clerk.instance as number;
      const consistency = (await op.get('/v1/checkpoints/2/consistency?from=1')).body;
      expect(consistency).toEqual(expected.consistency);
      verifyConsistencyReply(instance, oldestFirst, 1, 2, consistency);
      const liabilities = (await alice.get(`/v1/accounts/${expected.accounts.alice}/liabilities?checkpoint=2&asset=USD`)).body;
      expect(liabilities).toEqual(expected.liabilities);
      verifyLiabilities(instance, chain.items.find((c: { number: number }) => c.number === 2), expected.accounts.alice, 'USD', liabilities);
      const disclosure = expected.disclosure.result.disclosure as string;
      independentlyVerify(disclosure, { clerk: expected.clerk.public_key, instance, checkpoints: oldestFirst });
      expect((await op.post('/v1/disclosures/verify', { disclosure })).body).toMatchObject({ passed: true });
      // Asked again of the migrated book, whose account index holds no leaf: the same evidence, the journal's bytes, and it verifies against the old checkpoints.
      const payload = (hex: string) => JSON.parse(Buffer.from(hex, 'hex').toString('utf8'));
      const ask = async (assertion: object, clientKey: string) => {
        const made = await alice.post('/v1/disclosures', { subject: expected.accounts.alice, assertion, recipient_reference: 'ef'.repeat(32) }, undefined, { 'client-key': clientKey });
        expect(made.status, JSON.stringify(made.body)).toBe(200);
        const again = made.body.result.disclosure as string;
        independentlyVerify(again, { clerk: expected.clerk.public_key, instance, checkpoints: oldestFirst });
        return payload(again);
      };
      expect((await ask(payload(disclosure).assertion, `again-${layout}`)).evidence).toEqual(payload(disclosure).evidence);
      const flows = await ask({ shape: 'flows_bound', asset: 'USD', bound: '1', bound_kind: 'at_least', direction: 'out', from_sequence: 1, to_sequence: 34 }, `flows-${layout}`);
      expect(flows.evidence.length).toBeGreaterThan(1);

      // The grant alice gave bob before the migration still lets him hold value on her account; the revoked one does not come back.
      const bob = client(daemon.url, keys.bob!);
      const held = await bob.post('/v1/reservations', { payer: expected.accounts.alice, asset: 'USD', amount: '10' }, undefined, { 'client-key': `after-layout-${layout}-hold` });
      expect((await decided(bob, held.body.operation_reference)).body.state).toBe('Reserved');
      const byRevoked = await bob.post('/v1/transfers', { legs: [{ from: expected.accounts.alice, to: expected.accounts.bob, asset: 'USD', amount: '1' }] }, undefined, { 'client-key': `after-layout-${layout}-revoked` });
      expect(byRevoked.status === 202 ? (await decided(bob, byRevoked.body.operation_reference)).body.state : byRevoked.status).not.toBe('Completed');

      // Deciding goes on: a transfer journalled after the old entries, and a third checkpoint consistent with the second.
      const sent = await alice.post('/v1/transfers', { legs: [{ from: expected.accounts.alice, to: expected.accounts.bob, asset: 'USD', amount: '5' }] }, undefined, { 'client-key': `after-layout-${layout}` });
      expect((await decided(alice, sent.body.operation_reference)).body.state).toBe('Completed');
      // alice's movements: the old book's entries (its layout's index form) read beside the new one (this layout's), the old as they were.
      const movements = (await op.get(`/v1/movements?account=${expected.accounts.alice}&limit=1000`)).body.movements as { operation: string; amount: string; seq: number }[];
      const before = (expected.movements[expected.accounts.alice] as { movements: { seq: number }[] }).movements;
      const seqsBefore = new Set(before.map((m) => m.seq));
      expect(movements.filter((m) => m.operation === sent.body.operation_reference).map((m) => m.amount)).toEqual(['5']);
      expect(movements.filter((m) => seqsBefore.has(m.seq))).toMatchObject(before);
      expect((await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-after' })).status).toBeLessThan(300);
      await until(async () => {
        await op.post('/v1/ops/layer/blocks', { count: 1 });
        return (await op.get('/v1/checkpoints/3')).body.status;
      }, (status) => status === 'final');
      const grown = [...(await op.get('/v1/checkpoints')).body.items].reverse();
      verifyConsistencyReply(instance, grown, 2, 3, (await op.get('/v1/checkpoints/3/consistency?from=2')).body);
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
    const again = await ledgerdRun(['check', '--data-dir', dir]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
  }, slowTestMs);
});
