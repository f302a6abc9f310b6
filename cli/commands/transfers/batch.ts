/**
 * `ledgerctl transfers create --batch FILE`: every transfer body of a file, sent in batches of up
 * to 1,000 (POST /v1/batches), item i under the client key `PREFIX-i` so that running the same file
 * again has no second effect. Items the service turns away for now (its backlog share) are sent
 * again under the same key after a pause. Then the decisions are awaited on the event stream
 * (opened before the first batch, so none is missed) and a summary printed; any transfer refused,
 * rejected or expired fails the process (exit 1).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { type OperationView, isDecided } from '../../api.js';
import { type Body, readBatchFile } from '../../batch-file.js';
import type { Context } from '../../context.js';
import { CliError, RefusedError, UnreachableError, UsageError, exitCodes } from '../../errors.js';
import { followEvents } from '../../events.js';
import { isTerminal } from '../../io.js';
import { batchAttemptsMax, batchBodyBytesMax, batchCommandsMax, batchRereadsMax, batchRetryDelayMs, clientKeyLengthMax, clientKeyRandomBytes, progressRedrawMs, submitAttemptsMax, submitRetryDelayMs } from '../../limits.js';
import { details, table } from '../../output.js';
import { operationPath } from '../../wait.js';

export interface BatchFlags {
  batch: string;
  clientKeyPrefix?: string;
  onBehalfOf?: string;
  wait?: boolean;
}

interface Refusal {
  readonly error: string;
  readonly description: string;
}

/** One transfer of the file and what became of it. */
interface Item {
  /** 1-based: the item of a JSON array, or the line of NDJSON counted among non-empty lines. */
  readonly n: number;
  readonly body: Body;
  readonly clientKey: string;
  ref?: string;
  state?: string;
  /** Refused at submission, or the decision's error. */
  refusal?: Refusal;
  /** Its reply was already terminal (a repeat): no decision event will come for it. */
  decidedBefore?: boolean;
}

interface ItemReply {
  operation_reference?: string;
  state?: string | null;
  terminal?: boolean;
  error?: string | Refusal;
  description?: string;
}

/** A line on stderr that redraws itself, for terminals only; cleared when done so no spinner line stays. */
class Progress {
  private drawnAtMs = 0;
  private readonly live: boolean;

  constructor(
    private readonly ctx: Context,
    private readonly items: readonly Item[],
  ) {
    const stderr = ctx.io.stderr;
    this.live = isTerminal(stderr) && (stderr.columns ?? 0) > 0;
  }

  draw(force = false): void {
    if (!this.live) return;
    const now = Date.now();
    if (!force && now - this.drawnAtMs < progressRedrawMs) return;
    this.drawnAtMs = now;
    const taken = this.items.filter((i) => i.ref !== undefined || i.refusal !== undefined).length;
    const decided = this.items.filter((i) => i.state !== undefined && isDecided(i.state)).length;
    const refused = this.items.filter((i) => i.refusal !== undefined).length;
    this.ctx.io.stderr.write(`\r\x1b[Ksubmitted ${taken}/${this.items.length}  decided ${decided}  refused ${refused}`);
  }

  clear(): void {
    if (this.live) this.ctx.io.stderr.write('\r\x1b[K');
  }
}

