import { setTimeout as delay } from 'node:timers/promises';
import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { CliError, UsageError, exitCodes } from '../../errors.js';
import { checkpointPollMs } from '../../limits.js';
import { integer } from '../../parse.js';
import type { CheckpointView } from '../../verifiable.js';
import { checkpointDetails } from './show.js';

const order = ['pending', 'submitted', 'final'] as const;

export interface WaitOptions {
  status?: string;
}

export function buildWait(parent: Command, make: MakeContext): Command {
  return parent
    .command('wait')
    .description('wait (at most --timeout-ms) until a checkpoint reaches a status, final by default, and print it')
    .argument('<number>', 'the checkpoint number')
    .option('--status <status>', 'submitted or final (default final)')
    .action(action(make, runWait));
}

export async function runWait(ctx: Context, number: string, options: WaitOptions): Promise<void> {
  const n = integer('<number>', number, 1, Number.MAX_SAFE_INTEGER);
  const wanted = options.status ?? 'final';
  if (wanted !== 'submitted' && wanted !== 'final') throw new UsageError(`--status must be submitted or final: ${wanted}`);
  const untilMs = Date.now() + ctx.timeoutMs;
  for (;;) {
    const checkpoint = await ctx.client().get<CheckpointView>(`/v1/checkpoints/${n}`);
    if (order.indexOf(checkpoint.status) >= order.indexOf(wanted)) return ctx.out.result(checkpoint, () => checkpointDetails(checkpoint));
    if (Date.now() + checkpointPollMs > untilMs) throw new CliError(`checkpoint ${n} is still ${checkpoint.status} after ${ctx.timeoutMs} ms`, exitCodes.refused);
    await delay(checkpointPollMs);
  }
}
