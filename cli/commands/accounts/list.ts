import type { Command } from 'commander';
import type { AccountListing, AccountView } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { accountPagesMax, accountsPageLimitDefault } from '../../limits.js';
import { table, time } from '../../output.js';
import { type PageOptions, listPages } from '../../pages.js';

export interface ListOptions extends PageOptions {
  owner: string;
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

const accountsTable = (items: readonly AccountView[], header: boolean) =>
  table(
    [
      { header: 'ACCOUNT', value: (a: AccountView) => a.account },
      { header: 'KIND', value: (a) => a.kind },
      { header: 'CUSTODY', value: (a) => a.custody },
      { header: 'STATUS', value: (a) => a.status },
      { header: 'OPENED', value: (a) => time(a.opened_at) },
    ],
    items,
    header,
  );

export async function runList(ctx: Context, options: ListOptions): Promise<void> {
  await listPages(ctx, options, {
    read: (cursor) => ctx.client().get<AccountListing>('/v1/accounts', { owner: options.owner, limit: options.limit ?? String(accountsPageLimitDefault), cursor }),
    items: (page) => page.items,
    show: async (page, header) => ctx.out.result(page, () => accountsTable(page.items, header)),
    pagesMax: accountPagesMax,
  });
}
