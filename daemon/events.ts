/**
 * Server-sent events (CONTRACT 4): `operation` events, each the operation view, for
 * the operations the caller may see. Each event's `id` is its event sequence number;
 * `?after=<seq>` (or `Last-Event-ID`) replays what is stored after it, then follows
 * live decisions, with no gap and no repeat.
 *
 * Bounds (docs/daemon.md): streams in all, per principal, and a share only the
 * operator may take; unsent bytes per stream and in all (past either, the slowest
 * stream is ended and the client resumes with `?after=`); a replay reads one page of
 * stored events at a time and waits for the socket to drain before it writes more,
 * so a slow reader slows its replay instead of growing the buffer. A stream the server
 * ends frees its slot at once and takes its socket with it.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Actor } from '../src/auth/authority.js';
import { operationVisible } from '../src/auth/authority.js';
import type { DecisionEvent, Kernel } from '../src/book/kernel.js';
import type { IdentityId } from '../src/model/values.js';
import { operationView } from '../src/queries/views.js';
import { stringifyWire } from '../src/queries/wire.js';

export interface EventHubOptions {
  readonly connectionsMax: number;
  readonly connectionsPerPrincipalMax: number;
  /** Of `connectionsMax`, the streams only the operator may take. */
  readonly operatorConnectionsReserved: number;
  readonly bufferedBytesMax: number;
  readonly bufferedBytesTotalMax: number;
  /** Stored events read per step of a replay; also the live events held meanwhile. */
  readonly replayPageEvents: number;
  readonly heartbeatMs: number;
}

/**
 * One event in the event-stream format. The format ends a line at CR, LF or CRLF, so
 * each line of `data` goes out as its own `data:` line, which a reader joins with LF:
 * whatever `data` holds (a pass-through `reference` may hold raw line breaks and blank
 * lines), it cannot end the event early or forge a field.
 */
