/**
 * Issue 20 item 15: a refusal sent before the request's body was read reaches the client. The
 * daemon stops reading the request's meaning but drains what is still coming (bounded in bytes
 * and time) before it closes, so the client is not reset before it reads the reply. Each case
 * runs 50 times, each over a fresh connection.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { Agent, fetch } from 'undici';
import { describe, expect, it } from 'vitest';
import { refusalOf, useDaemon } from './support.js';

const shared = useDaemon({ alice: 1_000n, bob: 1_000n });
const attempts = 50;
/** Over every bodyBytesMax the config allows (1 MiB at most). */
const bodyBytes = 3 * 1024 * 1024;

/** The body in 64 KiB chunks, as a client streams it (still sending when the refusal comes). */
async function* chunks(bytes: number): AsyncGenerator<Uint8Array> {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  for (let sent = 0; sent < bytes; sent += chunk.length) {
    yield chunk;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Streams a body of `bytes` on a connection of its own and reads the whole reply: status and refusal. */
async function sendOnce(path: string, bytes: number, headers: Record<string, string>): Promise<{ status: number; error: string }> {
  const dispatcher = new Agent({ connections: 1 });
  try {
    const res = await fetch(shared.daemon.url + path, {
      method: 'POST',
      body: chunks(bytes),
      duplex: 'half',
      headers: { 'content-type': 'application/json', 'content-length': String(bytes), ...headers },
      dispatcher,
    });
    const text = await res.text();
    return refusalOf({ status: res.status, headers: {}, text, body: JSON.parse(text) });
  } finally {
    await dispatcher.destroy();
  }
}

describe('a refusal answered before the body is read', () => {

  it(`reaches the client every time: an oversized transfer, ${attempts} fresh connections`, async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < attempts; i++) {
      try {
        const r = await sendOnce('/v1/transfers', bodyBytes, { authorization: `Bearer ${shared.keys.customers.alice}`, 'client-key': randomUUID() });
        outcomes.push(`${r.status} ${r.error}`);
      } catch (error) {
        outcomes.push(`failed: ${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}`);
      }
    }
    expect(outcomes).toEqual(Array(attempts).fill('400 ERR-MalformedCommand'));
  });

  it(`reaches the client every time: an oversized body with a bad bearer, ${attempts} fresh connections`, async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < attempts; i++) {
      try {
        const r = await sendOnce('/v1/transfers', bodyBytes, { authorization: 'Bearer not-a-token', 'client-key': randomUUID() });
        outcomes.push(`${r.status}`);
      } catch (error) {
        outcomes.push(`failed: ${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}`);
      }
    }
    expect(outcomes).toEqual(Array(attempts).fill('401'));
  });

  it('still answers on the daemon afterwards', async () => {
    expect((await shared.as('operator').get('/v1/health')).status).toBe(200);
  });
});

/** Writes `head` then streams filler until the daemon closes; what it answered, and how long the connection lasted. */
function endlessBody(head: string, send: boolean): Promise<{ reply: string; lastedMs: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(shared.daemon.port, '127.0.0.1');
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let reply = '';
    let open = true;
    const pump = () => {
      while (open && send && socket.write(chunk));
    };
    socket.on('data', (d) => (reply += d.toString('latin1')));
    socket.on('drain', pump);
    socket.on('error', () => {});
    socket.on('close', () => {
      open = false;
      resolve({ reply, lastedMs: Date.now() - started });
    });
    socket.write(head, pump);
  });
}

describe('a lingering connection', () => {
  const head = (length: number, extra = '') =>
    `POST /v1/transfers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${shared.keys.customers.alice}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

  it('is closed by the daemon when the client sends on without end, or sends nothing more and never closes', async () => {
    for (const send of [true, false]) {
      const { reply, lastedMs } = await endlessBody(head(1024 * 1024 * 1024), send);
      expect(reply.split('\r\n')[0], reply).toBe('HTTP/1.1 400 Bad Request');
      expect(reply).toContain('ERR-MalformedCommand');
      // Bounded by lingerMs (2 s) or lingerBytesMax (8 MiB), whichever comes first; generous for a loaded machine.
      expect(lastedMs).toBeLessThan(15_000);
    }
  });

  it('also follows a refused Expect header, whose body is on its way', async () => {
    const { reply } = await endlessBody(head(1024 * 1024, 'Expect: something-else\r\n'), true);
    expect(reply.split('\r\n')[0], reply).toBe('HTTP/1.1 400 Bad Request');
    expect(reply).toContain('ERR-MalformedCommand');
  });
});

describe('a request refused before it became one (headers over the bound)', () => {
  it('gets its refusal, and the daemon closes the connection whether or not the client goes on sending', async () => {
    const oversizedHead = `POST /v1/transfers HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(64 * 1024)}\r\nContent-Length: 1073741824\r\n\r\n`;
    for (const send of [true, false]) {
      const { reply, lastedMs } = await endlessBody(oversizedHead, send);
      expect(reply.split('\r\n')[0], reply.slice(0, 200)).toBe('HTTP/1.1 400 Bad Request');
      expect(reply).toContain('ERR-MalformedCommand');
      expect(lastedMs).toBeLessThan(15_000);
    }
  });
});
