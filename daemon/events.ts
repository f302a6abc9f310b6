/**
 * Server-sent events (CONTRACT 4): `operation` events, each the operation view, for
 * the operations the caller may see. Each event's `id` is its event sequence number;
 * `?after=<seq>` (or `Last-Event-ID`) replays what is stored after it, then follows
 * live decisions, with no gap and no repeat: live events are buffered while the
 * stored ones are read, and only those past the last replayed one are sent.
 *
 * Bounds: at most `connectionsMax` streams; a stream whose unsent data passes
 * `bufferedBytesMax` is closed (the client resumes with `?after=`).
 */
import type { ServerResponse } from 'node:http';
import type { Actor } from '../src/authority.js';
import type { DecisionEvent, Kernel } from '../src/kernel.js';
import { operationView } from '../src/views.js';
import { stringifyWire } from '../src/wire.js';
import { operationVisible } from '../src/authority.js';

/** Stored events read per step of a replay. */
const replayPageEvents = 1000;

export interface EventHubOptions {
  readonly connectionsMax: number;
  readonly bufferedBytesMax: number;
  readonly heartbeatMs: number;
}

export class EventHub {
  private readonly streams = new Set<EventStream>();

  constructor(
    private readonly kernel: Kernel,
    private readonly options: EventHubOptions,
  ) {}

  get full(): boolean {
    return this.streams.size >= this.options.connectionsMax;
  }

  /** Starts a stream on `res` (already hijacked from Fastify). */
  async open(res: ServerResponse, caller: Actor, afterSeq: number | null): Promise<void> {
    const stream = new EventStream(this.kernel, res, caller, this.options);
    this.streams.add(stream);
    res.on('close', () => {
      stream.stop();
      this.streams.delete(stream);
    });
    await stream.start(afterSeq);
  }

  /** Ends every stream (shutdown). */
  closeAll(): void {
    for (const s of this.streams) s.end();
    this.streams.clear();
  }
}

class EventStream {
  private lastSeq = 0;
  private replaying = true;
  private buffered: DecisionEvent[] = [];
  private unsubscribe: (() => void) | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private corked = false;

  constructor(
    private readonly kernel: Kernel,
    private readonly res: ServerResponse,
    private readonly caller: Actor,
    private readonly options: EventHubOptions,
  ) {}

  async start(afterSeq: number | null): Promise<void> {
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // Subscribe before reading the store: whatever is decided meanwhile is buffered.
    this.unsubscribe = this.kernel.onDecision((event) => (this.replaying ? this.buffered.push(event) : this.deliver(event)));
    this.lastSeq = afterSeq ?? this.kernel.currentHead.eventSeq;
    this.res.write(`: ledgerd events after ${this.lastSeq}\n\n`);
    try {
      while (afterSeq !== null && !this.res.destroyed) {
        const page = await this.kernel.eventsAfter(this.lastSeq, replayPageEvents);
        for (const event of page) this.deliver(event);
        if (page.length < replayPageEvents) break;
      }
    } catch {
      // The store cannot be read (a storage fault): end the stream; the client resumes with ?after=.
      return this.end();
    }
    this.replaying = false;
    for (const event of this.buffered) this.deliver(event);
    this.buffered = [];
    this.heartbeat = setInterval(() => this.write(': keep-alive\n\n'), this.options.heartbeatMs);
  }

  private deliver(event: DecisionEvent): void {
    if (event.seq <= this.lastSeq) return;
    this.lastSeq = event.seq;
    if (!operationVisible(event.operation, this.caller, this.kernel.principals)) return;
    this.write(`id: ${event.seq}\nevent: operation\ndata: ${stringifyWire(operationView(event.operation))}\n\n`);
  }

  private write(text: string): void {
    if (this.res.destroyed) return;
    // A decision round emits its events in one burst: send them as one write.
    if (!this.corked) {
      this.corked = true;
      this.res.cork();
      process.nextTick(() => {
        this.corked = false;
        this.res.uncork();
      });
    }
    this.res.write(text);
    if (this.res.writableLength > this.options.bufferedBytesMax) this.end();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  end(): void {
    this.stop();
    this.res.end();
  }
}
