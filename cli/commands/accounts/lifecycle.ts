/** `accounts freeze|unfreeze|close` (CONTRACT 10). */
import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { accountOf } from '../../names.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';

interface LifecycleOptions extends SubmitFlags {
  justification?: string;
}

/** A verb on one account: POST /v1/accounts/{account}/<verb>, with a justification where the operator owes one. */
function lifecycleVerb(verb: 'freeze' | 'unfreeze' | 'close', description: string, justified: boolean) {
  return (parent: Command, make: MakeContext): Command => {
    const command = parent.command(verb).description(description).argument('<account>', 'did:ledger:acct:<id>, a saved name or a ledger alias');
    if (justified) command.requiredOption('--justification <text>', 'why: kept with the operation');
    return withSubmitFlags(command).action(
      action(make, async (ctx: Context, name: string, options: LifecycleOptions) => {
        const account = await accountOf(ctx, 'account', name);
        await submit(ctx, `/v1/accounts/${encodeURIComponent(account)}/${verb}`, justified ? { justification: options.justification } : {}, options);
      }),
    );
  };
}

export const buildFreeze = lifecycleVerb('freeze', 'freeze an account: neither debited nor credited until unfrozen (operator; POST /v1/accounts/{account}/freeze)', true);
export const buildUnfreeze = lifecycleVerb('unfreeze', 'unfreeze an account (operator; POST /v1/accounts/{account}/unfreeze)', true);
export const buildClose = lifecycleVerb('close', 'close an empty account for good (owner or operator; POST /v1/accounts/{account}/close)', false);
