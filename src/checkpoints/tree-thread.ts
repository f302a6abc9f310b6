/**
 * The main thread's side of a liabilities tree's build: a worker thread (tree-worker.ts)
 * that hashes, sorts and makes the records, so the decider's thread only reads balances
 * and writes records. One worker per build, started with it and ended when it ends
 * however it ends: builds are minutes apart, a worker starts in tens of milliseconds, and
 * one that ends gives its heap (hundreds of MiB at 10^6 leaves) back at once instead of
 * keeping it idle. A worker that fails, stops or is abandoned fails the build.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { AssertionFailure } from '../assert.js';
import type { BatchOp } from '../store/port.js';
import type { LiabilitiesScope } from './liabilities-leaves.js';
import { type FromTreeWorker, type ToTreeWorker, type TreeWorkerData, linesOf } from './tree-messages.js';
import type { LiabilitiesRoot } from './verify-proofs.js';


const here = import.meta.url;
const extension = extname(fileURLToPath(here));
// The worker is this module's sibling in the same language: .js when built, .ts when the sources run (under vitest).
const entry = new URL(`./tree-worker${extension}`, here);

function startWorker(workerData: TreeWorkerData): Worker {
  if (extension !== '.ts') return new Worker(entry, { workerData });
  // TypeScript loads only through tsx's hooks, which a worker does not inherit from its parent (Node 20): registered in the worker.
  return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`, { eval: true, workerData });
}

export class TreeThread {
  private readonly worker: Worker;
  private readonly roots: Promise<Record<string, LiabilitiesRoot>>;
  private failure: Error | null = null;
  private writing: Promise<void> = Promise.resolve();
  private readonly encoder = new TextEncoder();

  /** Records go to `write` one batch at a time; `signal` abandons the build (the worker ended, the build failed). */
  constructor(scope: LiabilitiesScope, write: (ops: BatchOp[]) => Promise<void>, signal: AbortSignal) {
    this.worker = startWorker({ key: new Uint8Array(scope.key), instance: scope.instance, number: scope.number });
    let rootsIn = false;
    this.roots = new Promise((resolve, reject) => {
      const fail = (error: Error) => {
        if (this.failure !== null) return;
        this.failure = error;
        reject(error);
        void this.worker.terminate();
      };
      const abandon = () => fail(new Error('the liabilities build was abandoned: ledgerd is closing'));
      if (signal.aborted) abandon();
      signal.addEventListener('abort', abandon, { once: true });
      this.worker.once('exit', () => signal.removeEventListener('abort', abandon));
      this.worker.on('message', (m: FromTreeWorker) => {
        // Whatever a failed build's worker still sends before it ends is dropped.
        if (this.failure !== null) return;
        if (m.kind === 'records') {
          const lines = linesOf(m.text);
          if (lines.length % 2 !== 0) return fail(new AssertionFailure('assertion failed: records come as two lines each'));
          const ops: BatchOp[] = [];
          for (let i = 0; i < lines.length; i += 2) ops.push({ type: 'put', key: lines[i]!, value: lines[i + 1]! });
          this.writing = this.writing.then(() => write(ops)).then(() => this.post({ kind: 'written' }));
          this.writing.catch(fail);
        } else if (m.kind === 'roots') {
          rootsIn = true;
          this.writing.then(() => resolve(m.roots), fail);
        } else fail(m.assertion ? new AssertionFailure(m.message) : new Error(`the liabilities tree worker failed: ${m.message}`));
      });
      this.worker.on('error', (error: unknown) => fail(new Error(`the liabilities tree worker failed: ${error instanceof Error ? error.message : String(error)}`)));
      this.worker.on('messageerror', (error) => fail(error));
      this.worker.on('exit', (code) => rootsIn || fail(new Error(`the liabilities tree worker stopped (exit code ${code})`)));
    });
    // Awaited by `finish`; a failure while balances are still read is thrown by `send`.
    this.roots.catch(() => undefined);
  }

  private post(message: ToTreeWorker, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  /** Leaves of `asset`: account, available, reserved, encumbered, one a line. */
  send(asset: string, lines: readonly string[]): void {
    if (this.failure !== null) throw this.failure;
    const text = this.encoder.encode(lines.join('\n'));
    this.post({ kind: 'leaves', asset, text }, [text.buffer as ArrayBuffer]);
  }

  /** After the last leaves: the roots, once every record is written. */
  finish(): Promise<Record<string, LiabilitiesRoot>> {
    if (this.failure === null) this.post({ kind: 'end' });
    return this.roots;
  }

  /** Ends the worker (at once: done, failed or abandoned). */
  async end(): Promise<void> {
    await this.worker.terminate();
  }
}
