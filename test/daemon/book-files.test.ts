/**
 * A LevelDB book that lost a file of its own (CURRENT, or the manifest CURRENT names) is
 * damage, named as such with `check`'s exit code for a damaged book (6), not a data dir
 * this user cannot use (4, with advice about ownership).
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ledgerdRun, useTempDirs } from './support.js';

const newDir = useTempDirs();

async function bookWithout(file: (names: string[]) => string): Promise<{ dataDir: string; removed: string }> {
  const dataDir = join(newDir(), 'data');
  expect((await ledgerdRun(['init', '--data-dir', dataDir])).code).toBe(0);
  const removed = file(readdirSync(join(dataDir, 'book')));
  rmSync(join(dataDir, 'book', removed));
  return { dataDir, removed };
}

describe('a book missing a file of its store', () => {
  it.each([
    ['CURRENT', () => 'CURRENT', 'its CURRENT file (naming the manifest of its tables) is missing'],
    ['its manifest', (names: string[]) => names.find((n) => n.startsWith('MANIFEST-'))!, 'its manifest MANIFEST-'],
  ])('without %s: check and serve name the damage and exit 6', async (_what, pick, named) => {
    const { dataDir } = await bookWithout(pick);
    const check = await ledgerdRun(['check', '--data-dir', dataDir]);
    expect(check.stderr).toContain(`the book in ${join(dataDir, 'book')} is damaged: ${named}`);
    expect(check.stderr).toContain('restore it from a backup');
    expect(check.stderr).not.toContain('owns');
    expect(check.code).toBe(6);
    const serve = await ledgerdRun(['serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0']);
    expect(serve.stderr).toContain('is damaged');
    expect(serve.code).toBe(6);
  });
});
