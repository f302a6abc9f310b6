import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { accountOf } from '../../names.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';

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
      .option('--amount <minor>', 'capture only this much (minor units)'),
  ).action(action(make, runCapture));
}

export async function runCapture(ctx: Context, reservation: string, options: CaptureOptions): Promise<void> {
  const body = { to: await accountOf(ctx, '--to', options.to), amount: options.amount };
  await submit(ctx, `/v1/reservations/${encodeURIComponent(reservation)}/capture`, body, options);
}
