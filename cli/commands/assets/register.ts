import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';

export interface RegisterOptions extends SubmitFlags {
  kind: string;
  precision: string;
}

const kinds = ['fiat', 'stable', 'native', 'other'];

export function buildRegister(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    parent
      .command('register')
      .description('register an asset, book_only (operator; POST /v1/ops/assets)')
      .argument('<asset>', 'its symbol')
      .requiredOption('--kind <kind>', kinds.join(', '))
      .requiredOption('--precision <places>', 'decimal places of its major unit, 0..255'),
  ).action(action(make, runRegister));
}

export async function runRegister(ctx: Context, asset: string, options: RegisterOptions): Promise<void> {
  if (!kinds.includes(options.kind)) throw new UsageError(`--kind must be one of ${kinds.join(', ')}`);
  if (!/^[0-9]{1,3}$/.test(options.precision) || Number(options.precision) > 255) throw new UsageError('--precision must be an integer 0..255');
  await submit(ctx, '/v1/ops/assets', { id: asset, kind: options.kind, precision: Number(options.precision) }, options);
}
