/**
 * GET /v1/events (CONTRACT 4): `operation` events for what the caller may see,
 * resumable with `?after=` (and Last-Event-ID) without gaps; bounded streams.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { type Client, decided, refusalOf, useDaemon } from './support.js';

interface SseEvent {
  id: number;
  event: string;
  data: any;
}

/** An open event stream: events arrive in `events`; `until` waits for a condition. */
async function subscribe(url: string, token: string, query = '', headers: Record<string, string> = {}) {
  const res = await request(`${url}/v1/events${query}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  const events: SseEvent[] = [];
  let buffer = '';
  const waiters: (() => void)[] = [];
  res.body.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields = Object.fromEntries(block.split('\n').filter((l) => !l.startsWith(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
      if (fields.event) events.push({ id: Number(fields.id), event: fields.event, data: JSON.parse(fields.data!) });
    }
    for (const w of waiters.splice(0)) w();
  });
  res.body.on('error', () => {});
  const until = async (done: (events: SseEvent[]) => boolean, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!done(events)) {
      if (Date.now() > deadline) throw new Error(`timed out; have ${JSON.stringify(events.map((e) => e.id))}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return events;
  };
  return { status: res.statusCode, headers: res.headers, events, until, close: () => res.body.destroy() };
}

const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';
const shared = useDaemon({ alice: 10_000n, bob: 10_000n }, { sseConnectionsMax: 4 });
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

  it('refuses streams past its bound with ERR-DecisionUnavailable and Retry-After, and takes one again once closed', async () => {
    const streams = await Promise.all(Array.from({ length: 4 }, () => subscribe(url(), keys().customers.bob!)));
    const over = await asBob.get('/v1/events');
    expect(refusalOf(over)).toEqual({ status: 503, error: 'ERR-DecisionUnavailable' });
    expect(over.headers['retry-after']).toMatch(/^[0-9]+$/);
    for (const s of streams) s.close();
    await new Promise((res) => setTimeout(res, 200));
    const again = await subscribe(url(), keys().customers.bob!);
    expect(again.status).toBe(200);
    again.close();
  });
});
