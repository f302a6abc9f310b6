/**
 * Waiting for an operation's decision on the event stream, within a bounded time. The operation is
 * read once before and once after subscribing, so a decision made in between is not missed.
 */
import { type OperationView, isDecided } from './api.js';
import type { LedgerClient } from './client.js';
import { CliError, RefusedError, UnreachableError, exitCodes } from './errors.js';

export type WaitProgress = (view: OperationView) => void;

export const operationPath = (reference: string) => `/v1/operations/${encodeURIComponent(reference)}`;

/** What the wait is for: the decision (the default), or the operation's terminal state (`operations wait --terminal`). */
export type WaitUntil = 'decided' | 'terminal';

const reached = (view: OperationView, until: WaitUntil) => (until === 'terminal' ? view.terminal : isDecided(view.state));

export async function waitForDecision(client: LedgerClient, reference: string, timeoutMs: number, progress: WaitProgress = () => {}, until: WaitUntil = 'decided'): Promise<OperationView> {
  const read = () => client.get<OperationView>(operationPath(reference));
  const again = `ledgerctl operations wait ${reference}${until === 'terminal' ? ' --terminal' : ''}`;
  const timedOut = (state: string) => new CliError(`timed out after ${timeoutMs} ms waiting for ${reference} (still ${state}); go on waiting with: ${again}`, exitCodes.refused);
  // The command's time may be spent already (on sending it): out of time, not out of reach.
  if (client.remainingMs() <= 0) throw timedOut('undecided');
  let view = await read();
  progress(view);
  if (reached(view, until)) return view;
  // The event stream (and its SSE parser) is loaded only by a call that waits: the verbs that merely
  // import this module (a noun's read verbs beside its submitting ones) start without it (docs/performance.md).
  const { followEvents } = await import('./events.js');
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), client.remainingMs());
  let lost: string | null = null;
  try {
    for await (const item of followEvents(client, { signal: controller.signal, reconnect: true })) {
      lost = item.type === 'lost' ? item.reason : null;
      if (item.type === 'open') view = await read();
      else if (item.type === 'event' && item.kind === 'operation' && (item.data as OperationView).operation_reference === reference) view = item.data as OperationView;
      else continue;
      progress(view);
      if (reached(view, until)) return view;
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  // Out of time while the service could not be reached is that failure (exit 3), not a slow decision.
  if (lost !== null) throw new UnreachableError(`${lost} (gave up waiting for ${reference} after ${timeoutMs} ms)`);
  throw timedOut(view.state);
}

/** A decided operation that did not succeed, as the failure the process ends with (exit 1). */
export function failureOf(view: OperationView): CliError | null {
  if (view.state === 'Rejected') return new RefusedError(view.error?.error ?? 'ERR-Rejected', view.error?.description ?? `${view.operation_reference} was rejected`);
  // A withdrawal decided (Instructed) and then Expired never reached a final block in time: its value was returned.
  if (view.state === 'Expired' && view.command === 'withdraw' && view.decided_at !== null) {
    return new CliError(`${view.operation_reference} expired on the settlement layer: no final block carried its instruction by its expiry height; the value is back in the account's available balance`, exitCodes.refused);
  }
  if (view.state === 'Expired' && view.command !== 'reserve') return new CliError(`${view.operation_reference} expired: its deadline passed before a decision, nothing moved`, exitCodes.refused);
  return null;
}
