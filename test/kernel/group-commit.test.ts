/**
 * The kernel's group commit: writes that wait while one is in flight go out together
 * as one atomic store write, in arrival order, each answered once it is durable; after
 * a failed write nothing queued behind it is written.
 */
import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/book/group-commit.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { BatchOp } from '../../src/store/port.js';

/** A store whose writes wait for `release()`, failing those `failNext` marks, and record what each wrote. */
class GatedStore extends MemoryStore {
  readonly writes: { ops: readonly BatchOp[]; sync: boolean }[] = [];
  failNext = false;
  private gates: (() => void)[] = [];

  override async write(ops: readonly BatchOp[], sync: boolean): Promise<void> {
    this.writes.push({ ops: [...ops], sync });
    await new Promise<void>((resolve) => this.gates.push(resolve));
    if (this.failNext) {
      this.failNext = false;
      throw new Error('EIO: the disk failed');
    }
    await super.write(ops, sync);
  }

  release(): void {
    this.gates.shift()!();
  }
}

const put = (key: string, value: string): BatchOp => ({ type: 'put', key, value });
const settled = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

describe('group commit', () => {
  it('writes what waits behind a write in flight as one batch, in arrival order, answering each once it is written', async () => {
    const store = new GatedStore();
    const writer = new GroupCommit(store, true, 0);
    const answered: string[] = [];
    const first = writer.write([put('a', '1')]).then(() => answered.push('first'));
    const intake = writer.write([put('cmd/1', 'x'), put('ck/1', 'y')]).then(() => answered.push('intake'));
    const decision = writer.write([put('a', '2'), { type: 'del', key: 'cmd/0' }]).then(() => answered.push('decision'));
    await settled();
    expect(store.writes.map((w) => w.ops.length)).toEqual([1]);
    store.release();
    await settled();
    expect(answered).toEqual(['first']);
    // The two that waited: one write, one fsync.
    expect(store.writes).toHaveLength(2);
    expect(store.writes[1]).toEqual({ ops: [put('cmd/1', 'x'), put('ck/1', 'y'), put('a', '2'), { type: 'del', key: 'cmd/0' }], sync: true });
    store.release();
    await Promise.all([first, intake, decision]);
    expect(answered).toEqual(['first', 'intake', 'decision']);
    expect(await store.get('a')).toBe('2');
    expect(await store.get('cmd/1')).toBe('x');
  });

  it('fails the writes queued behind a failed one without writing them, and writes again afterwards', async () => {
    const store = new GatedStore();
    const writer = new GroupCommit(store, true, 0);
    store.failNext = true;
    const failing = writer.write([put('a', '1')]);
    const queued = writer.write([put('b', '1')]);
    const failingOutcome = failing.then(() => 'written', (e: Error) => e.message);
    const queuedOutcome = queued.then(() => 'written', (e: Error) => e.message);
    await settled();
    store.release();
    expect(await failingOutcome).toBe('EIO: the disk failed');
    expect(await queuedOutcome).toBe('EIO: the disk failed');
    expect(store.writes).toHaveLength(1);
    expect(await store.get('b')).toBeUndefined();
    // Once the caller has recovered the store (a second later in the kernel), writing goes on as before.
    await settled();
    const later = writer.write([put('c', '1')]);
    await settled();
    store.release();
    await later;
    expect(await store.get('c')).toBe('1');
  });

  it('holds a decision round\'s write back, when nothing is in flight, for an intake write to share its fsync', async () => {
    const store = new GatedStore();
    const writer = new GroupCommit(store, true, 60_000);
    const decision = writer.write([put('bal/a', '1')], true);
    await settled();
    // Nothing written yet: the decision waits for company.
    expect(store.writes).toHaveLength(0);
    const intake = writer.write([put('cmd/2', 'x')]);
    await settled();
    expect(store.writes).toEqual([{ ops: [put('bal/a', '1'), put('cmd/2', 'x')], sync: true }]);
    store.release();
    await Promise.all([decision, intake]);
  });

  it('holds a decision round\'s write queued behind an intake write, once that is done, for the next intake write to share its fsync', async () => {
    const store = new GatedStore();
    const writer = new GroupCommit(store, true, 60_000);
    const first = writer.write([put('cmd/1', 'x')]);
    const decision = writer.write([put('bal/a', '1')], true);
    await settled();
    expect(store.writes).toHaveLength(1);
    store.release();
    await first;
    await settled();
    // The intake write is done; the decision queued behind it is not written alone.
    expect(store.writes).toHaveLength(1);
    const second = writer.write([put('cmd/2', 'y')]);
    await settled();
    expect(store.writes).toHaveLength(2);
    expect(store.writes[1]).toEqual({ ops: [put('bal/a', '1'), put('cmd/2', 'y')], sync: true });
    store.release();
    await Promise.all([decision, second]);
    expect(await store.get('bal/a')).toBe('1');
  });

  it('holds a decision round\'s write on a timer, not by turning the event loop until its wait is over', async () => {
    const store = new GatedStore();
    const writer = new GroupCommit(store, true, 60_000);
    const decision = writer.write([put('bal/a', '1')], true);
    await settled();
    expect(store.writes).toHaveLength(0);
    // Waiting spends no CPU: nothing is queued to run on the next turn, only the wait's timer.
    expect(process.getActiveResourcesInfo()).not.toContain('Immediate');
    expect(process.getActiveResourcesInfo()).toContain('Timeout');
    const intake = writer.write([put('cmd/2', 'x')]);
    await settled();
    expect(store.writes).toHaveLength(1);
    store.release();
    await Promise.all([decision, intake]);
  });

  it('writes a decision round that no intake joins once its wait is over', async () => {
    const store = new GatedStore();
    const writer = new GroupCommit(store, true, 5);
    const decision = writer.write([put('bal/a', '1')], true);
    await new Promise((r) => setTimeout(r, 50));
    expect(store.writes).toHaveLength(1);
    store.release();
    await decision;
    expect(await store.get('bal/a')).toBe('1');
  });
});
