/**
 * The daemon's Prometheus metrics (GET /metrics), on prom-client with a registry of
 * its own. The kernel knows nothing of them: decisions arrive through its
 * `onDecision` listeners, store writes are timed by wrapping the store port, and the
 * backlog and open event streams are read when scraped. Names are fixed: dashboards
 * (ledgerctl's among them) read them.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DecisionEvent } from '../src/book/kernel.js';
import type { BatchOp, Store } from '../src/store/port.js';
import type { Read } from './last-reading.js';
import type { RefusalReason, Share, SlotObserver } from './snapshot-slots.js';

/** States that end a command's first decision: the latency histogram measures submission to one of these. */
const firstDecisionStates: ReadonlySet<string> = new Set(['Completed', 'Rejected', 'Reserved']);

/** Seconds: decisions are group-committed (a few ms) but wait behind a backlog under load. */
const decisionLatencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds: one fsync'd LevelDB batch. */
const storeWriteBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
/** Seconds: a read's wait for a slot, from none up to the longest `snapshotQueueWaitMs`. */
const readWaitBuckets = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Seconds: one HTTP request, from its arrival to the end of its reply (an event stream: as long as it stays open). */
const requestBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface MetricsSources {
  /** Commands acknowledged and not yet decided. */
  readonly backlog: () => number;
  /** Of those, the operator's (the rest are every other principal's). */
  readonly operatorBacklog: () => number;
  /** Event streams open now. */
  readonly streams: () => number;
}

export interface StoreState {
  readonly kind: 'leveldb' | 'postgres';
  /** Why the server may lose an acknowledged commit (its settings named), or null when it may not. */
  readonly durabilityRisk: string | null;
  /** `store.durability`: what ledgerd does while there is a risk (null on LevelDB). */
  readonly onRisk: 'refuse' | 'degraded' | null;
  /** How long the book's writes have been failing or hung (0 while they work). */
  readonly writesFailingMs: number;
}

/** What is read from the book and the layer for the scrapes (by one background reader, daemon/routes/metrics.ts). */
export interface BookReading {
  /** The layer's head and highest final height. */
  readonly height: number;
  readonly finalHeight: number;
  /** The last final height the book took in. */
  readonly takenIn: number;
  /** Withdrawals not yet Completed or Expired (counted up to a bound). */
  readonly pendingInstructions: number;
  /** When the newest final checkpoint was made; null while none is. */
  readonly finalCheckpointAtMs: number | null;
  /** Every asset's kept total (what the trial balance answers from) sums to zero. */
  readonly balanced: boolean;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly decisions: Counter<'state'>;
  private readonly rejections: Counter<'code'>;
  private readonly decisionLatency: Histogram;
  private readonly storeWrite: Histogram;
  private sources: MetricsSources | null = null;
  private readonly readsQueued: Gauge<'share'>;
  private readonly readWait: Histogram<'share'>;
  private readonly readRefusals: Counter<'share' | 'reason'>;
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly requestDuration: Histogram<'method' | 'route'>;
  private readonly book: Record<'height' | 'finalHeight' | 'takenIn' | 'lag' | 'pending' | 'checkpointAge' | 'balanced' | 'age', Gauge>;
  /** The store as an operator reads it (GET /v1/ops/store); on PostgreSQL, from the store's last reading of the server's settings. */
  store: () => StoreState = () => ({ kind: 'leveldb', durabilityRisk: null, onRisk: null, writesFailingMs: 0 });

