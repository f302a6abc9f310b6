import type { Command } from 'commander';
import type { Challenge } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { details, time } from '../../output.js';

export interface ChallengeOptions {
  purpose: string;
  identity?: string;
}

export function buildChallenge(parent: Command, make: MakeContext): Command {
  return parent
    .command('challenge')
    .description('ask for a ceremony challenge (POST /v1/auth/challenge; no token needed)')
    .option('--purpose <purpose>', 'authenticate (sign-in) or register', 'authenticate')
    .option('--identity <identity>', 'register only: the identity whose set the registration goes into')
    .action(action(make, runChallenge));
}

export async function runChallenge(ctx: Context, options: ChallengeOptions): Promise<void> {
  const challenge = await ctx.client().post<Challenge>('/v1/auth/challenge', { purpose: options.purpose, identity: options.identity });
  ctx.out.result(challenge, () => details({ challenge: challenge.challenge, expires: time(challenge.expires_at) }));
}
