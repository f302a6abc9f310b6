import type { Command } from 'commander';
import type { MovementsPage } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { CliError, UsageError, exitCodes } from '../../errors.js';
import { movementsPageLimitDefault, movementsPagesMax } from '../../limits.js';
import type { Query } from '../../client.js';
import { optionalAccountOf } from '../../names.js';
import { Money } from '../../money.js';
import { timeMs } from '../../parse.js';

export interface MovementsOptions {
  account?: string;
  identity?: string;
  limit?: string;
  from?: string;
  to?: string;
  asset?: string;
  direction?: string;
  cursor?: string;
  all?: boolean;
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
    cursor: options.cursor,
  };
  const read = (cursor: string | undefined) => ctx.client().get<MovementsPage>('/v1/movements', { ...query, cursor });
  const amount = await Money.forPeople(ctx.out.machine, ctx.client());
  if (options.all !== true) {
    const page = await read(options.cursor);
    return ctx.out.view(page, table, { movements: page.movements, amount });
  }
  let cursor = options.cursor;
  for (let pages = 0; pages < movementsPagesMax; pages++) {
    const page = await read(cursor);
    if (ctx.out.machine) for (const movement of page.movements) ctx.out.line(movement);
    else if (page.movements.length > 0 || pages === 0) await ctx.out.view(page, table, { movements: page.movements, header: pages === 0, amount });
    if (page.next === undefined) return;
    cursor = page.next;
  }
  throw new CliError(`stopped after ${movementsPagesMax} pages: narrow the query or pass --cursor ${cursor}`, exitCodes.refused);
}

const table = async () => (await import('../../views/movements.js')).MovementsTable;
