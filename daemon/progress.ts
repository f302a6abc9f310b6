/**
 * Progress of long offline work (`init --genesis`, `migrate`, `check`, `restore`) on stderr,
 * counted in store entries: on a terminal one line redrawn in place (entries done, rate, time left
 * when the whole is known) at most every `progressRedrawMs`, and erased at the end so no line is
 * left behind; otherwise one summary line at the end, for logs. The entries are counted by
 * wrapping the store at the edge, so the kernel neither knows nor pays for it.
 */
import { type ReadView, type Snapshot, type Store, batchOf } from '../src/store/port.js';
import { progressRedrawMs } from './constants.js';

export interface ProgressOut {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

const count = new Intl.NumberFormat('en-US');

/** `m:ss` (or `h:mm:ss`) of a duration. */
function clock(ms: number): string {
  const s = Math.round(ms / 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  return s >= 3600 ? `${Math.floor(s / 3600)}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}` : `${Math.floor(s / 60)}:${two(s % 60)}`;
}

export class Progress {
  private done = 0;
  /** The first entries are shown at once, later ones at most every progressRedrawMs. */
  private drawnAtMs = -Infinity;
  private drawn = false;
  private readonly startedAtMs: number;
  private fraction: (entriesDone: number) => number | null = () => null;

  /** `label` starts each line (`ledgerd check`); `verb` says what happened to the entries (`read`, `written`). */
  constructor(
    private readonly out: ProgressOut,
    private readonly label: string,
    private readonly verb: string,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.startedAtMs = nowMs();
  }

  /**
   * How much of the whole is done (0 to 1, from the entries counted so far or from the work's own
   * measure: bytes of a backup read, entries of a genesis file taken), where a total is known: time
   * left is shown from it. Null while it cannot be told.
   */
  measure(fraction: (entriesDone: number) => number | null): void {
    this.fraction = fraction;
  }

  add(entries: number): void {
    this.done += entries;
    if (this.out.isTTY !== true) return;
    const now = this.nowMs();
    if (now - this.drawnAtMs < progressRedrawMs) return;
    this.drawnAtMs = now;
    // Cut to the terminal's width: a wrapped line could not be redrawn in place.
    const line = this.line(now).slice(0, Math.max(1, (this.out.columns ?? 80) - 1));
    this.out.write(`\r\x1b[K${line}`);
    this.drawn = true;
  }

  /** Erases the terminal's line, if one is drawn (before a result or a failure is printed). */
  clear(): void {
    if (!this.drawn) return;
    this.out.write('\r\x1b[K');
    this.drawn = false;
  }

  /** Ends the display of work done: the terminal's line erased, else the one summary line. */
  end(): void {
    this.clear();
    // Nothing counted (a migration with nothing to do): nothing to sum up.
    if (this.out.isTTY === true || this.done === 0) return;
    const elapsedMs = this.nowMs() - this.startedAtMs;
    this.out.write(`${this.label}: ${count.format(this.done)} entries ${this.verb} in ${(elapsedMs / 1000).toFixed(1)} s (${count.format(this.rate(elapsedMs))}/s)\n`);
  }

  private rate(elapsedMs: number): number {
    return elapsedMs <= 0 ? 0 : Math.round((this.done * 1000) / elapsedMs);
  }

  private line(now: number): string {
    const elapsedMs = now - this.startedAtMs;
    const fraction = this.fraction(this.done);
    const left = fraction === null || fraction <= 0 ? '' : `, ${Math.floor(Math.min(fraction, 1) * 100)}%, ${clock((elapsedMs * (1 - Math.min(fraction, 1))) / fraction)} left`;
    return `${this.label}: ${count.format(this.done)} entries ${this.verb}, ${count.format(this.rate(elapsedMs))}/s${left}`;
  }
}

/** Runs `work` with a progress display on `out`, ended (or, on a failure, erased) before the caller prints anything. */
export async function withProgress<T>(out: ProgressOut, label: string, verb: string, work: (progress: Progress) => Promise<T>): Promise<T> {
  const progress = new Progress(out, label, verb);
  try {
    const result = await work(progress);
    progress.end();
    return result;
  } finally {
    progress.clear();
  }
}

/** A read view whose every entry read (by range, or by key when present) is counted. */
function countedReads<V extends ReadView>(view: V, progress: Progress): ReadView {
  return {
    get: async (key) => {
      const value = await view.get(key);
      if (value !== undefined) progress.add(1);
      return value;
    },
    getMany: async (keys) => {
      const values = await view.getMany(keys);
      progress.add(values.filter((v) => v !== undefined).length);
      return values;
    },
    entries: (range) => ({
      async *[Symbol.asyncIterator]() {
        for await (const entry of view.entries(range)) {
          progress.add(1);
          yield entry;
        }
      },
    }),
  };
}

/** `store` with the entries it reads, its snapshots' included, counted into `progress` (`ledgerd check`, the book `migrate` reads). */
export function countingReads(store: Store, progress: Progress): Store {
  return {
    ...countedReads(store, progress),
    write: (ops, sync) => store.write(ops, sync),
    recover: () => store.recover(),
    snapshot: (): Snapshot => {
      const snap = store.snapshot();
      return { ...countedReads(snap, progress), close: () => snap.close() };
    },
    close: () => store.close(),
  };
}

/** `store` with the entries it writes counted into `progress` (the book `init` and `restore` build). */
export function countingWrites(store: Store, progress: Progress): Store {
  return {
    get: (key) => store.get(key),
    getMany: (keys) => store.getMany(keys),
    entries: (range) => store.entries(range),
    write: async (ops, sync) => {
      await store.write(ops, sync);
      progress.add(ops.length);
    },
    batch: () => {
      const batch = batchOf(store);
      return {
        put: (key, value) => batch.put(key, value),
        del: (key) => batch.del(key),
        get length() {
          return batch.length;
        },
        write: async (sync) => {
          const written = batch.length;
          await batch.write(sync);
          progress.add(written);
        },
      };
    },
    recover: () => store.recover(),
    snapshot: () => store.snapshot(),
    close: () => store.close(),
  };
}