  constructor(version: string) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.decisions = new Counter({ name: 'ledgerd_decisions_total', help: 'Decisions written, by the state they left the operation in', labelNames: ['state'], registers });
    this.rejections = new Counter({ name: 'ledgerd_rejections_total', help: 'Commands decided Rejected, by refusal code', labelNames: ['code'], registers });
    this.decisionLatency = new Histogram({ name: 'ledgerd_decision_latency_seconds', help: 'From a command\'s acknowledgement to its first decision', buckets: decisionLatencyBuckets, registers });
    this.storeWrite = new Histogram({ name: 'ledgerd_store_write_seconds', help: 'Duration of one atomic store write (a batch)', buckets: storeWriteBuckets, registers });
    const durable = () => this.store().durabilityRisk === null;
    const source = <T>(read: (s: MetricsSources) => T, none: T): T => (this.sources === null ? none : read(this.sources));
    new Gauge({ name: 'ledgerd_backlog_commands', help: 'Commands acknowledged and not yet decided', registers, collect() {
      this.set(source((s) => s.backlog(), 0));
    } });
    new Gauge({ name: 'ledgerd_backlog_commands_by_share', help: 'Commands acknowledged and not yet decided, by share: the operator\'s, and every other principal\'s together', labelNames: ['share'], registers, collect() {
      const operator = source((s) => s.operatorBacklog(), 0);
      this.set({ share: 'operator' }, operator);
      this.set({ share: 'principals' }, source((s) => s.backlog(), 0) - operator);
    } });
    new Gauge({ name: 'ledgerd_event_streams', help: 'Event streams (GET /v1/events) open', registers, collect() {
      this.set(source((s) => s.streams(), 0));
    } });
    this.readsQueued = new Gauge({ name: 'ledgerd_reads_queued', help: 'Reads of the book waiting for a slot, by share (operator or principals)', labelNames: ['share'], registers });
    this.readWait = new Histogram({ name: 'ledgerd_read_wait_seconds', help: 'How long reads that waited for a slot waited, by share', labelNames: ['share'], buckets: readWaitBuckets, registers });
    this.readRefusals = new Counter({ name: 'ledgerd_read_refusals_total', help: 'Reads refused a slot, by share and reason (queue_full, wait_expired)', labelNames: ['share', 'reason'], registers });
    for (const share of ['operator', 'principals'] as const) this.readsQueued.set({ share }, 0);
    new Gauge({ name: 'ledgerd_store_durable', help: 'Always 1 on LevelDB; on PostgreSQL 1 while the server\'s settings keep what it acknowledges (fsync, synchronous_commit), 0 when they may not', registers, collect() {
      this.set(durable() ? 1 : 0);
    } });
    // Routes by their pattern (`/v1/accounts/:account`), never the path sent: one series per route, status and method.
    this.requests = new Counter({ name: 'ledgerd_http_requests_total', help: 'HTTP requests answered, by method, route pattern (unrouted: no route matched) and status', labelNames: ['method', 'route', 'status'], registers });
    this.requestDuration = new Histogram({ name: 'ledgerd_http_request_duration_seconds', help: 'HTTP requests from arrival to the end of the reply, by method and route pattern', labelNames: ['method', 'route'], buckets: requestBuckets, registers });
    const gauge = (name: string, help: string) => new Gauge({ name, help, registers });
    this.book = {
      height: gauge('ledgerd_settlement_height', 'The settlement layer\'s head height'),
      finalHeight: gauge('ledgerd_settlement_final_height', 'The settlement layer\'s highest final height'),
      takenIn: gauge('ledgerd_settlement_taken_in_height', 'The last final height the book took in'),
      lag: gauge('ledgerd_settlement_lag_blocks', 'Final blocks the book has not taken in yet (final height less taken-in height)'),
      pending: gauge('ledgerd_settlement_pending_instructions', 'Withdrawals instructed and not yet Completed or Expired'),
      checkpointAge: gauge('ledgerd_checkpoint_final_age_seconds', 'Age of the newest final checkpoint (NaN while none is final)'),
      balanced: gauge('ledgerd_book_balanced', '1 while every asset\'s kept total (the trial balance) sums to zero, else 0'),
      age: gauge('ledgerd_book_gauges_age_seconds', 'Age of the values the settlement and balance gauges show: a scrape waits a bounded time for a fresh read of the book, else shows the last one (NaN while none was read)'),
    };
    new Gauge({ name: 'ledgerd_build_info', help: 'Always 1; the version running', labelNames: ['version'], registers }).set({ version }, 1);
  }

  /** What is read at each scrape; given once the kernel and the event hub exist. */
  attach(sources: MetricsSources): void {
    this.sources = sources;
  }

  /** One HTTP request ended: `route` is its pattern, or null when no route matched. */
  observeRequest(method: string, route: string | null, status: number, seconds: number): void {
    const labels = { method, route: route ?? 'unrouted' };
    this.requests.inc({ ...labels, status: String(status) });
    this.requestDuration.observe(labels, seconds);
  }

  /**
   * The exposition at `nowMs`, with the last values read from the book (and when); null
   * while none was read (the store failing since the start): those gauges are NaN then, not
   * a false 0, and the rest is served, since an outage is when the other metrics matter most.
   */
  async scrape(read: Read<BookReading> | null, nowMs: number): Promise<string> {
    const b = this.book;
    const r = read?.value ?? { height: NaN, finalHeight: NaN, takenIn: NaN, pendingInstructions: NaN, finalCheckpointAtMs: NaN, balanced: null };
    b.height.set(r.height);
    b.finalHeight.set(r.finalHeight);
    b.takenIn.set(r.takenIn);
    b.lag.set(Math.max(0, r.finalHeight - r.takenIn));
    b.pending.set(r.pendingInstructions);
    b.checkpointAge.set(r.finalCheckpointAtMs === null ? NaN : Math.max(0, nowMs - r.finalCheckpointAtMs) / 1000);
    b.balanced.set(r.balanced === null ? NaN : r.balanced ? 1 : 0);
    b.age.set(read === null ? NaN : Math.max(0, nowMs - read.atMs) / 1000);
    return this.registry.metrics();
  }

  /** What the read slots report (daemon/snapshot-slots.ts). */
  readonly readSlots: SlotObserver = {
    queued: (share: Share, delta: number) => this.readsQueued.inc({ share }, delta),
    waited: (share: Share, waitedMs: number) => this.readWait.observe({ share }, waitedMs / 1000),
    refused: (share: Share, reason: RefusalReason) => this.readRefusals.inc({ share, reason }),
  };

  /** An `onDecision` listener. */
  readonly observeDecision = ({ operation }: DecisionEvent): void => {
    this.decisions.inc({ state: operation.state });
    if (operation.state === 'Rejected' && operation.error !== null) this.rejections.inc({ code: operation.error.error });
    // A withdrawal's first decision is Instructed (or Rejected); its later moves keep that decision's time.
    const first = operation.command.type === 'withdraw' ? operation.state === 'Instructed' || operation.state === 'Rejected' : firstDecisionStates.has(operation.state);
    if (first && operation.decidedAtMs !== null) {
      this.decisionLatency.observe(Math.max(0, operation.decidedAtMs - operation.submittedAtMs) / 1000);
    }
  };

  /** The store with each write timed (failed writes too: a slow failure is worth seeing). */
  timedStore(store: Store): Store {
    const histogram = this.storeWrite;
    return {
      get: (key) => store.get(key),
      getMany: (keys) => store.getMany(keys),
      entries: (range) => store.entries(range),
      async write(ops: readonly BatchOp[], sync: boolean) {
        const end = histogram.startTimer();
        try {
          await store.write(ops, sync);
        } finally {
          end();
        }
      },
      recover: () => store.recover(),
      snapshot: () => store.snapshot(),
      close: () => store.close(),
    };
  }
}
