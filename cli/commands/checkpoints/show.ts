import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { details, time } from '../../output.js';
import { integer } from '../../parse.js';
import type { CheckpointView } from '../../verifiable.js';

export function buildShow(parent: Command, make: MakeContext): Command {
  return parent
    .command('show')
    .description('show one checkpoint (GET /v1/checkpoints/{number})')
    .argument('<number>', 'the checkpoint number')
    .action(action(make, runShow));
}

export const checkpointDetails = (c: CheckpointView) => details({ ...c, created_at: time(c.created_at) });

export async function runShow(ctx: Context, number: string): Promise<void> {
  const n = integer('<number>', number, 1, Number.MAX_SAFE_INTEGER);
  const checkpoint = await ctx.client().get<CheckpointView>(`/v1/checkpoints/${n}`);
  ctx.out.result(checkpoint, () => checkpointDetails(checkpoint));
}
