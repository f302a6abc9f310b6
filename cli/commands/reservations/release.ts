import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';

export function buildRelease(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    parent.command('release').description('release a reservation: the held value is available again').argument('<reservation>', "the reservation's operation reference"),
  ).action(action(make, runRelease));
}

export async function runRelease(ctx: Context, reservation: string, options: SubmitFlags): Promise<void> {
  await submit(ctx, `/v1/reservations/${encodeURIComponent(reservation)}/release`, {}, options);
}
