import type { Command } from 'commander';
import type { Json } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { pairs } from '../../parse.js';
import { type SubmitFlags, referenceOf, submit, withReference, withSubmitFlags } from '../../submit.js';

export interface OpenOptions extends SubmitFlags {
  owner: string;
  custody: string;
  kind: string;
  acknowledged?: string;
  treasuryLimit?: Record<string, string>;
  reference?: string;
}

export function buildOpen(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    withReference(
      parent
      .command('open')
      .description('open a ledger account (POST /v1/accounts)')
      .requiredOption('--owner <identity>', 'the owning identity, did:ledger:id:<id>')
      .option('--custody <custody>', 'delegated or owned', 'delegated')
      .option('--kind <kind>', 'customer or treasury', 'customer')
      .option('--acknowledged <digest>', 'owned custody: hex digest of the recovery terms the holder was shown')
      .option('--treasury-limit <ASSET=AMOUNT>', "a treasury account's limit below zero, minor units (repeatable)", pairs),
    ),
  ).action(action(make, runOpen));
}

export function runOpen(ctx: Context, options: OpenOptions): Promise<void> {
  const body: Record<string, Json | undefined> = {
    custody: options.custody,
    kind: options.kind,
    owner: options.owner,
    acknowledged: options.acknowledged,
    treasury_limits: options.treasuryLimit,
    reference: referenceOf(options.reference),
  };
  return submit(ctx, '/v1/accounts', body, options).then(() => undefined);
}
