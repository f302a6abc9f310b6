import type { Command } from 'commander';
import type { OperationView } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { printOperation } from '../../submit.js';
import { operationPath } from '../../wait.js';

export function buildShow(parent: Command, make: MakeContext): Command {
  return parent
    .command('show')
    .description("show an operation's state and outcome (GET /v1/operations/{reference})")
    .argument('<reference>', 'the operation reference a command printed')
    .action(action(make, runShow));
}

/** Prints the operation; a rejected one also prints its error on stderr and exits 1. */
export async function runShow(ctx: Context, reference: string): Promise<void> {
  await printOperation(ctx, await ctx.client().get<OperationView>(operationPath(reference)));
}
