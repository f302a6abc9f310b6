/**
 * Issue 20 item 15: a refusal sent before the request's body was read reaches the client. The
 * daemon stops reading the request's meaning but drains what is still coming (bounded in bytes
 * and time) before it closes, so the client is not reset before it reads the reply. Each case
 * runs 50 times, each over a fresh connection.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { refusalOf, useDaemon } from './support.js';

const shared = useDaemon({ alice: 1_000n, bob: 1_000n });
const attempts = 50;
/** Over every bodyBytesMax the config allows (1 MiB at most). */
const bodyBytes = 3 * 1024 * 1024;

/** Sends `body` on a connection of its own and reads the whole reply: status and refusal. */
async function sendOnce(path: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; error: string }> {
  const dispatcher = new Agent({ connections: 1, pipelining: 0 });
  try {
    const res = await request(shared.daemon.url + path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers }, dispatcher });
    const text = await res.body.text();
    return refusalOf({ status: res.statusCode, headers: res.headers, text, body: JSON.parse(text) });
  } finally {
    await dispatcher.destroy();
  }
}

describe('a refusal answered before the body is read', () => {
  const oversized = Buffer.alloc(bodyBytes, 0x20);

  it(`reaches the client every time: an oversized transfer, ${attempts} fresh connections`, async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < attempts; i++) {
      try {
        const r = await sendOnce('/v1/transfers', oversized, { authorization: `Bearer ${shared.keys.customers.alice}`, 'client-key': randomUUID() });
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
        const r = await sendOnce('/v1/transfers', oversized, { authorization: 'Bearer not-a-token', 'client-key': randomUUID() });
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
