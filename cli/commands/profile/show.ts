import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { details } from '../../output.js';

export function buildShow(parent: Command, make: MakeContext): Command {
  return parent
    .command('show')
    .description('show a profile (secrets are never printed, only whether they are held)')
    .argument('[name]', 'a saved profile; the one in use when absent')
    .action(action(make, runShow));
}

export async function runShow(ctx: Context, name: string | undefined): Promise<void> {
  const profiles = await ctx.profiles();
  const profileName = name ?? (await ctx.profileName());
  const profile = profiles.get(profileName);
  if (profile === undefined) throw new UsageError(`no profile named ${profileName} (see: ledgerctl profile add)`);
  const secrets = profiles.secretsOf(profileName);
  const view = {
    name: profileName,
    active: profiles.active === profileName,
    ...profile,
    token: secrets.token !== undefined,
    key_credentials: Object.keys(secrets.keys ?? {}),
    passkey: secrets.passkey?.credential ?? (secrets.passkey === undefined ? null : 'registered, not yet decided'),
    secrets_file: profiles.paths.secrets,
  };
  ctx.out.result(view, () => details(view));
}
