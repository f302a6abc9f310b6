import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import { accountOf } from '../../names.js';
import type { Context } from '../../context.js';
import { details, table, time } from '../../output.js';

export interface CustodyView {
  account: string;
  custody: string;
  epoch: number;
  owner: string;
  successor?: string | null;
  changes: { effective_at: number; initiated_at: number; kind: string; pending: string; state: string }[];
}

export function buildCustody(parent: Command, make: MakeContext): Command {
  return parent
    .command('custody')
    .description("show an account's custody and pending changes (GET /v1/accounts/{account}/custody)")
    .argument('<account>', 'did:ledger:acct:<id>, a saved name or a ledger alias')
    .action(action(make, runCustody));
}

export async function runCustody(ctx: Context, name: string): Promise<void> {
  const account = await accountOf(ctx, 'account', name);
  const view = await ctx.client().get<CustodyView>(`/v1/accounts/${encodeURIComponent(account)}/custody`);
  ctx.out.result(view, () => {
    const head = details({ account: view.account, custody: view.custody, epoch: String(view.epoch), owner: view.owner, successor: view.successor ?? null });
    if (view.changes.length === 0) return head;
    const changes = table(
      [
        { header: 'KIND', value: (c: CustodyView['changes'][number]) => c.kind },
        { header: 'STATE', value: (c) => c.state },
        { header: 'INITIATED', value: (c) => time(c.initiated_at) },
        { header: 'EFFECTIVE', value: (c) => time(c.effective_at) },
        { header: 'OPERATION', value: (c) => c.pending },
      ],
      view.changes,
    );
    return `${head}\n\n${changes}`;
  });
}
