/**
 * The store port: ordered string keys, atomic batches, snapshots. LevelDB is the
 * embedded implementation; the roadmap's replicated server database plugs in here.
 * Keep this interface narrow: the kernel needs nothing else.
 */
export type BatchOp = { type: 'put'; key: string; value: string } | { type: 'del'; key: string };

export interface Range {
  gt?: string;
  gte?: string;
  lt?: string;
  lte?: string;
  reverse?: boolean;
  /** At most this many entries; always set by callers (every loop is bounded). */
  limit: number;
}

/** A batch built op by op, applied whole by `write` (every op or none; `sync`: durable before resolving). Written once. */
export interface WriteBatch {
  put(key: string, value: string): void;
  del(key: string): void;
  /** Ops so far. */
  readonly length: number;
  write(sync: boolean): Promise<void>;
}

/** The store's own batch, or one that holds the ops and hands them to `write`. */
export function batchOf(store: Store): WriteBatch {
  if (store.batch !== undefined) return store.batch();
  const ops: BatchOp[] = [];
  return {
    put: (key, value) => void ops.push({ type: 'put', key, value }),
    del: (key) => void ops.push({ type: 'del', key }),
    get length() {
      return ops.length;
    },
    write: (sync) => store.write(ops, sync),
  };
}

/** A consistent read-only view of the store at one instant. */
export interface ReadView {
  get(key: string): Promise<string | undefined>;
  getMany(keys: readonly string[]): Promise<(string | undefined)[]>;
  entries(range: Range): AsyncIterable<[string, string]>;
}

export interface Snapshot extends ReadView {
  close(): Promise<void>;
}

export interface Store extends ReadView {
  /** Applies every op or none. `sync` makes it durable before resolving. */
  write(ops: readonly BatchOp[], sync: boolean): Promise<void>;
  /**
   * A batch the store takes op by op as it is built (LevelDB copies each key and value out
   * at once, so a bulk writer does not hold them until the write), then applies as `write`
   * does. Optional: `batchOf` gives one for any store.
   */
  batch?(): WriteBatch;
  /**
   * After a failed write (or read), before writing again: makes the store fit to write
   * without losing what it held. Rejects while it cannot yet (the caller tries again later).
   */
  recover(): Promise<void>;
  snapshot(): Snapshot;
  close(): Promise<void>;
}
