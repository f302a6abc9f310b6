import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { waitTimeoutDefaultMs } from '../../limits.js';
import { decision, printOperation, timeoutOf } from '../../submit.js';

export interface WaitOptions {
  timeoutMs?: string;
}

export function buildWait(parent: Command, make: MakeContext): Command {
  return parent
    .command('wait')
    .description('wait on the event stream until an operation is decided, then show it')
    .argument('<reference>', 'the operation reference a command printed')
    .option('--timeout-ms <ms>', 'give up after this long (exit 1)', String(waitTimeoutDefaultMs))
    .action(action(make, runWait));
}

export async function runWait(ctx: Context, reference: string, options: WaitOptions): Promise<void> {
  printOperation(ctx, await decision(ctx, reference, timeoutOf(options)));
}
