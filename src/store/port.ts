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
   * After a failed write (or read), before writing again: makes the store fit to write
   * without losing what it held. Rejects while it cannot yet (the caller tries again later).
   */
  recover(): Promise<void>;
  snapshot(): Snapshot;
  close(): Promise<void>;
}
