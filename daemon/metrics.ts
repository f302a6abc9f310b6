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
import type { RefusalReason, Share, SlotObserver } from './snapshot-slots.js';

/** States that end a command's first decision: the latency histogram measures submission to one of these. */
const firstDecisionStates: ReadonlySet<string> = new Set(['Completed', 'Rejected', 'Reserved']);

/** Seconds: decisions are group-committed (a few ms) but wait behind a backlog under load. */
const decisionLatencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds: one fsync'd LevelDB batch. */
const storeWriteBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
/** Seconds: a read's wait for a slot, from none up to the longest `snapshotQueueWaitMs`. */
const readWaitBuckets = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface MetricsSources {
  /** Commands acknowledged and not yet decided. */
  readonly backlog: () => number;
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
    new Gauge({ name: 'ledgerd_build_info', help: 'Always 1; the version running', labelNames: ['version'], registers }).set({ version }, 1);
  }

  /** What is read at each scrape; given once the kernel and the event hub exist. */
  attach(sources: MetricsSources): void {
    this.sources = sources;
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
