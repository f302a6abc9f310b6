import type { Command } from 'commander';
import type { AccountListing, AccountView } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { CliError, exitCodes } from '../../errors.js';
import { accountPagesMax, accountsPageLimitDefault } from '../../limits.js';
import { table, time } from '../../output.js';

export interface ListOptions {
  owner: string;
  limit?: string;
  cursor?: string;
  all?: boolean;
}

export function buildAccountList(parent: Command, make: MakeContext): Command {
  return parent
    .command('list')
    .description("an identity's accounts in identifier order (GET /v1/accounts?owner=)")
    .requiredOption('--owner <identity>', 'the owning identity, did:ledger:id:<id>')
    .option('--limit <n>', 'accounts per page, 1..1000', String(accountsPageLimitDefault))
    .option('--cursor <hex>', "continue from a page's next")
    .option('--all', 'follow next to the end (with --json: one account per line)')
    .action(action(make, runList));
}

const accountsTable = (items: readonly AccountView[]) =>
  table(
    [
      { header: 'ACCOUNT', value: (a: AccountView) => a.account },
      { header: 'KIND', value: (a) => a.kind },
      { header: 'CUSTODY', value: (a) => a.custody },
      { header: 'STATUS', value: (a) => a.status },
      { header: 'OPENED', value: (a) => time(a.opened_at) },
    ],
    items,
  );

export async function runList(ctx: Context, options: ListOptions): Promise<void> {
  const read = (cursor: string | undefined) =>
    ctx.client().get<AccountListing>('/v1/accounts', { owner: options.owner, limit: options.limit ?? String(accountsPageLimitDefault), cursor });
  if (options.all !== true) {
    const page = await read(options.cursor);
    return ctx.out.result(page, () => `${accountsTable(page.items)}${page.next === undefined ? '' : `\nmore: --cursor ${page.next}`}`);
  }
  const items: AccountView[] = [];
  let cursor = options.cursor;
  for (let pages = 0; pages < accountPagesMax; pages++) {
    const page = await read(cursor);
    if (ctx.out.machine) for (const account of page.items) ctx.out.line(account);
    else items.push(...page.items);
    if (page.next === undefined) return ctx.out.machine ? undefined : ctx.out.result(items, () => accountsTable(items));
    cursor = page.next;
  }
  throw new CliError(`stopped after ${accountPagesMax} pages: pass --cursor ${cursor} to go on`, exitCodes.refused);
}
