import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { withoutSession } from '../../profiles.js';

export function buildLogout(parent: Command, make: MakeContext): Command {
  return parent.command('logout').description("forget the profile's token (keys and the passkey stay; an API key kept aside by a passkey sign-in is the token again)").action(action(make, runLogout));
}

export async function runLogout(ctx: Context): Promise<void> {
  const profileName = await ctx.profileName();
  const profiles = await ctx.profiles();
  const keptApiKey = profiles.secretsOf(profileName).apiKey !== undefined;
  profiles.updateSecrets(profileName, withoutSession);
  ctx.out.note(keptApiKey ? `signed out of the session of profile ${profileName}; its API key is its token again` : `signed out of profile ${profileName}`);
}
