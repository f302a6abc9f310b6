import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { accountOf } from '../../names.js';
import { details, table } from '../../output.js';

/** Recovery mechanisms (endpoint 17), and recovery terms (CONTRACT 8) with their identity. */
export interface Mechanisms {
  identity?: string;
  digest: string;
  mechanisms: { mechanism: string; authority: string; delay: number }[];
}

/** The mechanisms for people: who may recover, after how long, and the digest an acknowledgement names. */
export function mechanismsText(view: Mechanisms): string {
  const rows = table(
    [
      { header: 'MECHANISM', value: (m: Mechanisms['mechanisms'][number]) => m.mechanism },
      { header: 'AUTHORITY', value: (m) => m.authority },
      { header: 'DELAY', value: (m) => `${m.delay} ms (${(m.delay / 3_600_000).toFixed(1)} h)` },
    ],
    view.mechanisms,
  );
  return `${details({ ...(view.identity === undefined ? {} : { identity: view.identity }), digest: view.digest })}\n\n${rows}`;
}

export function buildRecoveryMechanisms(parent: Command, make: MakeContext): Command {
  return parent
    .command('recovery-mechanisms')
    .description("show how an account can be recovered, and the digest a reclaim acknowledges (GET /v1/accounts/{account}/recovery-mechanisms)")
    .argument('<account>', 'did:ledger:acct:<id>, a saved name or a ledger alias')
    .action(action(make, runRecoveryMechanisms));
}

export async function runRecoveryMechanisms(ctx: Context, name: string): Promise<void> {
  const account = await accountOf(ctx, 'account', name);
  const view = await ctx.client().get<Mechanisms>(`/v1/accounts/${encodeURIComponent(account)}/recovery-mechanisms`);
  ctx.out.result(view, () => mechanismsText(view));
}
