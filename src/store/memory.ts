import type { BatchOp, Range, ReadView, Snapshot, Store } from './port.js';

/**
 * An in-memory store with the same semantics as LevelStore, for fast property tests.
 * Keys are kept sorted; a snapshot is a frozen copy (tests keep books small).
 */
export class MemoryStore implements Store {
  private keys: string[] = [];
  private readonly values = new Map<string, string>();

  async get(key: string) {
    return this.values.get(key);
  }
  async getMany(keys: readonly string[]) {
    return keys.map((k) => this.values.get(k));
  }
  entries(range: Range) {
    return scan(this.keys, this.values, range);
  }
  /** `_sync` is the port's: memory has no log to flush. */
  async write(ops: readonly BatchOp[], _sync?: boolean): Promise<void> {
    for (const op of ops) {
      const i = lowerBound(this.keys, op.key);
      const present = this.keys[i] === op.key;
      if (op.type === 'put') {
        if (!present) this.keys.splice(i, 0, op.key);
        this.values.set(op.key, op.value);
      } else if (present) {
        this.keys.splice(i, 1);
        this.values.delete(op.key);
      }
    }
  }
  /** Nothing to mend: a failed write here is one a test made fail, before it changed anything. */
  async recover(): Promise<void> {}
  snapshot(): Snapshot {
    const keys = this.keys.slice();
    const values = new Map(this.values);
    const view: ReadView = {
      get: async (k) => values.get(k),
      getMany: async (ks) => ks.map((k) => values.get(k)),
      entries: (r) => scan(keys, values, r),
    };
    return { ...view, close: async () => {} };
  }
  async close() {}
}

function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

async function* scan(keys: readonly string[], values: ReadonlyMap<string, string>, r: Range): AsyncIterable<[string, string]> {
  const inRange = (k: string) =>
    (r.gt === undefined || k > r.gt) &&
    (r.gte === undefined || k >= r.gte) &&
    (r.lt === undefined || k < r.lt) &&
    (r.lte === undefined || k <= r.lte);
  const selected = keys.filter(inRange);
  if (r.reverse) selected.reverse();
  for (const k of selected.slice(0, r.limit)) yield [k, values.get(k)!];
}
