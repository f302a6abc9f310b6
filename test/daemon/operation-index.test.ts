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
import { client, decided, removeDir, startDaemon, tempDir, writeBook } from './support.js';

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
