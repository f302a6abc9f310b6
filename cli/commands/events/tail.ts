import type { Command } from 'commander';
import type { OperationView } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { followEvents } from '../../events.js';
import { integer } from '../../parse.js';
import { movesSummary } from '../../dashboard/model.js';
import { type AmountText, Money, minorUnitsText } from '../../money.js';
import { time } from '../../output.js';
import { safe } from '../../safe.js';

export interface TailOptions {
  after?: string;
  count?: string;
}

const countMax = Number.MAX_SAFE_INTEGER;

export function buildTail(parent: Command, make: MakeContext): Command {
  return parent
    .command('tail')
    .description('follow the event stream (GET /v1/events), reconnecting and resuming where it left off')
    .option('--after <seq>', 'start after this event sequence number')
    .option('--count <n>', 'stop after this many events')
    .action(action(make, runTail));
}

/** Prints events until `--count` is reached or the process is interrupted (SIGINT, SIGTERM: exit 0). */
export async function runTail(ctx: Context, options: TailOptions): Promise<void> {
  const after = options.after === undefined ? null : integer('--after', options.after, 0, Number.MAX_SAFE_INTEGER);
  const count = options.count === undefined ? countMax : integer('--count', options.count, 1, countMax);
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // Amounts in major units for people, the registry read once before the first line.
  const amount = ctx.out.machine || ctx.out.picksField ? minorUnitsText : (await Money.readOrNone(ctx.client())).show;
  try {
    let seen = 0;
    for await (const item of followEvents(ctx.client(), { after, signal: controller.signal, reconnect: true })) {
      if (item.type === 'lost') ctx.out.note(`ledgerctl: event stream lost (${item.reason}); reconnecting in ${item.retryInMs} ms`);
      if (item.type !== 'event') continue;
      if (ctx.out.machine || ctx.out.picksField) ctx.out.line({ seq: item.seq, event: item.kind, data: item.data });
      else ctx.io.stdout.write(`${safe(describeEvent(item.seq, item.kind, item.data, amount))}\n`);
      if (++seen >= count) return;
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    controller.abort();
  }
}

/** One line for people: when, the sequence number, who, what and its decision, how much from where to where, the reference. */
export function describeEvent(seq: number | null, kind: string, data: unknown, amount: AmountText = minorUnitsText): string {
  if (kind === 'operation') {
    const op = data as OperationView;
    const error = op.error === undefined ? '' : ` ${op.error.error}`;
    const moved = movesSummary(op, amount);
    const flow = moved.amount === '' ? '' : `  ${moved.amount}  ${moved.from} -> ${moved.to}`;
    return `${time(op.decided_at ?? op.submitted_at)}  ${seq ?? '-'}  ${op.principal ?? '-'}  ${op.command} ${op.state}${error}${flow}  ${op.operation_reference}`;
  }
  return `${seq ?? '-'}  ${kind}  ${JSON.stringify(data)}`;
}
