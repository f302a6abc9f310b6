/**
 * Following `/v1/events` (CONTRACT 4): operation and checkpoint events, resumed after the last one
 * seen with `?after=` whenever the connection drops, so a daemon restart loses nothing.
 */
import type { LedgerClient } from './client.js';
import { isUnreachable } from './client.js';
import { UnreachableError } from './errors.js';
import { reconnectDelayMaxMs, reconnectDelayMinMs } from './limits.js';
import { parseServerEvents } from './sse.js';

export type StreamItem =
  /** Connected (again): events from here on are live. */
  | { type: 'open'; after: number | null }
  /** The connection dropped; it is retried after `retryInMs`. */
  | { type: 'lost'; reason: string; retryInMs: number }
  | { type: 'event'; seq: number | null; kind: string; data: unknown };

export interface FollowOptions {
  after?: number | null | undefined;
  signal: AbortSignal;
  /** Reconnect when the connection drops (otherwise a drop ends the stream with exit 3). */
  reconnect: boolean;
}

export async function* followEvents(client: LedgerClient, options: FollowOptions): AsyncGenerator<StreamItem> {
  let after = options.after ?? null;
  let delayMs = reconnectDelayMinMs;
  while (!options.signal.aborted) {
    let reason = 'the stream ended';
    try {
      const body = await client.stream('/v1/events', after === null ? {} : { after }, options.signal);
      yield { type: 'open', after };
      delayMs = reconnectDelayMinMs;
      // ledgerd names its position first (`: ledgerd events after N`): a drop before any event resumes there.
      const position = (comment: string) => {
        const announced = announcement.exec(comment);
        if (announced !== null && after === null) after = Number(announced[1]);
      };
      for await (const event of parseServerEvents(body, position)) {
        const seq = seqOf(event.id);
        if (seq !== null) after = seq;
        yield { type: 'event', seq, kind: event.event, data: parseData(event.data) };
      }
    } catch (error) {
      if (options.signal.aborted) return;
      if (!isUnreachable(error)) throw error;
      reason = error instanceof Error ? error.message : String(error);
    }
    if (options.signal.aborted) return;
    if (!options.reconnect) throw new UnreachableError(`the event stream from ${client.baseUrl.origin} ended: ${reason}`);
    yield { type: 'lost', reason, retryInMs: delayMs };
    await sleep(delayMs, options.signal);
    delayMs = Math.min(delayMs * 2, reconnectDelayMaxMs);
  }
}

const announcement = /^ledgerd events after (\d+)$/;

/** How long the announcement of the latest position is waited for: ledgerd writes it as the stream opens. */
const announcementWaitMs = 5_000;

/**
 * The position of the latest event: what ledgerd announces first on a stream opened without
 * `after` (the connection is closed once read). Null when the stream says nothing of it.
 */
export async function latestEventSeq(client: LedgerClient): Promise<number | null> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), announcementWaitMs);
  let latest: number | null = null;
  try {
    const body = await client.stream('/v1/events', {}, controller.signal);
    const announced = (comment: string) => {
      const match = announcement.exec(comment);
      if (match === null) return;
      latest = Number(match[1]);
      controller.abort();
    };
    // The announcement comes before any event: an event first means there was none.
    for await (const _ of parseServerEvents(body, announced)) break;
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return latest;
}

function seqOf(id: string | null): number | null {
  return id !== null && /^\d+$/.test(id) ? Number(id) : null;
}

function parseData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
