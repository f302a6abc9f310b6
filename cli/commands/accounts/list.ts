import type { Command } from 'commander';
import type { AccountListing, AccountView } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { accountPagesMax, accountsPageLimitDefault } from '../../limits.js';
import { type Column, table, time } from '../../output.js';
import { listOps } from '../../ops-listings.js';
import { type PageOptions, listPages } from '../../pages.js';

export interface ListOptions extends PageOptions {
  owner?: string;
  kind?: string;
  status?: string;
  custody?: string;
  asset?: string;
}

export function buildAccountList(parent: Command, make: MakeContext): Command {
  return parent
    .command('list')
    .description("an identity's accounts in identifier order (GET /v1/accounts?owner=); without --owner, or with a filter, every account (operator; GET /v1/ops/accounts)")
    .option('--owner <identity>', 'the owning identity, did:ledger:id:<id>')
    .option('--kind <kind>', 'customer or treasury (operator)')
    .option('--status <status>', 'active, frozen or closed (operator)')
    .option('--custody <custody>', 'delegated or owned (operator)')
    .option('--asset <symbol>', 'accounts that have held this asset (operator)')
    .option('--limit <n>', 'accounts per page, 1..1000', String(accountsPageLimitDefault))
    .option('--cursor <hex>', "continue from a page's next")
    .option('--all', 'follow next to the end (with --json: one account per line)')
    .action(action(make, runList));
}

const columns: Column<AccountView>[] = [
  { header: 'ACCOUNT', value: (a: AccountView) => a.account },
  { header: 'KIND', value: (a) => a.kind },
  { header: 'CUSTODY', value: (a) => a.custody },
  { header: 'STATUS', value: (a) => a.status },
  { header: 'OPENED', value: (a) => time(a.opened_at) },
];
const accountsTable = (items: readonly AccountView[], header: boolean) => table(columns, items, header);

export async function runList(ctx: Context, options: ListOptions): Promise<void> {
  const { owner, kind, status, custody, asset } = options;
  if (owner === undefined || kind !== undefined || status !== undefined || custody !== undefined || asset !== undefined) {
    // The operator's listing of the whole book: its owner shown, since it spans them.
    const filters = { owner, kind, status, custody, asset };
    return listOps(ctx, { ...options, limit: options.limit ?? String(accountsPageLimitDefault) }, 'accounts', filters, [...columns, { header: 'OWNER', value: (a) => a.owner }]);
  }
  await listPages(ctx, options, {
    read: (cursor) => ctx.client().get<AccountListing>('/v1/accounts', { owner, limit: options.limit ?? String(accountsPageLimitDefault), cursor }),
    items: (page) => page.items,
    show: async (page, header) => ctx.out.result(page, () => accountsTable(page.items, header)),
    pagesMax: accountPagesMax,
  });
}
