import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';
import { type TermsFlags, termsOf, withAccountsResolved, withTermsFlags } from '../../terms.js';

export interface IssueOptions extends SubmitFlags, TermsFlags {}

export function buildIssue(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    withTermsFlags(parent.command('issue').description('delegate bounded authority: a delegated grant must carry --per-operation or --per-window-* (POST /v1/grants)')),
  ).action(action(make, runIssue));
}

export async function runIssue(ctx: Context, options: IssueOptions): Promise<void> {
  await submit(ctx, '/v1/grants', termsOf(await withAccountsResolved(ctx, options), 'delegated'), options);
}
