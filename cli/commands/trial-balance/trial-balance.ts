import type { Command } from 'commander';
import type { TrialBalance } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { RefusedError } from '../../errors.js';
import { accountPagesMax, accountsPageLimitDefault } from '../../limits.js';
import { Money } from '../../money.js';
import { table } from '../../output.js';
import { type PageOptions, listPages } from '../../pages.js';

export interface TrialBalanceOptions extends PageOptions {
  asset?: string;
  accounts?: boolean;
}

export function buildTrialBalance(parent: Command, make: MakeContext): Command {
  return parent
    .command('trial-balance')
    .description('per asset: debits, credits, each layer, the sum and whether the book balances (operator; GET /v1/trial-balance)')
    .option('--asset <symbol>', 'only this asset')
    .option('--accounts', 'add per-account lines, a page at a time (each account in each asset: debit or credit, and its layers)')
    .option('--limit <n>', 'with --accounts: lines per page, 1..1000', String(accountsPageLimitDefault))
    .option('--cursor <hex>', "with --accounts: continue from a page's next")
    .option('--all', 'with --accounts: follow next to the end (with --json: one line per account and asset)')
    .action(action(make, runTrialBalance));
}

/**
 * Reads the trial balance with its debits and credits; a book too large for them to be read
 * (ERR-QueryUnbounded) is read without them, and the reason shown.
 */
async function readTrialBalance(ctx: Context, query: Record<string, string | undefined>): Promise<{ trialBalance: TrialBalance; grossUnavailable?: string }> {
  try {
    return { trialBalance: await ctx.client().get<TrialBalance>('/v1/trial-balance', { ...query, gross: 'true' }) };
  } catch (error) {
    if (!(error instanceof RefusedError) || error.code !== 'ERR-QueryUnbounded') throw error;
    return { trialBalance: await ctx.client().get<TrialBalance>('/v1/trial-balance', query), grossUnavailable: error.description };
  }
}

export async function runTrialBalance(ctx: Context, options: TrialBalanceOptions): Promise<void> {
  const amount = await Money.forPeople(ctx.out.machine, ctx.client());
  const view = async () => (await import('../../views/trial-balance.js')).TrialBalanceView;
  if (options.accounts !== true) {
    const read = await readTrialBalance(ctx, { asset: options.asset });
    return ctx.out.view(read.trialBalance, view, { ...read, amount });
  }
  const { linesColumns } = await import('../../views/trial-balance.js');
  await listPages(ctx, options, {
    read: async (cursor) => {
      const query = { asset: options.asset, accounts: 'true', limit: options.limit ?? String(accountsPageLimitDefault), cursor };
      // Debits and credits read every balance: once, with the first page.
      const read = cursor === options.cursor ? await readTrialBalance(ctx, query) : { trialBalance: await ctx.client().get<TrialBalance>('/v1/trial-balance', query) };
      return { ...read, next: read.trialBalance.accounts_page?.next };
    },
    items: (page) => page.trialBalance.accounts_page?.items ?? [],
    show: async (page, header) => {
      if (header) return ctx.out.view(page.trialBalance, view, { ...page, amount });
      ctx.out.result(page.trialBalance, () => table(linesColumns(amount), page.trialBalance.accounts_page?.items ?? [], false));
    },
    pagesMax: accountPagesMax,
  });
}
