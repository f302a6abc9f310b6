import type { Command } from 'commander';
import type { Json } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { accountOf } from '../../names.js';
import { amountHelp, amountMinorOf } from '../../money.js';
import { jsonFile } from '../../parse.js';
import { type SubmitFlags, deadlineOf, referenceOf, submit, withDeadline, withReference, withSubmitFlags } from '../../submit.js';
import { runBatch } from './batch.js';

export interface CreateOptions extends SubmitFlags {
  from?: string;
  to?: string;
  amount?: string;
  asset?: string;
  legs?: string;
  deadline?: string;
  reference?: string;
  batch?: string;
  clientKeyPrefix?: string;
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
      .option('--amount <amount>', `one leg: ${amountHelp}`)
      .option('--asset <symbol>', 'one leg: the asset')
      .option('--legs <file>', 'a JSON array of legs {from, to, amount, asset} instead (- for stdin)')
      .option('--batch <file>', 'many transfers: a JSON array, or one JSON object a line, of transfer bodies {legs, deadline?, reference?} (- for stdin), sent in batches of up to 1000; prints a summary, exit 1 if any did not complete')
      .option('--client-key-prefix <prefix>', 'with --batch: item i is sent under the client key PREFIX-i, so running the same file again has no second effect (default: a random prefix, shown on stderr)'),
        'decide by then or expire, nothing moved',
      ),
    ),
  ).action(action(make, runCreate));
}

export async function runCreate(ctx: Context, options: CreateOptions): Promise<void> {
  if (options.batch !== undefined) {
    const single = [options.from, options.to, options.amount, options.asset, options.legs, options.deadline, options.reference, options.clientKey];
    if (single.some((v) => v !== undefined)) throw new UsageError('--batch takes every transfer from its file: give no --from/--to/--amount/--asset/--legs/--deadline/--reference/--client-key with it');
    return runBatch(ctx, { batch: options.batch, clientKeyPrefix: options.clientKeyPrefix, onBehalfOf: options.onBehalfOf, wait: options.wait });
  }
  if (options.clientKeyPrefix !== undefined) throw new UsageError('--client-key-prefix goes with --batch');
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
  return [{ amount: await amountMinorOf(ctx, '--amount', options.amount!, options.asset), asset: options.asset!, from: await accountOf(ctx, '--from', options.from!), to: await accountOf(ctx, '--to', options.to!) }];
}
