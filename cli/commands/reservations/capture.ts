import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import type { OperationView } from '../../api.js';
import { amountHelp, amountMinorOf } from '../../money.js';
import { accountOf } from '../../names.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';
import { operationPath } from '../../wait.js';

export interface CaptureOptions extends SubmitFlags {
  to: string;
  amount?: string;
}

export function buildCapture(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    parent
      .command('capture')
      .description('move reserved value to an account; a partial capture releases the rest')
      .argument('<reservation>', "the reservation's operation reference")
      .requiredOption('--to <account>', 'the credited account')
      .option('--amount <amount>', `capture only this much: ${amountHelp}`),
  ).action(action(make, runCapture));
}

export async function runCapture(ctx: Context, reservation: string, options: CaptureOptions): Promise<void> {
  // Major units are the reservation's asset's: read from the reservation only when they are given.
  const assetOf = async () => {
    const held = (await ctx.client().get<OperationView>(operationPath(reservation))).moves?.[0]?.asset;
    if (held === undefined) throw new UsageError(`--amount ${options.amount}: ${reservation} holds no amount to capture; give minor units`);
    return held;
  };
  const amount = options.amount === undefined ? undefined : await amountMinorOf(ctx, '--amount', options.amount, assetOf);
  const body = { to: await accountOf(ctx, '--to', options.to), amount };
  await submit(ctx, `/v1/reservations/${encodeURIComponent(reservation)}/capture`, body, options);
}
