/**
 * Handing an API key to its deciding reply (CONTRACT 5): the key goes out on the first
 * terminal reply under its client key, and never again. The route waits a little for
 * the decision so that reply is usually the acknowledgement itself; when the decision
 * comes later, the key waits here, in memory only, for the first repeat after it.
 *
 * Never stored or logged: the book keeps only the hash. Bounded in count and time; a
 * key not collected in time (or across a restart) is gone, and the credential it
 * names is useless, so the caller registers another.
 */
import { LruCache } from '../../src/book/cache.js';

/** Keys waiting for their deciding reply at once. */
export const handoffKeysMax = 1024;
/** How long a key waits for the repeat that collects it. */
export const handoffWaitMs = 10 * 60 * 1000;
/** How long a registration's reply waits for its decision before answering Received. */
export const decisionWaitMs = 2_000;

interface Waiting {
  readonly apiKey: string;
  readonly untilMs: number;
}

export class ApiKeyHandoff {
  private readonly waiting = new LruCache<Waiting>(handoffKeysMax);

  constructor(private readonly clock: () => number) {}

  /** Keeps `apiKey` for the operation `ref` until its deciding reply collects it. */
  hold(ref: string, apiKey: string): void {
    this.waiting.set(ref, { apiKey, untilMs: this.clock() + handoffWaitMs });
  }

  /** The key of `ref`, once: taking it removes it. */
  take(ref: string): string | null {
    const found = this.waiting.get(ref);
    if (found === undefined) return null;
    this.waiting.delete(ref);
    return this.clock() < found.untilMs ? found.apiKey : null;
  }
}
