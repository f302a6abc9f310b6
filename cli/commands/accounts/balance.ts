import type { Command } from 'commander';
import type { AccountBalances } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import { accountOf } from '../../names.js';
import type { Context } from '../../context.js';
import { Money } from '../../money.js';
import { table } from '../../output.js';

type Row = AccountBalances['balances'][number];

export function buildBalance(parent: Command, make: MakeContext): Command {
  return parent
    .command('balance')
    .description("an account's balances in every asset it has held (GET /v1/accounts/{account}/balances)")
    .argument('<account>', 'did:ledger:acct:<id>, a saved name or a ledger alias')
    .action(action(make, runBalance));
}

export async function runBalance(ctx: Context, name: string): Promise<void> {
  const account = await accountOf(ctx, 'account', name);
  const balances = await ctx.client().get<AccountBalances>(`/v1/accounts/${encodeURIComponent(account)}/balances`);
  // Major units need each asset's precision: read only when people read the result.
  const show = await Money.forPeople(ctx.out.machine, ctx.client());
  ctx.out.result(balances, () => {
    const amount = (pick: (r: Row) => string) => (r: Row) => show(pick(r), r.asset);
    const rows = table(
      [
        { header: 'ASSET', value: (r: Row) => r.asset },
        { header: 'AVAILABLE', value: amount((r) => r.available), alignRight: true },
        { header: 'RESERVED', value: amount((r) => r.reserved), alignRight: true },
        { header: 'ENCUMBERED', value: amount((r) => r.encumbered), alignRight: true },
      ],
      balances.balances,
    );
    return `${balances.account} (view ${balances.view})\n${rows}`;
  });
}
