/**
 * `store.writeBufferBytes` reaches LevelDB: the same load of transfers through two real
 * daemons writes table files (a memtable flushed) under a 1 MiB write buffer, and none
 * under the default 64 MiB. The flushes are read from the book's directory, which is
 * what the setting changes.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addConfig, client, decided, startDaemon, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();
// Well over 1 MiB of writes at store layout 7's ~1 KB per transfer (600 were once enough), far under 64 MiB.
const transfers = 2_400;
const inFlight = 32;

/** Table files (`.ldb`) in the book's LevelDB directory. */
const tables = (dir: string): string[] => readdirSync(join(dir, 'book')).filter((name) => name.endsWith('.ldb')).sort();

/** Tables the daemon's LevelDB writes while `transfers` transfers are acknowledged and decided. */
async function tablesWrittenUnderLoad(writeBufferBytes: number | null): Promise<string[]> {
  const dir = newDir();
  const keys = await writeBook(dir, { alice: 1_000_000n, bob: 0n });
  if (writeBufferBytes !== null) addConfig(dir, { store: { kind: 'leveldb', writeBufferBytes } });
  const daemon = await startDaemon({ dataDir: dir });
  try {
    // Opening replays the log genesis left into a table: counted before the load, not by it.
    const before = tables(dir);
    const alice = client(() => daemon.url, keys.customers.alice!);
    let next = 0;
    let last = '';
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < transfers) {
          const n = next++;
          const r = await alice.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '1' }], reference: n });
          expect(r.status, JSON.stringify(r.body)).toBe(202);
          last = r.body.operation_reference;
        }
      }),
    );
    expect((await decided(alice, last)).body.state).toBe('Completed');
    return tables(dir).filter((name) => !before.includes(name));
  } finally {
    expect(await daemon.stop(), daemon.lastLines()).toBe(0);
  }
}

describe('store.writeBufferBytes', () => {
  it('sizes LevelDB\'s memtable: a 1 MiB buffer is written out to tables under a load the default holds in memory', async () => {
    expect(await tablesWrittenUnderLoad(1024 * 1024)).not.toEqual([]);
    expect(await tablesWrittenUnderLoad(null)).toEqual([]);
  });
});
