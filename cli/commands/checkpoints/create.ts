import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { details, time } from '../../output.js';
import { send } from '../../submit.js';
import type { CheckpointView } from '../../verifiable.js';

export interface CreateOptions {
  clientKey?: string;
}

export function buildCreate(parent: Command, make: MakeContext): Command {
  return parent
    .command('create')
    .description('take a checkpoint of the journal now and anchor it on the settlement layer (operator; POST /v1/ops/checkpoints)')
    .option('--client-key <key>', 'idempotency key (at most 256 characters): a retry with it takes no second checkpoint (default: a random one, shown on stderr)')
    .action(action(make, runCreate));
}

export async function runCreate(ctx: Context, options: CreateOptions): Promise<void> {
  const reply = await send(ctx, '/v1/ops/checkpoints', {}, { clientKey: options.clientKey });
  const anchoring = (reply.result as { anchoring?: { checkpoint: CheckpointView } } | undefined)?.anchoring;
  ctx.out.result(reply, () => {
    const c = anchoring?.checkpoint;
    return details({ operation: reply.operation_reference, checkpoint: c === undefined ? '-' : String(c.number), status: c?.status, entry_sequence: c === undefined ? undefined : String(c.entry_sequence), kernel_root: c?.kernel_root, commitment: c?.commitment, created_at: c === undefined ? undefined : time(c.created_at) });
  });
}
