/**
 * The operations index `ot/` (src/queries/operation-index.ts) on a book written before it: a
 * ledgerd that opens such a book builds it, so the operator's listing of operations
 * (GET /v1/ops/operations) holds every operation the book held. On LevelDB, whose stopped book
 * the test edits to be such a book.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keys, prefixEnd } from '../../src/model/keys.js';
import { LevelStore } from '../../src/store/level.js';
import { client, decided, ledgerdRun, removeDir, startDaemon, tempDir, writeBook } from './support.js';

describe('a book from before the operations index', () => {
  it('has the index built at open: every operation it holds is listed, newest first', async () => {
    const dir = tempDir();
    try {
      const bookKeys = await writeBook(dir, { carol: 1_000n });
      let daemon = await startDaemon({ dataDir: dir });
      const carol = client(() => daemon.url, () => bookKeys.customers.carol!);
      const refs: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await carol.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:carol', to: 'did:ledger:acct:treasury-USD', asset: 'USD', amount: '1' }] }, undefined, { 'client-key': `old-${i}` });
        refs.unshift(r.body.operation_reference);
        await decided(carol, r.body.operation_reference);
      }
      expect(await daemon.stop()).toBe(0);
      // What a book written before the index holds: no ot/ entry and no mark that it was built.
      const store = await LevelStore.open(join(dir, 'book'));
      const dropped: string[] = [];
      for await (const [key] of store.entries({ gte: keys.operationTimePrefix, lt: prefixEnd(keys.operationTimePrefix), limit: 1000 })) dropped.push(key);
      expect(dropped.length).toBe(3);
      await store.write([...dropped, keys.operationTimeBuilt].map((key) => ({ type: 'del' as const, key })), true);
      await store.close();

      daemon = await startDaemon({ dataDir: dir });
      const asOperator = client(() => daemon.url, () => bookKeys.operator);
      const listed = (await asOperator.get('/v1/ops/operations?principal=did:ledger:id:carol')).body.items.map((o: any) => o.operation_reference);
      expect(listed).toEqual(refs);
      expect(await daemon.stop()).toBe(0);
    } finally {
      await removeDir(dir);
    }
  });
});

describe('ledgerd check', () => {
  it('names an operation missing from the operations index, and an entry that names no operation', async () => {
    const dir = tempDir();
    try {
      const bookKeys = await writeBook(dir, { carol: 1_000n });
      const daemon = await startDaemon({ dataDir: dir });
      const carol = client(() => daemon.url, () => bookKeys.customers.carol!);
      const r = await carol.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:carol', to: 'did:ledger:acct:treasury-USD', asset: 'USD', amount: '1' }] }, undefined, { 'client-key': 'checked' });
      const ref = r.body.operation_reference as string;
      await decided(carol, ref);
      expect(await daemon.stop()).toBe(0);
      expect((await ledgerdRun(['check', '--data-dir', dir])).code).toBe(0);

      const store = await LevelStore.open(join(dir, 'book'));
      let entry: [string, string] | undefined;
      for await (const e of store.entries({ gte: keys.operationTimePrefix, lt: prefixEnd(keys.operationTimePrefix), limit: 1 })) entry = e;
      expect(entry).toBeDefined();
      const planted = keys.operationTime(1, 999_999);
      await store.write([{ type: 'del', key: entry![0] }, { type: 'put', key: planted, value: JSON.stringify({ ref: 'op_planted', type: 'transfer', principal: 'did:ledger:id:carol' }) }], true);
      await store.close();

      const checked = await ledgerdRun(['check', '--data-dir', dir]);
      expect(checked.code).toBe(6);
      expect(checked.stdout).toContain(`operation "${ref}" is missing from the operations index`);
      expect(checked.stdout).toContain(`operations index entry "${planted}" names "op_planted", no operation of the book`);
    } finally {
      await removeDir(dir);
    }
  });
});
