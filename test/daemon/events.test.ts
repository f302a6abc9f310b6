/**
 * GET /v1/events (CONTRACT 4): `operation` events for what the caller may see,
 * resumable with `?after=` (and Last-Event-ID) without gaps; bounded streams.
 */
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseServerEvents } from '../../cli/sse.js';
import { type Client, type SharedDaemon, decided, refusalOf, removeDir, startDaemon, tempDir, useDaemon, writeBook } from './support.js';

interface SseEvent {
  id: number;
  event: string;
  data: any;
}

/**
 * The WHATWG event-stream format, as an EventSource reads it: a line ends at CRLF, LF
 * or CR; `data` lines join with LF; a blank line dispatches the event.
 */
function eventStreamParser(onEvent: (event: { id: string; event: string; data: string }) => void) {
  const decoder = new TextDecoder();
  let buffer = '';
  let id = '';
  let event = '';
  let data: string[] = [];
  const line = (text: string) => {
    if (text === '') {
      if (data.length > 0) onEvent({ id, event: event || 'message', data: data.join('\n') });
      data = [];
      event = '';
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const name = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? '' : text.slice(colon + 1).replace(/^ /, '');
    if (name === 'data') data.push(value);
    else if (name === 'event') event = value;
    else if (name === 'id') id = value;
  };
  return (chunk: Buffer) => {
    buffer += decoder.decode(chunk, { stream: true });
    const ends = /\r\n|\r|\n/g;
    let start = 0;
    for (let m = ends.exec(buffer); m !== null; m = ends.exec(buffer)) {
      // A CR at the end may be the first half of a CRLF still on its way.
      if (m[0] === '\r' && m.index === buffer.length - 1) break;
      line(buffer.slice(start, m.index));
      start = ends.lastIndex;
    }
    buffer = buffer.slice(start);
  };
}

/** An open event stream: events arrive in `events`; `until` waits for a condition. */
async function subscribe(url: string, token: string, query = '', headers: Record<string, string> = {}) {
  const res = await request(`${url}/v1/events${query}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  const events: SseEvent[] = [];
  const waiters: (() => void)[] = [];
  let ended = false;
  const parse = eventStreamParser((e) => events.push({ id: Number(e.id), event: e.event, data: JSON.parse(e.data) }));
  res.body.on('data', (chunk: Buffer) => {
    parse(chunk);
    for (const w of waiters.splice(0)) w();
  });
  res.body.on('error', () => {});
  res.body.on('close', () => (ended = true));
  const until = async (done: (events: SseEvent[]) => boolean, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!done(events)) {
      if (ended || Date.now() > deadline) throw new Error(`${ended ? 'the stream ended' : 'timed out'}; have ${events.length} events`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return events;
  };
  return { status: res.statusCode, headers: res.headers, body: res.body, events, until, ended: () => ended, close: () => res.body.destroy() };
}

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const shared = useDaemon({ alice: 10_000n, bob: 10_000n, carol: 10_000n }, { sseConnectionsMax: 20, sseConnectionsPerPrincipalMax: 8, sseOperatorConnectionsReserved: 8 });
const asAlice = shared.as('alice');
const asBob = shared.as('bob');
const url = () => shared.daemon.url;
const keys = () => shared.keys;

const pay = async (as: Client, from: string, to: string, amount: string) => {
  const r = await as.post('/v1/transfers', { legs: [{ amount, asset: 'USD', from, to }], reference: { amount } });
  expect(r.status).toBe(202);
  return r.body.operation_reference as string;
};

describe('GET /v1/events', () => {
  it("streams the caller's decided operations as `operation` events with the operation view, and no one else's", async () => {
    const aliceStream = await subscribe(url(), keys().customers.alice!);
    const operatorStream = await subscribe(url(), keys().operator);
    expect(aliceStream.status).toBe(200);
    expect(aliceStream.headers['content-type']).toMatch(/^text\/event-stream/);
    const bobsRef = await pay(asBob, bob, alice, '3');
    const alicesRef = await pay(asAlice, alice, bob, '5');
    const [event] = await aliceStream.until((es) => es.some((e) => e.data.operation_reference === alicesRef));
    expect(event).toMatchObject({ event: 'operation', data: { operation_reference: alicesRef, command: 'transfer', state: 'Completed', terminal: true, reference: { amount: '5' } } });
    expect(event!.data.api_key).toBeUndefined();
    expect(aliceStream.events.some((e) => e.data.operation_reference === bobsRef)).toBe(false);
    await operatorStream.until((es) => es.some((e) => e.data.operation_reference === bobsRef) && es.some((e) => e.data.operation_reference === alicesRef));
    aliceStream.close();
    operatorStream.close();
  });

  it('resumes after a given event with ?after= and with Last-Event-ID, with no gap and no repeat', async () => {
    const live = await subscribe(url(), keys().customers.alice!);
    const refs = [await pay(asAlice, alice, bob, '1'), await pay(asAlice, alice, bob, '2'), await pay(asAlice, alice, bob, '3')];
    for (const ref of refs) await decided(asAlice, ref);
    const seen = await live.until((es) => refs.every((ref) => es.some((e) => e.data.operation_reference === ref)));
    live.close();
    const first = seen.find((e) => e.data.operation_reference === refs[0])!;

    const resumed = await subscribe(url(), keys().customers.alice!, `?after=${first.id}`);
    const replay = await resumed.until((es) => es.some((e) => e.data.operation_reference === refs[2]));
    expect(replay.map((e) => e.data.operation_reference)).toEqual(refs.slice(1));
    // Then it follows live decisions.
    const later = await pay(asAlice, alice, bob, '4');
    await resumed.until((es) => es.some((e) => e.data.operation_reference === later));
    const ids = resumed.events.map((e) => e.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    resumed.close();

    const byHeader = await subscribe(url(), keys().customers.alice!, '', { 'last-event-id': String(first.id) });
    await byHeader.until((es) => es.some((e) => e.data.operation_reference === refs[2]));
    expect(byHeader.events[0]!.data.operation_reference).toBe(refs[1]);
    byHeader.close();
  });

  it('refuses a malformed after, unknown parameters, and a missing bearer', async () => {
    expect(refusalOf(await asAlice.get('/v1/events?after=abc'))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(refusalOf(await asAlice.get('/v1/events?after=999999999'))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(refusalOf(await asAlice.get('/v1/events?after=1&since=2'))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(refusalOf(await asAlice.get('/v1/events', null))).toEqual({ status: 401, error: 'ERR-CredentialInvalid' });
    expect(refusalOf(await asAlice.get('/v1/events', undefined, { 'last-event-id': 'x' }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
  });

  it('refuses streams past its bounds with ERR-DecisionUnavailable: per principal, then all but the operator\'s share; takes one again once closed', async () => {
    const refusedStream = async (as: Client) => {
      const over = await as.get('/v1/events');
      expect(refusalOf(over)).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
      expect(over.headers['retry-after']).toMatch(/^[0-9]+$/);
    };
    // One principal holds at most 8 of the 20.
    const alices = await Promise.all(Array.from({ length: 8 }, () => subscribe(url(), keys().customers.alice!)));
    expect(alices.map((s) => s.status)).toEqual(Array(8).fill(200));
    await refusedStream(asAlice);
    // 8 of the 20 are the operator's: the others together hold at most 12.
    const bobs = await Promise.all(Array.from({ length: 4 }, () => subscribe(url(), keys().customers.bob!)));
    expect(bobs.map((s) => s.status)).toEqual(Array(4).fill(200));
    await refusedStream(asBob);
    await refusedStream(shared.as('carol'));
    const operator = await subscribe(url(), keys().operator);
    expect(operator.status).toBe(200);
    // The operator's stream works: it sees what is decided.
    const ref = await pay(asBob, bob, alice, '7');
    await operator.until((es) => es.some((e) => e.data.operation_reference === ref));
    for (const s of [...alices, ...bobs, operator]) s.close();
    await new Promise((res) => setTimeout(res, 200));
    const again = await subscribe(url(), keys().customers.carol!);
    expect(again.status).toBe(200);
    again.close();
  });

  it('carries a reference holding raw CR, LF, CRLF, blank lines and U+2028 intact to every subscriber, as an EventSource and the CLI read it', async () => {
    const raw = '{\r\n\r\n"note" :\r"a\u2028b\u2029c \\n é"\n\n\n,\r\n\r\n"id:": "data: x",\r\r"n":[1,\n\n2]\n}';
    const standard = await subscribe(url(), keys().customers.alice!);
    const operatorStream = await subscribe(url(), keys().operator);
    const cliRead = await request(`${url()}/v1/events`, { headers: { authorization: `Bearer ${keys().operator}` } });
    const body = `{"legs":[{"amount":"1","asset":"USD","from":"${alice}","to":"${bob}"}],"reference":${raw}}`;
    const r = await asAlice.post('/v1/transfers', body);
    expect(r.status).toBe(202);
    const ref = r.body.operation_reference as string;
    const after = await pay(asAlice, alice, bob, '9');
    for (const stream of [standard, operatorStream]) {
      const events = await stream.until((es) => es.some((e) => e.data.operation_reference === after));
      expect(events.find((e) => e.data.operation_reference === ref)!.data.reference).toEqual(JSON.parse(raw));
    }
    for await (const event of parseServerEvents(cliRead.body)) {
      const view = JSON.parse(event.data);
      if (view.operation_reference !== ref) continue;
      expect(view.reference).toEqual(JSON.parse(raw));
      break;
    }
    cliRead.body.destroy();
    standard.close();
    operatorStream.close();
    // The JSON routes still echo it exactly as sent.
    expect((await decided(asAlice, ref)).text).toContain(`"reference":${raw}`);
  });
});

/** A 1000-byte pass-through reference, its own for each `i`. */
const referenceOf = (i: number) => ({ pad: `${Date.now()}-${i}-`.padEnd(990, 'x') });

/** `n` transfers of 1 from `from` to `to`, each with a 1000-byte reference, 50 at a time; resolves once all are decided. */
async function payMany(as: Client, from: string, to: string, n: number): Promise<string[]> {
  expect(JSON.stringify(referenceOf(0)).length).toBe(1000);
  const refs: string[] = [];
  for (let i = 0; i < n; i += 50) {
    const batch = Array.from({ length: Math.min(50, n - i) }, (_, j) => as.post('/v1/transfers', { legs: [{ amount: '1', asset: 'USD', from, to }], reference: referenceOf(i + j) }));
    for (const r of await Promise.all(batch)) {
      expect(r.status).toBe(202);
      refs.push(r.body.operation_reference);
    }
  }
  expect((await decided(as, refs.at(-1)!)).body.state).toBe('Completed');
  return refs;
}

/** The daemon is up and answering. */
async function expectUp(daemon: SharedDaemon): Promise<void> {
  expect(daemon.daemon.process.exitCode).toBeNull();
  expect((await daemon.as('operator').get('/v1/health')).status).toBe(200);
}

describe('GET /v1/events replaying a large book (800 events of over 1000 bytes each)', () => {
  const book = useDaemon({ alice: 10_000n, bob: 10_000n });
  let refs: string[] = [];
  beforeAll(async () => {
    // Each of alice's operations is followed by one of bob's, which her stream skips; in 4 lanes at once (the book is what counts, not the pace).
    const lanes = 4;
    const lastOfLane = await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        let last = '';
        for (let i = lane; i < 800; i += lanes) {
          const mine = await book.as('alice').post('/v1/transfers', { legs: [{ amount: '1', asset: 'USD', from: alice, to: bob }], reference: referenceOf(i) });
          const bobs = await book.as('bob').post('/v1/transfers', { legs: [{ amount: '1', asset: 'USD', from: bob, to: alice }], reference: referenceOf(i) });
          expect([mine.status, bobs.status]).toEqual([202, 202]);
          refs.push(mine.body.operation_reference);
          last = mine.body.operation_reference;
        }
        return last;
      }),
    );
    for (const ref of lastOfLane) await decided(book.as('alice'), ref);
  });
  const replayed = (events: SseEvent[]) => events.filter((e) => refs.includes(e.data.operation_reference)).length;

  it('replays every event to a reader that keeps up, and the daemon stays up', async () => {
    const stream = await subscribe(book.daemon.url, book.keys.customers.alice!, '?after=0');
    const events = await stream.until((es) => replayed(es) === refs.length, 30_000);
    const ids = events.map((e) => e.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    stream.close();
    await expectUp(book);
  });

  it('replays every event to a reader that stalls, then reads slowly: the replay waits for it', async () => {
    const res = await request(`${book.daemon.url}/v1/events?after=0`, { headers: { authorization: `Bearer ${book.keys.customers.alice!}` } });
    const events: SseEvent[] = [];
    const parse = eventStreamParser((e) => events.push({ id: Number(e.id), event: e.event, data: JSON.parse(e.data) }));
    await sleep(1_000);
    await expectUp(book);
    for await (const chunk of res.body) {
      parse(chunk as Buffer);
      if (replayed(events) === refs.length) break;
      await sleep(5);
    }
    expect(replayed(events)).toBe(refs.length);
    res.body.destroy();
    await expectUp(book);
  });

  it('survives readers that disconnect mid-replay, and replays in full after them', async () => {
    for (let i = 0; i < 5; i++) {
      const stream = await subscribe(book.daemon.url, book.keys.customers.alice!, '?after=0');
      if (i % 2 === 1) await stream.until((es) => es.length > 0);
      stream.close();
    }
    // And one that is gone before its headers are read.
    const early = new AbortController();
    const gone = request(`${book.daemon.url}/v1/events?after=0`, { headers: { authorization: `Bearer ${book.keys.customers.alice!}` }, signal: early.signal });
    early.abort();
    await gone.catch(() => {});
    await sleep(500);
    await expectUp(book);
    const stream = await subscribe(book.daemon.url, book.keys.customers.alice!, '?after=0');
    await stream.until((es) => replayed(es) === refs.length, 30_000);
    stream.close();
    await expectUp(book);
  });

  it('replays without gap or repeat while more is decided than it holds, to a reader that stalls meanwhile', async () => {
    const res = await request(`${book.daemon.url}/v1/events?after=0`, { headers: { authorization: `Bearer ${book.keys.customers.alice!}` } });
    // More live events than a replay holds (a page, 100 by default) arrive while it waits for the reader.
    const later = await payMany(book.as('alice'), alice, bob, 250);
    const events: SseEvent[] = [];
    const parse = eventStreamParser((e) => events.push({ id: Number(e.id), event: e.event, data: JSON.parse(e.data) }));
    for await (const chunk of res.body) {
      parse(chunk as Buffer);
      if (events.some((e) => e.data.operation_reference === later.at(-1))) break;
    }
    res.body.destroy();
    const mine = events.map((e) => e.data.operation_reference).filter((ref) => refs.includes(ref) || later.includes(ref));
    // Each once, in decision order (within a batch of 50 that is not the order of submission).
    expect(mine.length).toBe(refs.length + later.length);
    expect(new Set(mine)).toEqual(new Set([...refs, ...later]));
    const ids = events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    await expectUp(book);
  });
});

/**
 * A stream whose reader stops reading: a raw socket that sends its request and reads
 * nothing until `resume`, which reads to the end and resolves with what it received.
 */
async function stalledStream(baseUrl: string, token: string) {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect({ host: hostname, port: Number(port) });
  socket.pause();
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(`GET /v1/events HTTP/1.1\r\nhost: ${hostname}:${port}\r\nauthorization: Bearer ${token}\r\n\r\n`);
  return {
    resume: () =>
      new Promise<string>((resolve) => {
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.once('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
        socket.resume();
      }),
  };
}

/**
 * A reader that stops reading is cut off once the unsent data passes a bound, and its
 * slot is free at once though its connection is still open; a reader that keeps up
 * gets everything.
 */
function cutsOffStalledReaders(config: Record<string, unknown>) {
  const book = useDaemon({ alice: 100_000n, bob: 10_000n }, { sseConnectionsPerPrincipalMax: 1, ...config });
  it('ends the stream of a reader that stops reading, frees its slot at once, and keeps serving readers that keep up', async () => {
    const stalled = await stalledStream(book.daemon.url, book.keys.customers.alice!);
    const watcher = await subscribe(book.daemon.url, book.keys.operator);
    await sleep(200);
    // The stalled stream holds alice's one slot.
    expect(refusalOf(await book.as('alice').get('/v1/events'))).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
    const refs: string[] = [];
    let next: Awaited<ReturnType<typeof subscribe>> | null = null;
    for (let round = 0; round < 100 && next === null; round++) {
      refs.push(...(await payMany(book.as('alice'), alice, bob, 50)));
      const attempt = await subscribe(book.daemon.url, book.keys.customers.alice!);
      if (attempt.status === 200) next = attempt;
      else attempt.close();
    }
    expect(next?.status).toBe(200);
    await expectUp(book);
    await watcher.until((es) => refs.every((ref) => es.some((e) => e.data.operation_reference === ref)), 30_000);
    // What the stalled reader still gets is cut short: its connection ends without the later events.
    const received = await stalled.resume();
    expect(received).toMatch(/^HTTP\/1\.1 200/);
    expect(received).not.toContain(refs.at(-1)!);
    // Its replacement follows live decisions.
    const live = await payMany(book.as('alice'), alice, bob, 1);
    await next!.until((es) => es.some((e) => e.data.operation_reference === live[0]));
    next!.close();
    watcher.close();
    await expectUp(book);
  });
}

describe('GET /v1/events with a stalled reader, bounded per stream', () => {
  cutsOffStalledReaders({ sseBufferedBytesMax: 256 * 1024 });
});

describe('GET /v1/events with a stalled reader, bounded in total', () => {
  cutsOffStalledReaders({ sseBufferedBytesMax: 64 * 1024 * 1024, sseBufferedBytesTotalMax: 256 * 1024 });
});

describe('GET /v1/events at shutdown', () => {
  it('on SIGTERM ends every stream, a stalled one too, and exits 0', async () => {
    const dir = tempDir();
    try {
      const keys = await writeBook(dir, { alice: 10_000n });
      const daemon = await startDaemon({ dataDir: dir });
      const live = await subscribe(daemon.url, keys.operator);
      const stalled = await stalledStream(daemon.url, keys.customers.alice!);
      await sleep(200);
      expect(await daemon.stop()).toBe(0);
      expect(await stalled.resume()).toMatch(/^HTTP\/1\.1 200/);
      await live.until(() => live.ended());
    } finally {
      await removeDir(dir);
    }
  });
});
