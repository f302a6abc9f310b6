/**
 * The event hub's replay against a real kernel (in memory) and a response whose reader
 * the test controls: what a socket cannot show black-box, such as more live events
 * decided during the replay's last, short page than the replay holds.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { EventHub } from '../../daemon/events.js';
import { customersGenesis, openBook, operator, submission, transfer } from '../support/book.js';

/** A response that takes one write, then needs draining until `drain()` says the reader caught up. */
class ReaderResponse extends EventEmitter {
  readonly written: string[] = [];
  destroyed = false;
  writableLength = 0;
  writableNeedDrain = false;
  writeHead(): this {
    return this;
  }
  cork(): void {}
  uncork(): void {}
  write(text: string): boolean {
    this.written.push(text);
    this.writableLength += text.length;
    this.writableNeedDrain = true;
    return false;
  }
  drain(): void {
    this.writableLength = 0;
    if (!this.writableNeedDrain) return;
    this.writableNeedDrain = false;
    this.emit('drain');
  }
  end(): void {}
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
  ids(): number[] {
    return [...this.written.join('').matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  }
}

const silent = { debug() {}, error() {} } as unknown as FastifyBaseLogger;

describe('EventHub replay', () => {
  it('sends every event once, in order, when more is decided during its last page than it holds', async () => {
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }) });
    const pay = async (n: number) => {
      for (let i = 0; i < n; i++) await kernel.submit(submission(operator, transfer('did:ledger:acct:alice', 'did:ledger:acct:bob', 1n)));
      await kernel.idle();
    };
    await pay(5);
    const firstSeq = kernel.currentHead.eventSeq - 5;
    const hub = new EventHub(kernel, {
      connectionsMax: 4,
      connectionsPerPrincipalMax: 4,
      operatorConnectionsReserved: 0,
      bufferedBytesMax: 1024 * 1024,
      bufferedBytesTotalMax: 1024 * 1024,
      replayPageEvents: 10,
      heartbeatMs: 60_000,
    });
    const res = new ReaderResponse();
    let started = false;
    const opened = hub.open(res as unknown as ServerResponse, operator, firstSeq, silent).then(() => (started = true));
    // The replay read its one, short page and waits for the reader; meanwhile 25 more are decided.
    await new Promise((resolve) => setImmediate(resolve));
    await pay(25);
    while (!started) {
      res.drain();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await opened;
    expect(res.ids()).toEqual(Array.from({ length: 30 }, (_, i) => firstSeq + 1 + i));
    // Then it follows live decisions.
    await pay(1);
    expect(res.ids().at(-1)).toBe(firstSeq + 31);
    hub.closeAll();
    expect(res.destroyed).toBe(true);
    await kernel.close();
  });
});