export function serverEvent(id: number | null, event: string, data: string): string {
  // Most data holds no line break (only a raw `reference` can): one line, without a split.
  const lines = data.includes('\n') || data.includes('\r') ? data.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`).join('') : `data: ${data}\n`;
  return `${id === null ? '' : `id: ${id}\n`}event: ${event}\n${lines}\n`;
}

export class EventHub {
  private readonly streams = new Set<EventStream>();
  private readonly perPrincipal = new Map<IdentityId, number>();
  /** Sum of each stream's `accountedBytes`: never below the true unsent total. */
  private bufferedBytes = 0;
  /** Replays read the store one page at a time across all streams: a stored chunk may be large. */
  private reading: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly kernel: Kernel,
    private readonly options: EventHubOptions,
  ) {}

  /** Streams open now. */
  get streamCount(): number {
    return this.streams.size;
  }

  /** Why `caller` may not open a stream now, or null when it may. */
  refusal(caller: Actor): string | null {
    const { connectionsMax, connectionsPerPrincipalMax, operatorConnectionsReserved } = this.options;
    const open = caller.principal === this.kernel.principals.operator ? connectionsMax : connectionsMax - operatorConnectionsReserved;
    if (this.streams.size >= open) return 'the service is at its bound of event streams; retry later';
    if ((this.perPrincipal.get(caller.principal) ?? 0) >= connectionsPerPrincipalMax) {
      return `a principal may hold ${connectionsPerPrincipalMax} event streams at once; close one or retry later`;
    }
    return null;
  }

  /** Starts a stream on `res` (already hijacked from Fastify); `refusal` said yes just before. */
  async open(res: ServerResponse, caller: Actor, afterSeq: number | null, log: FastifyBaseLogger): Promise<void> {
    // A client gone before the stream starts fires no 'close' any more: nothing to hold a slot for.
    if (res.destroyed) return;
    const stream = new EventStream(this, this.kernel, res, caller, this.options, log);
    this.streams.add(stream);
    this.perPrincipal.set(caller.principal, (this.perPrincipal.get(caller.principal) ?? 0) + 1);
    res.on('close', () => stream.closed());
    // Whatever the client does to its socket ends only its own stream.
    res.on('error', (error) => {
      log.debug({ err: error }, 'event stream socket error');
      stream.end();
    });
    res.on('drain', () => this.account(stream));
    await stream.start(afterSeq);
  }

  /** Frees the slot of a stream that ended, however it ended (idempotent). */
  release(stream: EventStream): void {
    if (!this.streams.delete(stream)) return;
    const held = this.perPrincipal.get(stream.principal)! - 1;
    if (held === 0) this.perPrincipal.delete(stream.principal);
    else this.perPrincipal.set(stream.principal, held);
    this.bufferedBytes -= stream.accountedBytes;
    stream.accountedBytes = 0;
  }

  /** Called after each burst of writes and each drain: a stream over its bound, or the slowest while the total is over its bound, is ended. */
  account(stream: EventStream): void {
    if (!this.streams.has(stream)) return;
    const bytes = stream.unsentBytes;
    this.bufferedBytes += bytes - stream.accountedBytes;
    stream.accountedBytes = bytes;
    if (bytes > this.options.bufferedBytesMax) return stream.end();
    if (this.bufferedBytes <= this.options.bufferedBytesTotalMax) return;
    // Counts go stale as sockets flush between writes; recount exactly before ending anyone.
    this.bufferedBytes = 0;
    for (const s of this.streams) {
      s.accountedBytes = s.unsentBytes;
      this.bufferedBytes += s.accountedBytes;
    }
    while (this.bufferedBytes > this.options.bufferedBytesTotalMax) {
      let slowest: EventStream | null = null;
      for (const s of this.streams) if (slowest === null || s.accountedBytes > slowest.accountedBytes) slowest = s;
      if (slowest === null) break;
      slowest.end();
    }
  }

  /** One page of stored events after `afterSeq`, read when no other replay is reading. */
  readPage(afterSeq: number): Promise<DecisionEvent[]> {
    const page = this.reading.then(() => this.kernel.eventsAfter(afterSeq, this.options.replayPageEvents));
    this.reading = page.catch(() => undefined);
    return page;
  }

  /**
   * Sends an event that is not in the stored sequence (a `checkpoint`) to every stream
   * following live, with no `id`, so a resumed stream's position is unchanged; what a
   * stream missed while away is read from GET /v1/checkpoints.
   */
  broadcast(kind: string, data: string): void {
    for (const stream of this.streams) stream.deliverUnnumbered(kind, data);
  }

  /**
   * The `data` of an operation event: the kernel hands one event to every stream in turn, so
   * it is rendered once for all of them (the view and its JSON: ~2-4 µs each, profiled).
   */
  operationData(event: DecisionEvent): string {
    if (this.lastRendered !== event) {
      this.lastRendered = event;
      this.lastData = stringifyWire(operationView(event.operation));
    }
    return this.lastData;
  }

  private lastRendered: DecisionEvent | null = null;
  private lastData = '';

  /** Ends every stream (shutdown). */
  closeAll(): void {
    for (const s of [...this.streams]) s.end();
  }
}

class EventStream {
  /** Unsent bytes as last told to the hub. */
  accountedBytes = 0;
  private lastSeq = 0;
  /** Live events decided while the store is read (at most a page); null once following live. */
  private pending: DecisionEvent[] | null = [];
  /** Live events were dropped from `pending` since this was reset: the store holds them. */
  private pendingDropped = false;
  private unsubscribe: (() => void) | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private corked = false;
  private ended = false;

  constructor(
    private readonly hub: EventHub,
    private readonly kernel: Kernel,
    private readonly res: ServerResponse,
    private readonly caller: Actor,
    private readonly options: EventHubOptions,
    private readonly log: FastifyBaseLogger,
  ) {}

  get principal(): IdentityId {
    return this.caller.principal;
  }

  get unsentBytes(): number {
    return this.res.writableLength;
  }

  async start(afterSeq: number | null): Promise<void> {
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // Subscribe before reading the store: whatever is decided meanwhile is held or read again.
    this.unsubscribe = this.kernel.onDecision((event) => this.onDecision(event));
    this.lastSeq = afterSeq ?? this.kernel.currentHead.eventSeq;
    this.write(`: ledgerd events after ${this.lastSeq}\n\n`);
    if (afterSeq !== null) await this.replay();
    if (this.ended) return;
    const pending = this.pending ?? [];
    this.pending = null;
    for (const event of pending) this.deliver(event);
    if (this.ended) return;
    this.heartbeat = setInterval(() => this.write(': keep-alive\n\n'), this.options.heartbeatMs);
  }

  /**
   * Stored events after `lastSeq`, a page at a time, each page written only as fast as
   * the client reads. Live events that outgrow `pending` are dropped from it: they are
   * stored, so the replay goes on until a short page was read with nothing dropped.
   */
  private async replay(): Promise<void> {
    for (;;) {
      this.pendingDropped = false;
      const page = await this.hub.readPage(this.lastSeq);
      for (const event of page) {
        if (this.ended) return;
        this.deliver(event);
        // Asked of the response, not remembered from the last write: an event this caller may not see writes nothing.
        if (this.res.writableNeedDrain) await this.drained();
      }
      if (this.ended || (page.length < this.options.replayPageEvents && !this.pendingDropped)) return;
    }
  }

  private onDecision(event: DecisionEvent): void {
    // The kernel calls this in its decision round: a failure here ends this stream, never the round.
    try {
      if (this.pending === null) return this.deliver(event);
      if (this.pending.length >= this.options.replayPageEvents) {
        this.pending = [];
        this.pendingDropped = true;
      }
      this.pending.push(event);
    } catch (error) {
      this.log.error({ err: error }, 'event stream failed to deliver an event');
      this.end();
    }
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      if (this.ended) return resolve();
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  private deliver(event: DecisionEvent): void {
    if (this.ended || event.seq <= this.lastSeq) return;
    this.lastSeq = event.seq;
    if (!operationVisible(event.operation, this.caller, this.kernel.principals)) return;
    this.write(serverEvent(event.seq, 'operation', this.hub.operationData(event)));
  }

  /** An event outside the stored sequence, to a stream that follows live (not while it replays). */
  deliverUnnumbered(kind: string, data: string): void {
    if (this.ended || this.pending !== null) return;
    this.write(serverEvent(null, kind, data));
  }

  private write(text: string): void {
    if (this.ended) return;
    // A decision round emits its events in one burst: send them as one write, and
    // measure what is left unsent only once the socket has taken what it can.
    if (!this.corked) {
      this.corked = true;
      this.res.cork();
      process.nextTick(() => {
        this.uncork();
        this.hub.account(this);
      });
    }
    this.res.write(text);
  }

  private uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    this.res.uncork();
  }

  /** The socket closed (the client left, or after `end`): stop and free the slot. */
  closed(): void {
    this.ended = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.pending = null;
    this.hub.release(this);
  }

  /**
   * Ends the stream from the server side: what the socket takes now is flushed, the
   * rest is dropped with the socket (the client resumes with `?after=`), and the slot
   * is free at once rather than when the client lets go of the connection.
   */
  end(): void {
    if (this.ended) return;
    this.closed();
    this.uncork();
    if (!this.res.destroyed) this.res.end();
    this.res.destroy();
  }
}
