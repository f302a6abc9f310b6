import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';

export function buildLogout(parent: Command, make: MakeContext): Command {
  return parent.command('logout').description("forget the profile's token (keys and the passkey stay)").action(action(make, runLogout));
}

export async function runLogout(ctx: Context): Promise<void> {
  const profileName = await ctx.profileName();
  (await ctx.profiles()).updateSecrets(profileName, ({ token: _forgotten, ...rest }) => rest);
  ctx.out.note(`signed out of profile ${profileName}`);
}
