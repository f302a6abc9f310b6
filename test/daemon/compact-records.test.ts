/**
 * Store layout 7's compact records through a real ledgerd: the audit trail (`au/`) and the
 * operations index (`ot/`) in one chunk per write, client-key records (`ck/`) as digest bytes
 * and a packed reference. On the layout-6 fixture book migrated to 7, whose old one-item
 * entries stay beside the chunks written after, the audit listing and the operations listing
 * page, filter and resume (cursors inside a chunk and across) as one listing, and the book
 * checks clean; a client key recorded in layout 6's form still answers repeats; a ledgerd
 * killed mid-stream leaves whole chunks only; `ledgerd check` names an item gone from a chunk.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditEntryItems } from '../../src/auth/audit.js';
import { decodeClientKeyRecord } from '../../src/book/client-key-record.js';
import { keySpaces, prefixEnd } from '../../src/model/keys.js';
import { operationIndexItems } from '../../src/queries/operation-index.js';
import { LevelStore } from '../../src/store/level.js';
import { fixtureBook, layFixtureBook } from '../support/fixture-books.js';
import { type Client, client, decided, ledgerdRun, refusalOf, startDaemon, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();
const slowTestMs = 180_000;

/** Every item of a listing, following `next` with pages of `limit`. */
async function wholeListing(api: Client, path: string, limit: number): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const r = await api.get(`${path}${path.includes('?') ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.items.length).toBeLessThanOrEqual(limit);
    out.push(...r.body.items);
    if (r.body.next === undefined) return out;
    cursor = r.body.next;
  }
  throw new Error('the listing did not end');
}

/** The values of one key space of a stopped book. */
async function spaceValues(dir: string, prefix: string): Promise<[string, string][]> {
  const store = await LevelStore.open(join(dir, 'book'));
  try {
    const out: [string, string][] = [];
    for await (const entry of store.entries({ gte: prefix, lt: prefixEnd(prefix), limit: 100_000 })) out.push(entry);
    return out;
  } finally {
    await store.close();
  }
}

const transferBody = (from: string, to: string, amount = '1') => ({ legs: [{ from, to, asset: 'USD', amount }] });

describe('a layout-6 book migrated to layout 7', () => {
  const fixture = fixtureBook('layout-6');
  const { keys, expected } = fixture;

  it('lists its layout-6 audit items and index entries and the chunks written after as one listing, paged and filtered', async () => {
    const dir = newDir();
    await layFixtureBook(fixture, dir, undefined, {
      'ledgerd.json': readFileSync(join(fixture.dir, 'ledgerd.json'), 'utf8'),
      'liabilities.key': readFileSync(join(fixture.dir, 'liabilities.key'), 'utf8'),
    });
    const migrated = await ledgerdRun(['migrate', '--data-dir', dir]);
    expect(migrated.code, migrated.stdout + migrated.stderr).toBe(0);
    const oldAudit = (await spaceValues(dir, keySpaces.audit)).length;
    const oldIndex = (await spaceValues(dir, keySpaces.operationTime)).length;

    const daemon = await startDaemon({ dataDir: dir });
    try {
      const op = client(daemon.url, keys.operator);
      const alice = client(daemon.url, keys.alice!);
      const { alice: from, bob: to } = expected.accounts;
      // Many at once, so that intake writes and decision rounds take several each (chunks of many items).
      for (let wave = 0; wave < 3; wave++) {
        const sent = await Promise.all([
          ...Array.from({ length: 24 }, (_, i) => op.post('/v1/transfers', transferBody(from, to), undefined, { 'client-key': `w${wave}-op-${i}` })),
          ...Array.from({ length: 6 }, (_, i) => alice.post('/v1/transfers', transferBody(from, to), undefined, { 'client-key': `w${wave}-alice-${i}` })),
        ]);
        for (const r of sent) expect(r.status, r.text).toBe(202);
        for (const r of sent) expect((await decided(op, r.body.operation_reference)).body.state).toBe('Completed');
      }

      // The audit trail: the fixture's items first, then one per operator transfer (and the backups), seq after seq.
      const trail = (await op.get('/v1/ops/audit?limit=1000')).body.items as any[];
      expect(trail.slice(0, expected.audit.items.length)).toEqual(expected.audit.items);
      expect(trail.map((i) => i.seq)).toEqual(trail.map((_, n) => n + 1));
      expect(trail.filter((i) => i.act === 'createTransfer' && i.member === 'root')).toHaveLength(72 + expected.audit.items.filter((i: any) => i.act === 'createTransfer').length);
      for (const limit of [1, 2, 3, 7, 64]) expect(await wholeListing(op, '/v1/ops/audit', limit), `limit ${limit}`).toEqual(trail);
      const rootOnly = trail.filter((i) => i.member === 'root');
      expect(await wholeListing(op, '/v1/ops/audit?member=root', 5)).toEqual(rootOnly);
      // A cursor past the first seq of a chunk resumes at the next item.
      const afterTen = await op.get(`/v1/ops/audit?limit=3&cursor=${(10).toString(16).padStart(16, '0')}`);
      expect(afterTen.body.items.map((i: any) => i.seq)).toEqual([11, 12, 13]);

      // The operations: newest first by submission time, every operation once, in pages of any size.
      const ops = await wholeListing(op, '/v1/ops/operations', 1000);
      const refs = ops.map((o) => o.operation_reference);
      expect(new Set(refs).size).toBe(refs.length);
      expect(refs).toEqual(expect.arrayContaining(Object.keys(expected.operations)));
      for (let i = 1; i < ops.length; i++) expect(ops[i].submitted_at).toBeLessThanOrEqual(ops[i - 1].submitted_at);
      for (const limit of [1, 3, 7, 100]) expect(await wholeListing(op, '/v1/ops/operations', limit), `limit ${limit}`).toEqual(ops);
      const alicePrincipal = expected.identities.alice as string;
      expect(await wholeListing(op, `/v1/ops/operations?principal=${alicePrincipal}`, 2)).toEqual(ops.filter((o) => o.principal === alicePrincipal));
      // Time ranges: [from, to) over the new operations' times, and one reaching back over the old ones.
      const times = [...new Set(ops.map((o) => o.submitted_at as number))].sort((a, b) => a - b);
      const ranges: [number, number][] = [[times[Math.floor(times.length / 2)]!, times.at(-1)!], [times[0]!, times[Math.floor(times.length / 2)]! + 1], [times.at(-1)!, times.at(-1)! + 1]];
      for (const [fromMs, toMs] of ranges) {
        const within = ops.filter((o) => o.submitted_at >= fromMs && o.submitted_at < toMs);
        expect(within.length).toBeGreaterThan(0);
        expect(await wholeListing(op, `/v1/ops/operations?from=${fromMs}&to=${toMs}`, 2), `[${fromMs}, ${toMs})`).toEqual(within);
      }
    } finally {
      expect(await daemon.stop()).toBe(0);
    }

    // Both forms side by side: the old entries as they were, and chunks of many items written after.
    const audit = await spaceValues(dir, keySpaces.audit);
    expect(audit.filter(([, v]) => v.startsWith('{'))).toHaveLength(oldAudit);
    const auditChunks = audit.filter(([, v]) => v.startsWith('['));
    expect(Math.max(...auditChunks.map(([k, v]) => auditEntryItems(k, v).length))).toBeGreaterThan(1);
    const index = await spaceValues(dir, keySpaces.operationTime);
    expect(index.filter(([, v]) => v.startsWith('{'))).toHaveLength(oldIndex);
    expect(Math.max(...index.filter(([, v]) => v.startsWith('[')).map(([k, v]) => operationIndexItems(k, v).length))).toBeGreaterThan(1);
    const clientKeys = await spaceValues(dir, keySpaces.clientKey);
    expect(clientKeys.some(([, v]) => v.startsWith('{'))).toBe(true);
    const compact = clientKeys.filter(([k]) => k.includes('/w0-op-'));
    expect(compact).toHaveLength(24);
    for (const [, v] of compact) expect(v.length).toBeLessThan(70);

    const checked = await ledgerdRun(['check', '--data-dir', dir]);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
  }, slowTestMs);
});

describe('client keys', () => {
  it('answer a repeat from a record of either form, and refuse another request under the key', async () => {
    const dir = newDir();
    const bookKeys = await writeBook(dir, { carol: 1_000n, dan: 0n });
    const body = transferBody('did:ledger:acct:carol', 'did:ledger:acct:dan');
    const other = transferBody('did:ledger:acct:carol', 'did:ledger:acct:dan', '2');
    const key = { 'client-key': 'same-key' };
    let daemon = await startDaemon({ dataDir: dir });
    const carol = client(() => daemon.url, () => bookKeys.customers.carol!);
    const first = await carol.post('/v1/transfers', body, undefined, key);
    expect(first.status, first.text).toBe(202);
    const ref = first.body.operation_reference as string;
    await decided(carol, ref);
    const repeat = async () => {
      const again = await carol.post('/v1/transfers', body, undefined, key);
      expect(again.body.operation_reference).toBe(ref);
      expect(again.body.state).toBe('Completed');
      expect(refusalOf(await carol.post('/v1/transfers', other, undefined, key))).toEqual({ status: 409, error: 'ERR-ClientKeyReused' });
    };
    await repeat();
    expect(await daemon.stop()).toBe(0);

    // The record as layout 7 writes it, then as layout 6 wrote it (the same digest and reference as JSON).
    const [[ckKey, value]] = (await spaceValues(dir, keySpaces.clientKey)).filter(([k]) => k.endsWith('/same-key')) as [[string, string]];
    expect(value.startsWith('{')).toBe(false);
    const record = decodeClientKeyRecord(value);
    expect(record.ref).toBe(ref);
    expect(record.digest).toMatch(/^[0-9a-f]{64}$/);
    const store = await LevelStore.open(join(dir, 'book'));
    await store.write([{ type: 'put', key: ckKey, value: JSON.stringify({ digest: record.digest, ref }) }], true);
    await store.close();

    daemon = await startDaemon({ dataDir: dir });
    try {
      await repeat();
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  }, slowTestMs);
});

describe('a ledgerd killed while it takes a stream of commands', () => {
  it('leaves whole chunks: every acknowledged command listed once, the trail without a gap, the book consistent', async () => {
    const dir = newDir();
    const bookKeys = await writeBook(dir, { carol: 1_000_000n, dan: 0n });
    let daemon = await startDaemon({ dataDir: dir });
    const op = client(() => daemon.url, () => bookKeys.operator);
    const acknowledged: string[] = [];
    const sent = Array.from({ length: 300 }, (_, i) =>
      op.post('/v1/transfers', transferBody('did:ledger:acct:carol', 'did:ledger:acct:dan'), undefined, { 'client-key': `stream-${i}` }).then(
        (r) => void (r.status === 202 && acknowledged.push(r.body.operation_reference)),
        () => undefined,
      ),
    );
    while (acknowledged.length < 20) await new Promise((r) => setTimeout(r, 2));
    await daemon.stop('SIGKILL');
    await Promise.all(sent);

    const checked = await ledgerdRun(['check', '--data-dir', dir]);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    daemon = await startDaemon({ dataDir: dir });
    try {
      const listed = (await wholeListing(op, '/v1/ops/operations', 1000)).map((o) => o.operation_reference as string);
      expect(new Set(listed).size).toBe(listed.length);
      expect(listed).toEqual(expect.arrayContaining(acknowledged));
      for (const ref of listed) await decided(op, ref);
      const trail = await wholeListing(op, '/v1/ops/audit', 1000);
      expect(trail.map((i) => i.seq)).toEqual(trail.map((_, n) => n + 1));
      // Each decided transfer is one audit item, once.
      const audited = trail.filter((i) => i.act === 'createTransfer').map((i) => i.operation_reference);
      expect([...audited].sort()).toEqual([...listed].sort());
    } finally {
      expect(await daemon.stop()).toBe(0);
    }

    // ledgerd check finds an item gone from inside a chunk (the chunk rewritten without its last).
    const [key, value] = (await spaceValues(dir, keySpaces.operationTime)).find(([k, v]) => operationIndexItems(k, v).length > 1)!;
    const dropped = operationIndexItems(key, value).at(-1)!;
    const shorter = JSON.parse(value) as unknown[];
    shorter.pop();
    const store = await LevelStore.open(join(dir, 'book'));
    await store.write([{ type: 'put', key, value: JSON.stringify(shorter) }], true);
    await store.close();
    const damaged = await ledgerdRun(['check', '--data-dir', dir]);
    expect(damaged.code, damaged.stdout + damaged.stderr).toBe(6);
    expect(damaged.stdout).toContain(`operation "${dropped.ref}" is missing from the operations index`);
  }, slowTestMs);
});
