import type { Command } from 'commander';
import type { AccountView } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import { accountOf } from '../../names.js';
import type { Context } from '../../context.js';
import { details, time } from '../../output.js';

export function buildShow(parent: Command, make: MakeContext): Command {
  return parent
    .command('show')
    .description('show an account (GET /v1/accounts/{account})')
    .argument('<account>', 'did:ledger:acct:<id>, a saved name or a ledger alias')
    .action(action(make, runShow));
}

export async function runShow(ctx: Context, name: string): Promise<void> {
  const account = await accountOf(ctx, 'account', name);
  const view = await ctx.client().get<AccountView>(`/v1/accounts/${encodeURIComponent(account)}`);
  ctx.out.result(view, () => details({ ...view, opened_at: time(view.opened_at), closed: String(view.closed) }));
}
