/** `ops identities restrict|unrestrict` (CONTRACT 10): a restricted identity's commands are refused; value still reaches it. */
import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';

interface JustifiedOptions extends SubmitFlags {
  justification: string;
}

export function buildIdentityRestrictions(parent: Command, make: MakeContext): Command {
  const identities = parent.command('identities').description('restricting identities');
  for (const [verb, description] of [
    ['restrict', "refuse an identity's commands (value may still reach it)"],
    ['unrestrict', "lift an identity's restriction"],
  ] as const) {
    withSubmitFlags(
      identities
        .command(verb)
        .description(`${description} (operator; POST /v1/ops/identities/{identity}/${verb})`)
        .argument('<identity>', 'did:ledger:id:<id>')
        .requiredOption('--justification <text>', 'why: kept with the operation'),
    ).action(
      action(make, async (ctx: Context, identity: string, options: JustifiedOptions) => {
        await submit(ctx, `/v1/ops/identities/${encodeURIComponent(identity)}/${verb}`, { justification: options.justification }, options);
      }),
    );
  }
  return identities;
}
