/**
 * A value read in the background by one reader at a time (daemon/routes/metrics.ts: the
 * book-derived gauges). A caller asks for it, which starts a read unless one is under way,
 * and waits for that read at most `waitMs`; past that, or when the read fails, it gets the
 * last value read and when it was read. So callers never pile reads onto a stuck store, and
 * none waits longer than its bound, however long the store takes.
 */
export interface Read<T> {
  readonly value: T;
  readonly atMs: number;
}

export class LastReading<T> {
  private last: Read<T> | null = null;
  private underWay: Promise<void> | null = null;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly waitMs: number,
    private readonly clock: () => number,
    /** Told of a read that failed (its value is then left as it was). */
    private readonly onFailure: (error: unknown) => void,
  ) {}

  /** The freshest value this caller may wait for; null while none was ever read. */
  async get(): Promise<Read<T> | null> {
    this.underWay ??= this.read().then(
      (value) => {
        this.last = { value, atMs: this.clock() };
      },
      (error: unknown) => this.onFailure(error),
    ).finally(() => {
      this.underWay = null;
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.underWay, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.waitMs)))]);
    clearTimeout(timer);
    return this.last;
  }
}
