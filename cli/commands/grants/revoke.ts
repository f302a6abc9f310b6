import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';

export function buildRevoke(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    parent.command('revoke').description('revoke a grant and every grant narrowed from it (POST /v1/grants/{grant}/revoke)').argument('<grant>', 'did:ledger:grant:<id>'),
  ).action(action(make, runRevoke));
}

export async function runRevoke(ctx: Context, grant: string, options: SubmitFlags): Promise<void> {
  await submit(ctx, `/v1/grants/${encodeURIComponent(grant)}/revoke`, {}, options);
}
