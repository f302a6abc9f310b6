/**
 * What crosses between the main thread (tree-thread.ts) and the liabilities tree worker
 * (tree-worker.ts): the worker's data, the messages each way, and the lines of text a
 * transferred buffer carries.
 */
import type { LiabilitiesRoot } from './verify-proofs.js';

export interface TreeWorkerData {
  readonly key: Uint8Array;
  readonly instance: number;
  readonly number: number;
}
/** To the worker: an asset's leaves (account, available, reserved, encumbered per leaf), the end of the leaves, a batch of records written. */
export type ToTreeWorker = { readonly kind: 'leaves'; readonly asset: string; readonly text: Uint8Array } | { readonly kind: 'end' } | { readonly kind: 'written' };
/** From the worker: a batch of records (key, value per record), the roots (after the last batch), or why it failed. */
export type FromTreeWorker = { readonly kind: 'records'; readonly text: Uint8Array } | { readonly kind: 'roots'; readonly roots: Record<string, LiabilitiesRoot> } | { readonly kind: 'failed'; readonly message: string; readonly assertion: boolean };

/** The lines of a transferred buffer of text. */
export const linesOf = (text: Uint8Array): string[] => Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('utf8').split('\n');
