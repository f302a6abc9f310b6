import type { Command } from 'commander';
import type { GrantListing, GrantTerms, Json, OpsGrant } from '../../api.js';
import { type AmountText, Money, minorUnitsNamed } from '../../money.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { accountOf } from '../../names.js';
import { grantPagesMax } from '../../limits.js';
import { type Column, show, table, time } from '../../output.js';
import { listOps } from '../../ops-listings.js';
import { type PageOptions, listPages } from '../../pages.js';

export interface ListOptions extends PageOptions {
  identity?: string;
  account?: string;
  grantor?: string;
  holder?: string;
  state?: string;
}

type Item = GrantListing['items'][number];

export function buildGrantList(parent: Command, make: MakeContext): Command {
  return parent
    .command('list')
    .description('grants over an identity or an account, live and revoked; without either, every grant (operator; GET /v1/ops/grants)')
    .option('--identity <identity>', 'GET /v1/identities/{identity}/grants')
    .option('--account <account>', 'GET /v1/accounts/{account}/grants')
    .option('--grantor <identity>', 'given by this identity (operator, without --identity or --account)')
    .option('--holder <identity>', 'held by this principal (operator, likewise)')
    .option('--state <state>', 'live, revoked or expired (operator, likewise)')
    .option('--limit <n>', "grants per page, 1..1000 (when not given the service's 1000, or 100 listing every grant)")
    .option('--cursor <hex>', "continue from a page's next")
    .option('--all', 'follow next to the end (with --json: one grant per line)')
    .action(action(make, runList));
}

export async function runList(ctx: Context, options: ListOptions): Promise<void> {
  const { grantor, holder, state } = options;
  if (options.identity !== undefined && options.account !== undefined) throw new UsageError('give at most one of --identity or --account');
  if (options.identity === undefined && options.account === undefined) {
    return listOps<OpsGrant>(ctx, options, 'grants', { grantor, holder, state }, (amount) => [
      ...grantColumns(amount),
      { header: 'GRANTOR', value: (g) => g.grantor },
      { header: 'STATE', value: (g) => g.state },
    ]);
  }
  if (grantor !== undefined || holder !== undefined || state !== undefined) throw new UsageError('--grantor, --holder and --state filter the listing of every grant: give them without --identity or --account');
  const path =
    options.identity !== undefined
      ? `/v1/identities/${encodeURIComponent(options.identity)}/grants`
      : `/v1/accounts/${encodeURIComponent(await accountOf(ctx, '--account', options.account!))}/grants`;
  await listPages(ctx, options, {
    read: (cursor) => ctx.client().get<GrantListing>(path, { limit: options.limit, cursor }),
    items: (page) => page.items,
    show: async (page, header) => {
      const amount = await Money.forPeople(ctx.out.machine || ctx.out.picksField, ctx.client());
      ctx.out.result(page, () => table(grantColumns(amount), page.items, header));
    },
    pagesMax: grantPagesMax,
  });
}

/**
 * A bound counts minor units of whichever asset a use moves: in major units where the grant is for
 * one asset (its subject, or its only listed asset), else in minor units, saying so.
 */
function boundText(amountMinor: string, terms: GrantTerms, amount: AmountText): string {
  const subject = terms.subject as Record<string, Json> | string;
  const asset = typeof subject === 'object' && typeof subject.asset === 'string' ? subject.asset : terms.assets?.length === 1 ? terms.assets[0] : undefined;
  return asset === undefined ? minorUnitsNamed(amountMinor) : amount(amountMinor, asset);
}

const grantColumns = (amount: AmountText): Column<Item>[] => [
  { header: 'GRANT', value: (g: Item) => g.grant },
  { header: 'KIND', value: (g) => g.terms.kind },
  { header: 'PRINCIPAL', value: (g) => g.terms.principal },
  { header: 'SUBJECT', value: (g) => show(g.terms.subject) },
  { header: 'OPS', value: (g) => g.terms.ops.join(',') },
  { header: 'PER OP', value: (g) => (g.terms.per_operation === null || g.terms.per_operation === undefined ? '-' : boundText(g.terms.per_operation, g.terms, amount)), alignRight: true },
  { header: 'PER WINDOW', value: (g) => (g.terms.per_window === null || g.terms.per_window === undefined ? '-' : `${boundText(g.terms.per_window.limit, g.terms, amount)} / ${g.terms.per_window.length} ms`), alignRight: true },
  { header: 'GRANTED', value: (g) => time(g.granted_at) },
  { header: 'REVOKED', value: (g) => time(g.revoked) },
];
