import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { type EnrolFlags, enrol, withEnrolFlags } from '../../enrol.js';
import { accountsOf } from '../../names.js';
import { list } from '../../parse.js';

export interface RegisterOptions extends EnrolFlags {
  scope?: string[];
}

export function buildRegister(parent: Command, make: MakeContext): Command {
  return withEnrolFlags(
    parent
      .command('register')
      .description('add a credential to your set, or with --on-behalf-of to an identity\'s set (POST /v1/credentials)')
      .option('--scope <accounts>', 'limit it to these accounts (comma-separated or repeated)', list),
    'keep its secret in this profile (default: the one in use)',
  ).action(action(make, runRegister));
}

export async function runRegister(ctx: Context, options: RegisterOptions): Promise<void> {
  const scope = await accountsOf(ctx, '--scope', options.scope);
  const body = (fields: Record<string, unknown>) => ({ marker: 'ordinary', ...fields, scope });
  await enrol(ctx, { path: '/v1/credentials', challengeIdentity: options.onBehalfOf, body }, options);
}
