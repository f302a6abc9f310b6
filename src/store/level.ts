import { Level } from 'level';
import type { BatchOp, Range, Snapshot, Store } from './port.js';

type Db = Level<string, string>;
type LevelSnapshot = ReturnType<Db['snapshot']>;

/** The embedded LevelDB store (classic-level under `level`). */
export class LevelStore implements Store {
  private constructor(private readonly db: Db) {}

  static async open(location: string, options: { createIfMissing: boolean } = { createIfMissing: true }): Promise<LevelStore> {
    const db = new Level<string, string>(location, {
      keyEncoding: 'utf8',
      valueEncoding: 'utf8',
      createIfMissing: options.createIfMissing,
    });
    await db.open();
    return new LevelStore(db);
  }

  get(key: string) {
    return this.db.get(key);
  }
  getMany(keys: readonly string[]) {
    return this.db.getMany(keys as string[]);
  }
  entries(range: Range) {
    return this.db.iterator(range);
  }
  async write(ops: readonly BatchOp[], sync: boolean): Promise<void> {
    if (ops.length === 0) return;
    // The chained batch: measured ~6x faster per op than the array form of batch()
    // in classic-level 3 (see docs/performance.md). Still one atomic write.
    const batch = this.db.batch();
    for (const op of ops) {
      if (op.type === 'put') batch.put(op.key, op.value);
      else batch.del(op.key);
    }
    await batch.write({ sync });
  }
  snapshot(): Snapshot {
    return new LevelSnapshotView(this.db, this.db.snapshot());
  }
  close() {
    return this.db.close();
  }
}

class LevelSnapshotView implements Snapshot {
  constructor(
    private readonly db: Db,
    private readonly snap: LevelSnapshot,
  ) {}
  get(key: string) {
    return this.db.get(key, { snapshot: this.snap });
  }
  getMany(keys: readonly string[]) {
    return this.db.getMany(keys as string[], { snapshot: this.snap });
  }
  entries(range: Range) {
    return this.db.iterator({ ...range, snapshot: this.snap });
  }
  close() {
    return this.snap.close();
  }
}
