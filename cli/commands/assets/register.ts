import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { integer } from '../../parse.js';
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
  await submit(ctx, '/v1/ops/assets', { id: asset, kind: options.kind, precision: integer('--precision', options.precision, 0, 255) }, options);
}
