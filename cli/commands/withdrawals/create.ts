import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { amountHelp, amountMinorOf } from '../../money.js';
import { accountOf } from '../../names.js';
import { integer } from '../../parse.js';
import { type SubmitFlags, deadlineOf, referenceOf, withDeadline, withReference, withSubmitFlags } from '../../submit.js';
import { submitSettlement } from '../../settlement-print.js';

export interface CreateOptions extends SubmitFlags {
  account: string;
  amount: string;
  asset: string;
  to?: string;
  untilSettled?: boolean;
  toInstance?: string;
  toRef?: string;
  deadline?: string;
  reference?: string;
}

export function buildWithdrawalCreate(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    withReference(
      withDeadline(
        parent
          .command('create')
          .description('move value out to the settlement layer (POST /v1/withdrawals): encumbered and Instructed, then Submitted, Completed or Expired from the final blocks')
          .requiredOption('--account <account>', 'the account debited')
          .requiredOption('--amount <amount>', amountHelp)
          .requiredOption('--asset <symbol>', 'a bound asset')
          .option('--to <hex>', 'a plain layer account, 32 bytes hex')
          .option('--to-instance <n>', 'another deployment on the layer (with --to-ref)')
          .option('--to-ref <hex>', "the account reference on that deployment, 32 bytes hex")
          .option('--until-settled', 'wait past Instructed until Completed or Expired (within --timeout-ms), showing its state on a terminal'),
        'not decided by then: Expired, nothing moves',
      ),
    ),
  ).action(action(make, runWithdrawalCreate));
}

function destinationOf(options: CreateOptions): Record<string, unknown> {
  if (options.to !== undefined && options.toInstance === undefined && options.toRef === undefined) return { account: options.to };
  if (options.to === undefined && options.toInstance !== undefined && options.toRef !== undefined) {
    return { instance: integer('--to-instance', options.toInstance, 0, 0xffff_ffff), account_ref: options.toRef };
  }
  throw new UsageError('give --to, or --to-instance with --to-ref');
}

export async function runWithdrawalCreate(ctx: Context, options: CreateOptions): Promise<void> {
  const body = {
    account: await accountOf(ctx, '--account', options.account),
    amount: await amountMinorOf(ctx, '--amount', options.amount, options.asset),
    asset: options.asset,
    destination: destinationOf(options),
    deadline: deadlineOf(options.deadline),
    reference: referenceOf(options.reference),
  };
  const view = await submitSettlement(ctx, '/v1/withdrawals', body, options, options.untilSettled === true ? 'terminal' : 'decided');
  // The decision is Instructed; what the layer does with it comes later: say so, and how to wait for it.
  if (view !== null && !view.terminal) {
    ctx.out.note(`${view.operation_reference} is ${view.state}: it completes or expires from the layer's final blocks; wait for that with: ledgerctl operations wait ${view.operation_reference} --terminal (or --until-settled here)`);
  }
}
