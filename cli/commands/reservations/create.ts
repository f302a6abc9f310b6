import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { jsonText, timeMs } from '../../parse.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';

export interface CreateOptions extends SubmitFlags {
  payer: string;
  amount: string;
  asset: string;
  deadline?: string;
  reference?: string;
}

export function buildCreate(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    parent
      .command('create')
      .description("hold value on the payer's account (POST /v1/reservations)")
      .requiredOption('--payer <account>', 'the account the value is reserved against')
      .requiredOption('--amount <minor>', 'minor units, a decimal integer')
      .requiredOption('--asset <symbol>', 'the asset')
      .option('--deadline <time>', 'release by itself then unless captured (ms since the epoch, or ISO-8601)')
      .option('--reference <json>', 'pass-through reference, one JSON value'),
  ).action(action(make, runCreate));
}

export function runCreate(ctx: Context, options: CreateOptions): Promise<void> {
  const body = {
    amount: options.amount,
    asset: options.asset,
    payer: options.payer,
    deadline: options.deadline === undefined ? undefined : Number(timeMs('--deadline', options.deadline)),
    reference: options.reference === undefined ? undefined : jsonText('--reference', options.reference),
  };
  return submit(ctx, '/v1/reservations', body, options).then(() => undefined);
}
