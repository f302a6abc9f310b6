import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { amountHelp, amountMinorOf } from '../../money.js';
import { accountOf } from '../../names.js';
import { type SubmitFlags, deadlineOf, referenceOf, submit, withDeadline, withReference, withSubmitFlags } from '../../submit.js';

export interface CreateOptions extends SubmitFlags {
  payer: string;
  amount: string;
  asset: string;
  deadline?: string;
  reference?: string;
}

export function buildCreate(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    withReference(
      withDeadline(
        parent
          .command('create')
      .description("hold value on the payer's account (POST /v1/reservations)")
      .requiredOption('--payer <account>', 'the account the value is reserved against')
      .requiredOption('--amount <amount>', amountHelp)
      .requiredOption('--asset <symbol>', 'the asset'),
        'released by itself then unless captured',
      ),
    ),
  ).action(action(make, runCreate));
}

export async function runCreate(ctx: Context, options: CreateOptions): Promise<void> {
  const body = {
    amount: await amountMinorOf(ctx, '--amount', options.amount, options.asset),
    asset: options.asset,
    payer: await accountOf(ctx, '--payer', options.payer),
    deadline: deadlineOf(options.deadline),
    reference: referenceOf(options.reference),
  };
  await submit(ctx, '/v1/reservations', body, options);
}
