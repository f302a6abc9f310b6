import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildLargeBook, defaultShape, proveBook, readManifest } from '../../bench/large-book-build.js';
import { bookPaths } from '../../daemon/data-dir.js';
import { keys, prefixEnd } from '../../src/model/keys.js';
import { LevelStore } from '../../src/store/level.js';
import { ledgerd, useTempDirs } from '../daemon/support.js';

// bench/large-book measures queries and memory on a book this builder writes straight
// into the store: the figures mean something only if that book is one ledgerd could
// have written, so it must open, balance and pass `ledgerd check`.
describe('the large-book builder of bench/large-book', () => {
  const tempDir = useTempDirs();

  it('builds a valid book of the size asked, hot accounts and cold ones', async () => {
    const dir = tempDir();
    const manifest = await buildLargeBook(dir, defaultShape(2_000), Date.now());
    expect(manifest.postingSeq).toBeGreaterThanOrEqual(2_000);
    expect(manifest.postingSeq).toBeLessThan(2_002);
    expect(await readManifest(dir)).toEqual(manifest);

    expect(await proveBook(dir)).toEqual({ postingSeq: manifest.postingSeq, accounts: manifest.shape.customers + manifest.shape.assets.length, unbalanced: 0, totalsOk: true });

    const { stdout } = await promisify(execFile)(process.execPath, [ledgerd, 'check', '--data-dir', dir]);
    expect(stdout).toContain(`${manifest.postingSeq} journal entries, journal position ${manifest.postingSeq}`);
    expect(stdout).toMatch(/: consistent\n$/);

    // The spread: a hot account holds a multiple of a cold one's entries.
    const store = await LevelStore.open(bookPaths(dir).book, { createIfMissing: false });
    try {
      const count = async (account: string) => {
        let n = 0;
        const prefix = keys.accountAssetPrefix(account, 'USD');
        for await (const _ of store.entries({ gte: prefix, lt: prefixEnd(prefix), limit: Number.MAX_SAFE_INTEGER })) n++;
        return n;
      };
      expect(await count(manifest.hot[0]!)).toBeGreaterThan(2 * (await count(manifest.cold[0]!)));
    } finally {
      await store.close();
    }
  });
});
