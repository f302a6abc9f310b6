import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { type Mechanisms, mechanismsText } from '../accounts/recovery-mechanisms.js';

export function buildRecoveryTerms(parent: Command, make: MakeContext): Command {
  return parent
    .command('recovery-terms')
    .description("show an identity's recovery terms and the digest an owned account's opening acknowledges (GET /v1/identities/{identity}/recovery-terms)")
    .argument('<identity>', 'did:ledger:id:<id>')
    .action(action(make, runRecoveryTerms));
}

export async function runRecoveryTerms(ctx: Context, identity: string): Promise<void> {
  const view = await ctx.client().get<Mechanisms>(`/v1/identities/${encodeURIComponent(identity)}/recovery-terms`);
  ctx.out.result(view, () => mechanismsText(view));
}
