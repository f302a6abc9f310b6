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
import { actorOf, customersGenesis, openBook, operator, submission, transfer } from '../support/book.js';
import { operationView } from '../../src/queries/views.js';
import { stringifyWire } from '../../src/queries/wire.js';

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

  it('renders each live event once for every stream, and sends it only to the streams whose caller may see it', async () => {
    const { kernel } = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n, carol: 0n }) });
    const hub = new EventHub(kernel, {
      connectionsMax: 8,
      connectionsPerPrincipalMax: 4,
      operatorConnectionsReserved: 0,
      bufferedBytesMax: 1024 * 1024,
      bufferedBytesTotalMax: 1024 * 1024,
      replayPageEvents: 10,
      heartbeatMs: 60_000,
    });
    const open = async (caller: typeof operator) => {
      const res = new ReaderResponse();
      await hub.open(res as unknown as ServerResponse, caller, null, silent);
      return res;
    };
    const streams = { operator: await open(operator), operator2: await open(operator), alice: await open(actorOf('did:ledger:id:alice')), carol: await open(actorOf('did:ledger:id:carol')) };
    const decided = new Map<number, string>();
    const off = kernel.onDecision(({ seq, operation }) => decided.set(seq, stringifyWire(operationView(operation))));
    for (const actor of [operator, actorOf('did:ledger:id:alice'), operator]) {
      await kernel.submit(submission(actor, transfer('did:ledger:acct:alice', 'did:ledger:acct:bob', 1n), { reference: `{"by":"${actor.principal}"}` }));
      await kernel.idle();
      for (const res of Object.values(streams)) res.drain();
    }
    off();
    // Each stream's events, by id, as the view renders them on their own.
    const events = (res: ReaderResponse) =>
      [...res.written.join('').matchAll(/^id: (\d+)\nevent: operation\ndata: (.*)$/gm)].map((m) => [Number(m[1]), m[2]] as const);
    expect(decided.size).toBeGreaterThan(0);
    expect(events(streams.operator)).toEqual([...decided]);
    expect(events(streams.operator2)).toEqual([...decided]);
    const alices = events(streams.alice);
    expect(alices.length).toBeGreaterThan(0);
    for (const [seq, data] of alices) expect(data).toBe(decided.get(seq));
    expect(events(streams.carol)).toEqual([]);
    hub.closeAll();
    await kernel.close();
  });
});
