import type { Command } from 'commander';
import type { Json } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { accountOf } from '../../names.js';
import { jsonFile } from '../../parse.js';
import { type SubmitFlags, deadlineOf, referenceOf, submit, withDeadline, withReference, withSubmitFlags } from '../../submit.js';

export interface CreateOptions extends SubmitFlags {
  from?: string;
  to?: string;
  amount?: string;
  asset?: string;
  legs?: string;
  deadline?: string;
  reference?: string;
}

export function buildTransferCreate(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    withReference(
      withDeadline(
        parent
          .command('create')
      .description('move value between accounts, all legs or none (POST /v1/transfers)')
      .option('--from <account>', 'one leg: the debited account (an identifier, a saved name or a ledger alias)')
      .option('--to <account>', 'one leg: the credited account (an identifier, a saved name or a ledger alias)')
      .option('--amount <minor>', 'one leg: minor units, a decimal integer')
      .option('--asset <symbol>', 'one leg: the asset')
      .option('--legs <file>', 'a JSON array of legs {from, to, amount, asset} instead (- for stdin)'),
        'decide by then or expire, nothing moved',
      ),
    ),
  ).action(action(make, runCreate));
}

export async function runCreate(ctx: Context, options: CreateOptions): Promise<void> {
  const body = {
    legs: await legsOf(ctx, options),
    deadline: deadlineOf(options.deadline),
    reference: referenceOf(options.reference),
  };
  await submit(ctx, '/v1/transfers', body, options);
}

async function legsOf(ctx: Context, options: CreateOptions): Promise<Json> {
  const leg = [options.from, options.to, options.amount, options.asset];
  if (options.legs !== undefined) {
    if (leg.some((v) => v !== undefined)) throw new UsageError('give either --legs or --from/--to/--amount/--asset, not both');
    const legs = jsonFile('--legs', options.legs);
    if (!Array.isArray(legs)) throw new UsageError(`--legs ${options.legs} must hold a JSON array of legs`);
    return legs;
  }
  if (leg.some((v) => v === undefined)) throw new UsageError('a transfer needs --from, --to, --amount and --asset (or --legs FILE)');
  return [{ amount: options.amount!, asset: options.asset!, from: await accountOf(ctx, '--from', options.from!), to: await accountOf(ctx, '--to', options.to!) }];
}
