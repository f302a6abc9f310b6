import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';
import { type TermsFlags, termsOf, withAccountsResolved, withTermsFlags } from '../../terms.js';

export interface IssuanceGrantOptions extends SubmitFlags, TermsFlags {
  justification: string;
}

export function buildIssuanceGrant(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    withTermsFlags(
      parent
        .command('issuance-grant')
        .description('let a principal issue value out of treasury accounts (operator; POST /v1/ops/issuance-grants)')
        .requiredOption('--justification <text>', 'why: kept with the grant'),
    ),
  ).action(action(make, runIssuanceGrant));
}

export async function runIssuanceGrant(ctx: Context, options: IssuanceGrantOptions): Promise<void> {
  await submit(ctx, '/v1/ops/issuance-grants', { grant: termsOf(await withAccountsResolved(ctx, options), 'issuance'), justification: options.justification }, options);
}