/** Batches of at most `batchCommandsMax` items whose bodies fit the route's bound. */
function* batchesOf(items: readonly Item[]): Generator<Item[]> {
  let batch: Item[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(item.body)) + item.clientKey.length + 64;
    if (batch.length > 0 && (batch.length === batchCommandsMax || bytes + size > batchBodyBytesMax)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}

/** One batch sent; a lost connection or a service turning the whole batch away for now is retried (same keys: no second effect). */
async function post(ctx: Context, batch: readonly Item[], flags: BatchFlags): Promise<ItemReply[]> {
  const commands = batch.map((item) => ({ command: 'transfer', body: item.body, client_key: item.clientKey }));
  for (let attempt = 1; ; attempt++) {
    try {
      const reply = await ctx.client().post<{ items: ItemReply[] }>('/v1/batches', { commands }, { onBehalfOf: flags.onBehalfOf });
      if (!Array.isArray(reply.items) || reply.items.length !== batch.length) throw new RefusedError('ERR-Internal', `the service answered a batch of ${batch.length} with ${Array.isArray(reply.items) ? reply.items.length : 'no'} items`);
      return reply.items;
    } catch (error) {
      const forNow = error instanceof UnreachableError || (error instanceof RefusedError && error.code === 'ERR-DecisionUnavailable');
      if (!forNow || attempt >= submitAttemptsMax) throw error;
      await delay(submitRetryDelayMs * 2 ** (attempt - 1));
    }
  }
}

async function submitAll(ctx: Context, items: readonly Item[], flags: BatchFlags, progress: Progress): Promise<void> {
  let pending = items;
  for (let attempt = 1; pending.length > 0; attempt++) {
    const again: Item[] = [];
    for (const batch of batchesOf(pending)) {
      const replies = await post(ctx, batch, flags);
      for (const [i, reply] of replies.entries()) {
        const item = batch[i]!;
        if (typeof reply.error === 'string') {
          // Turned away for now (the caller's backlog share is full): sent again under the same key.
          if (reply.error === 'ERR-DecisionUnavailable' && attempt < batchAttemptsMax) again.push(item);
          else item.refusal = { error: reply.error, description: reply.description ?? '' };
          continue;
        }
        item.ref = reply.operation_reference;
        // A repeat already decided: Completed needs nothing more; any other end is read for its error (the reply carries none).
        if (reply.terminal === true && reply.state === 'Completed') item.state = reply.state;
        else if (reply.terminal === true) item.decidedBefore = true;
      }
      progress.draw();
    }
    if (again.length > 0) await delay(batchRetryDelayMs);
    pending = again;
  }
}

/** Decisions arriving on the event stream, by operation reference. */
class Decisions {
  private readonly seen = new Map<string, OperationView>();
  private readonly controller = new AbortController();
  private changed: (() => void) | null = null;

  /** Opens the stream and returns once it is live, so no later decision is missed. */
  static async open(ctx: Context): Promise<Decisions> {
    const decisions = new Decisions();
    const stream = followEvents(ctx.client(), { signal: decisions.controller.signal, reconnect: true });
    const timeout = setTimeout(() => decisions.controller.abort(), ctx.timeoutMs);
    try {
      for (;;) {
        const first = await stream.next();
        if (first.done === true) throw new UnreachableError(`no event stream from ${ctx.client().baseUrl.origin} within ${ctx.timeoutMs} ms`);
        if (first.value.type === 'open') break;
      }
    } finally {
      clearTimeout(timeout);
    }
    void (async () => {
      for await (const item of stream) {
        if (item.type !== 'event' || item.kind !== 'operation') continue;
        const view = item.data as OperationView;
        if (typeof view?.operation_reference !== 'string' || !isDecided(view.state)) continue;
        decisions.seen.set(view.operation_reference, view);
        decisions.changed?.();
      }
    })().catch(() => decisions.changed?.());
    return decisions;
  }

  /** Fills in each acknowledged item's decision as it arrives, until all are decided or `timeoutMs` passes. */
  async await(items: readonly Item[], timeoutMs: number, progress: Progress): Promise<void> {
    const deadlineMs = Date.now() + timeoutMs;
    const open = () => items.filter((i) => i.ref !== undefined && i.state === undefined);
    for (let waiting = open(); waiting.length > 0 && Date.now() < deadlineMs; waiting = open()) {
      for (const item of waiting) {
        const view = this.seen.get(item.ref!);
        if (view !== undefined) settle(item, view);
      }
      progress.draw();
      if (open().length === 0) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, Math.min(progressRedrawMs, deadlineMs - Date.now())));
        this.changed = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    this.changed = null;
  }

  stop(): void {
    this.controller.abort();
  }
}

function settle(item: Item, view: OperationView): void {
  item.state = view.state;
  if (view.error !== undefined) item.refusal = view.error;
}

/** Undecided items read once each (bounded: what stays open is reported undecided). */
async function reread(ctx: Context, items: readonly Item[]): Promise<void> {
  const open = items.filter((i) => i.ref !== undefined && i.state === undefined).slice(0, batchRereadsMax);
  for (const item of open) {
    const view = await ctx.client().get<OperationView>(operationPath(item.ref!));
    if (isDecided(view.state)) settle(item, view);
  }
}

const countBy = (items: readonly Item[]) => {
  const counts: Record<string, number> = {};
  for (const item of items) {
    const code = item.refusal?.error ?? item.state ?? 'unknown';
    counts[code] = (counts[code] ?? 0) + 1;
  }
  return counts;
};

