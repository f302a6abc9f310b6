/**
 * `custody changes open|cancel|complete|accept` (CONTRACT 8): recoveries (opened by the
 * account's recovery authority, sweeping into `--to`, completed by it) and successions (opened
 * by the owner, accepted by the new owner, who completes them: nobody is handed an account
 * unasked), once their delay has passed. The custody view (`accounts custody`) tells the whole story.
 */
import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { accountOf, optionalAccountOf } from '../../names.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';

interface OpenOptions extends SubmitFlags {
  kind: string;
  newOwner: string;
  to?: string;
}

export function buildChanges(parent: Command, make: MakeContext): Command {
  const changes = parent.command('changes').description('pending recoveries and successions of an account');
  withSubmitFlags(
    changes
      .command('open')
      .description('open a recovery or a succession (POST /v1/accounts/{account}/custody/changes)')
      .argument('<account>', 'did:ledger:acct:<id>, a saved name or a ledger alias')
      .requiredOption('--kind <kind>', 'recovery (the recovery authority) or succession (the owner)')
      .requiredOption('--new-owner <identity>', 'who owns the account, or its value, once the change completes')
      .option('--to <account>', "recovery: the new owner's account that receives the sweep"),
  ).action(
    action(make, async (ctx: Context, name: string, options: OpenOptions) => {
      if (options.kind !== 'recovery' && options.kind !== 'succession') throw new UsageError(`--kind must be recovery or succession, not ${options.kind}`);
      const account = await accountOf(ctx, 'account', name);
      const to = await optionalAccountOf(ctx, '--to', options.to);
      await submit(ctx, `/v1/accounts/${encodeURIComponent(account)}/custody/changes`, { kind: options.kind, new_owner: options.newOwner, to }, options);
    }),
  );
  // `accept` is `complete` by its other name: what the new owner of a succession does.
  for (const [verb, route, description] of [
    ['cancel', 'cancel', 'cancel a pending change (the owner, or whoever opened it)'],
    ['complete', 'complete', 'complete a pending change once its effective_at has passed (a recovery: whoever opened it; a succession: its new owner)'],
    ['accept', 'complete', 'accept a succession handed to you: complete it, as its new owner, once its effective_at has passed'],
  ] as const) {
    withSubmitFlags(
      changes
        .command(verb)
        .description(`${description} (POST /v1/accounts/{account}/custody/changes/{pending}/${route})`)
        .argument('<account>', 'did:ledger:acct:<id>, a saved name or a ledger alias')
        .argument('<pending>', 'the operation reference that opened the change'),
    ).action(
      action(make, async (ctx: Context, name: string, pending: string, options: SubmitFlags) => {
        const account = await accountOf(ctx, 'account', name);
        await submit(ctx, `/v1/accounts/${encodeURIComponent(account)}/custody/changes/${encodeURIComponent(pending)}/${route}`, {}, options);
      }),
    );
  }
  return changes;
}
