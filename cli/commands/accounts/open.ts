import type { Command } from 'commander';
import type { Json } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { checkSavedName } from '../../names.js';
import { amountHelp, amountMinorOf } from '../../money.js';
import { pairs } from '../../parse.js';
import { type SubmitFlags, referenceOf, submit, withReference, withSubmitFlags } from '../../submit.js';

export interface OpenOptions extends SubmitFlags {
  owner: string;
  custody: string;
  kind: string;
  acknowledged?: string;
  treasuryLimit?: Record<string, string>;
  reference?: string;
  saveAs?: string;
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
      .option('--treasury-limit <ASSET=AMOUNT>', `a treasury account's limit below zero (repeatable); AMOUNT: ${amountHelp}`, pairs)
      .option('--save-as <name>', 'keep a name for the new account in the profile in use, for any flag that takes an account'),
    ),
  ).action(action(make, runOpen));
}

export async function runOpen(ctx: Context, options: OpenOptions): Promise<void> {
  const saveAs = options.saveAs === undefined ? undefined : checkSavedName(options.saveAs);
  if (saveAs !== undefined && options.wait === false) throw new UsageError('--save-as needs the decision (the account is named by it): drop --no-wait');
  const body: Record<string, Json | undefined> = {
    custody: options.custody,
    kind: options.kind,
    owner: options.owner,
    acknowledged: options.acknowledged,
    treasury_limits: await treasuryLimitsOf(ctx, options.treasuryLimit),
    reference: referenceOf(options.reference),
  };
  const decided = await submit(ctx, '/v1/accounts', body, options);
  const account = decided?.result?.account;
  if (saveAs !== undefined && typeof account === 'string') ctx.out.note(`saved ${account} as ${saveAs} in profile ${await ctx.saveAccount(saveAs, account)}`);
}

async function treasuryLimitsOf(ctx: Context, limits: Record<string, string> | undefined): Promise<Record<string, string> | undefined> {
  if (limits === undefined) return undefined;
  const minor: Record<string, string> = {};
  for (const [asset, text] of Object.entries(limits)) minor[asset] = await amountMinorOf(ctx, `--treasury-limit ${asset}`, text, asset);
  return minor;
}