const showCounts = (n: number, counts: Record<string, number>) =>
  n === 0 ? '0' : `${n} (${Object.entries(counts).map(([code, k]) => `${code} ${k}`).join(', ')})`;

/** Failures a terminal table shows; `--json` lists all. */
const failuresShownMax = 20;

function summarise(ctx: Context, items: readonly Item[], prefix: string, waited: boolean): void {
  const refused = items.filter((i) => i.ref === undefined);
  const rejected = items.filter((i) => i.state === 'Rejected');
  const expired = items.filter((i) => i.state === 'Expired');
  const completed = items.filter((i) => i.state === 'Completed').length;
  const undecided = items.filter((i) => i.ref !== undefined && i.state === undefined).length;
  const failures = items.filter((i) => i.refusal !== undefined || i.state === 'Expired');
  const failureRows = failures.map((i) => ({
    item: i.n,
    client_key: i.clientKey,
    ...(i.ref === undefined ? {} : { operation_reference: i.ref }),
    ...(i.state === undefined ? {} : { state: i.state }),
    error: i.refusal?.error ?? 'Expired',
    description: i.refusal?.description ?? 'its deadline passed before a decision; nothing moved',
  }));
  const summary = {
    transfers: items.length,
    completed,
    rejected: countBy(rejected),
    expired: expired.length,
    refused: countBy(refused),
    undecided,
    client_key_prefix: prefix,
    failures: failureRows,
  };
  ctx.out.result(summary, () => {
    const head = details({
      transfers: String(items.length),
      completed: String(completed),
      rejected: showCounts(rejected.length, summary.rejected),
      expired: String(expired.length),
      'refused at submission': showCounts(refused.length, summary.refused),
      [waited ? 'undecided' : 'acknowledged, not yet decided']: String(undecided),
      'client keys': `${prefix}-1 … ${prefix}-${items.length}`,
    });
    if (failureRows.length === 0) return head;
    const shown = failureRows.slice(0, failuresShownMax);
    const rows = table<(typeof shown)[number]>(
      [
        { header: 'ITEM', value: (r) => String(r.item), alignRight: true },
        { header: 'OPERATION', value: (r) => r.operation_reference ?? '-' },
        { header: 'CODE', value: (r) => r.error },
        { header: 'WHY', value: (r) => r.description },
      ],
      shown,
    );
    const more = failureRows.length > shown.length ? `\n… and ${failureRows.length - shown.length} more (--json lists every one)` : '';
    return `${head}\n\n${rows}${more}`;
  });
  const failed = failureRows.length;
  if (waited && undecided > 0) {
    throw new CliError(`${undecided} of ${items.length} transfers were not decided within ${ctx.timeoutMs} ms; run the same command again with --client-key-prefix ${prefix} to see where they stand (no second effect)`, exitCodes.refused);
  }
  if (failed > 0) throw new CliError(`${failed} of ${items.length} transfers did not complete`, exitCodes.refused);
}

export async function runBatch(ctx: Context, flags: BatchFlags): Promise<void> {
  const bodies = readBatchFile('--batch', flags.batch);
  const prefix = flags.clientKeyPrefix ?? randomBytes(clientKeyRandomBytes).toString('hex');
  if (flags.clientKeyPrefix === undefined) ctx.out.note(`client key prefix ${prefix} (item i under ${prefix}-i): run again with --client-key-prefix ${prefix} to resume safely`);
  const longest = `${prefix}-${bodies.length}`.length;
  if (prefix.length === 0 || longest > clientKeyLengthMax) throw new UsageError(`--client-key-prefix must leave room for -${bodies.length}: at most ${clientKeyLengthMax - longest + prefix.length} characters`);
  const items: Item[] = bodies.map((body, i) => ({ n: i + 1, body, clientKey: `${prefix}-${i + 1}` }));
  const progress = new Progress(ctx, items);
  const decisions = flags.wait === false ? null : await Decisions.open(ctx);
  try {
    await submitAll(ctx, items, flags, progress);
    if (decisions !== null) {
      await reread(ctx, items.filter((i) => i.decidedBefore === true));
      await decisions.await(items, ctx.timeoutMs, progress);
      await reread(ctx, items);
    }
  } finally {
    decisions?.stop();
    progress.clear();
  }
  summarise(ctx, items, prefix, decisions !== null);
}
