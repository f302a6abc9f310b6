import type { Command } from 'commander';
import type { TrialBalance } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { Money } from '../../money.js';

export interface TrialBalanceOptions {
  asset?: string;
}

export function buildTrialBalance(parent: Command, make: MakeContext): Command {
  return parent
    .command('trial-balance')
    .description('sum every balance per asset: zero when the book balances (operator; GET /v1/trial-balance)')
    .option('--asset <symbol>', 'only this asset')
    .action(action(make, runTrialBalance));
}

export async function runTrialBalance(ctx: Context, options: TrialBalanceOptions): Promise<void> {
  const trialBalance = await ctx.client().get<TrialBalance>('/v1/trial-balance', { asset: options.asset });
  const amount = await Money.forPeople(ctx.out.machine, ctx.client());
  await ctx.out.view(trialBalance, async () => (await import('../../views/trial-balance.js')).TrialBalanceView, { trialBalance, amount });
}
