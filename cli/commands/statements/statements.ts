import type { Command } from 'commander';
import type { Statement } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { Money } from '../../money.js';
import { accountOf } from '../../names.js';
import { statementDefaultDays } from '../../limits.js';
import { timeMs } from '../../parse.js';

const dayMs = 86_400_000;

export interface StatementsOptions {
  account: string;
  asset: string;
  from?: string;
  to?: string;
  asOf?: string;
}

export function buildStatements(parent: Command, make: MakeContext): Command {
  return parent
    .command('statements')
    .description("an account's statement for one asset over a period (GET /v1/statements)")
    .requiredOption('--account <account>', 'did:ledger:acct:<id>')
    .requiredOption('--asset <symbol>', 'the asset')
    .option('--from <time>', `start, inclusive (ms since the epoch, or ISO-8601; default: ${statementDefaultDays} days before --to)`)
    .option('--to <time>', 'end, exclusive (ms since the epoch, or ISO-8601; default: now)')
    .option('--as-of <view>', 'read at the view of an earlier read')
    .action(action(make, runStatements));
}

export async function runStatements(ctx: Context, options: StatementsOptions): Promise<void> {
  // The CONTRACT's flags stay as they were; left out, the period is the last statementDefaultDays days.
  const to = options.to === undefined ? String(Date.now()) : timeMs('--to', options.to);
  const from = options.from === undefined ? String(Math.max(0, Number(to) - statementDefaultDays * dayMs)) : timeMs('--from', options.from);
  const statement = await ctx.client().get<Statement>('/v1/statements', {
    account: await accountOf(ctx, '--account', options.account),
    asset: options.asset,
    from,
    to,
    as_of: options.asOf,
  });
  const amount = await Money.forPeople(ctx.out.machine, ctx.client());
  await ctx.out.view(statement, async () => (await import('../../views/statement.js')).StatementView, { statement, amount });
}
