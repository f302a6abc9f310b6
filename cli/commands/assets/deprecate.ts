import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';

export function buildDeprecate(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    parent.command('deprecate').description('deprecate an asset: no new transfers, reservations or withdrawals in it; holds finish (operator)').argument('<asset>', 'its symbol'),
  ).action(action(make, runDeprecate));
}

export async function runDeprecate(ctx: Context, asset: string, options: SubmitFlags): Promise<void> {
  await submit(ctx, `/v1/ops/assets/${encodeURIComponent(asset)}/deprecate`, {}, options);
}
