/**
 * `ledgerd restore --from FILE --data-dir DIR`: a book from a backup (backup-format.ts),
 * with the data dir keys it carries. Like init, the book is built beside its final
 * place (`DIR/book.restore`, or a table beside `ledgerd_kv`) and put in place last: a crash, or a backup found
 * truncated or altered at its trailer, leaves no book behind.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { DamagedRecord } from '../src/model/decode.js';
import type { BatchOp } from '../src/store/port.js';
import { BadBackup, type BackupHeader, type BackupTrailer, type CarriedFile, carriedFiles, readBackup } from './backup-format.js';
import { BookExists, bookIdentity, drawIdsEpoch, idsEpoch, placeOf, prepareDataDir } from './book.js';
import { writeAtomically } from './data-dir.js';
import type { StoreConfig } from './config.js';
import { StartupFailure, exitCodes, fsReason } from './failures.js';
import { keys } from '../src/model/keys.js';
import { restoreBatchEntries } from './constants.js';

const carriedModes: Record<CarriedFile, number> = { 'daemon.key': 0o600, 'clerk.key': 0o600, 'clerk.pub': 0o644 };

export async function restoreBook(from: string, dataDir: string, storeConfig: StoreConfig): Promise<{ header: BackupHeader; trailer: BackupTrailer }> {
  let input;
  try {
    input = await open(from, 'r');
  } catch (error) {
    throw new StartupFailure(`cannot read backup file ${from}: ${fsReason(error)}`, exitCodes.config);
  }
  try {
    await prepareDataDir(dataDir);
    const place = placeOf(dataDir, storeConfig);
    if (await place.exists()) throw new BookExists(`${place.name} already holds a book`);
    const building = await place.build('restore');
    const { store } = building;
    let read;
    try {
      let batch: BatchOp[] = [];
      let entries = 0;
      read = await readBackup(input.readLines(), async (key, value) => {
        batch.push({ type: 'put', key, value });
        entries++;
        if (batch.length < restoreBatchEntries) return;
        await store.write(batch, false);
        batch = [];
      });
      if (entries === 0) throw new BadBackup('the backup holds no entries');
      if (batch.length > 0) await store.write(batch, false);
      // The source may have drawn ids after the backup: the restored book draws its own (docs/operations.md, Backups).
      await store.write([{ type: 'put', key: keys.idsEpoch, value: String(drawIdsEpoch(await idsEpoch(store))) }], true);
    } catch (error) {
      await building.discard();
      if (error instanceof BadBackup) throw new StartupFailure(`backup file ${from}: ${error.message}`, exitCodes.config);
      // The trailer matched: the book the backup was taken from holds the damage (only the id epoch is decoded here).
      if (error instanceof DamagedRecord) {
        throw new StartupFailure(
          `backup file ${from}: its ${keys.idsEpoch} record is damaged (${error.message}), so the book it was taken from is damaged; run \`ledgerd check\` on that book, and restore from an earlier backup of it`,
          exitCodes.config,
        );
      }
      throw error;
    }
    for (const name of carriedFiles) {
      const text = read.header.files[name];
      if (text !== undefined) await writeAtomically(join(dataDir, name), text, carriedModes[name]);
    }
    await building.place(await bookIdentity(dataDir));
    return read;
  } finally {
    await input.close();
  }
}
