import type { Command } from 'commander';
import type { Whoami } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { details, time } from '../../output.js';

export function buildWhoami(parent: Command, make: MakeContext): Command {
  return parent.command('whoami').description('who the token in use signs in as (GET /v1/whoami)').action(action(make, runWhoami));
}

export async function runWhoami(ctx: Context): Promise<void> {
  const who = await ctx.client().get<Whoami>('/v1/whoami');
  ctx.out.result(who, () => details({ ...who, expires_at: who.expires_at === null ? 'never (API key)' : time(who.expires_at) }));
}
