import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { decision, printOperation } from '../../submit.js';

export function buildWait(parent: Command, make: MakeContext): Command {
  return parent
    .command('wait')
    .description('wait on the event stream until an operation is decided, then show it (at most --timeout-ms; exit 1 then)')
    .argument('<reference>', 'the operation reference a command printed')
    .option('--terminal', 'wait until it is terminal, not just decided: a withdrawal Completed or Expired, a reservation Captured, Released or Expired')
    .action(action(make, runWait));
}

export async function runWait(ctx: Context, reference: string, options: { terminal?: boolean } = {}): Promise<void> {
  await printOperation(ctx, await decision(ctx, reference, options.terminal === true ? 'terminal' : 'decided'));
}
