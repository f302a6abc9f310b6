import type { Command } from 'commander';
import type { MovementsPage } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { movementsPageLimitDefault, movementsPagesMax } from '../../limits.js';
import type { Query } from '../../client.js';
import { optionalAccountOf } from '../../names.js';
import { Money } from '../../money.js';
import { type PageOptions, listPages } from '../../pages.js';
import { timeMs } from '../../parse.js';

export interface MovementsOptions extends PageOptions {
  account?: string;
  identity?: string;
  from?: string;
  to?: string;
  asset?: string;
  direction?: string;
}

export function buildMovements(parent: Command, make: MakeContext): Command {
  return parent
    .command('movements')
    .description('movements of an account or an identity, oldest first (GET /v1/movements)')
    .option('--account <account>', 'one account, did:ledger:acct:<id>')
    .option('--identity <identity>', 'every account of an identity you reach, did:ledger:id:<id>')
    .option('--limit <n>', 'movements per page, 1..1000', String(movementsPageLimitDefault))
    .option('--from <time>', 'start, inclusive (with --to; ms since the epoch, or ISO-8601)')
    .option('--to <time>', 'end, exclusive (with --from)')
    .option('--asset <symbol>', 'only this asset')
    .option('--direction <direction>', 'debit or credit')
    .option('--cursor <hex>', "continue from a page's next")
    .option('--all', 'follow next to the end (with --json: one movement per line)')
    .action(action(make, runMovements));
}

export async function runMovements(ctx: Context, options: MovementsOptions): Promise<void> {
  if ((options.account === undefined) === (options.identity === undefined)) throw new UsageError('give exactly one of --account or --identity');
  const query: Query = {
    account: await optionalAccountOf(ctx, '--account', options.account),
    identity: options.identity,
    limit: options.limit ?? String(movementsPageLimitDefault),
    from: options.from === undefined ? undefined : timeMs('--from', options.from),
    to: options.to === undefined ? undefined : timeMs('--to', options.to),
    asset: options.asset,
    direction: options.direction,
  };
  const amount = await Money.forPeople(ctx.out.machine, ctx.client());
  await listPages(ctx, options, {
    read: (cursor) => ctx.client().get<MovementsPage>('/v1/movements', { ...query, cursor }),
    items: (page) => page.movements,
    show: (page, header) => ctx.out.view(page, table, { movements: page.movements, header, amount }),
    pagesMax: movementsPagesMax,
  });
}

const table = async () => (await import('../../views/movements.js')).MovementsTable;
