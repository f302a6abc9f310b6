import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { defaultOrigin, defaultRpId, defaultUrl, withApiKeyToken } from '../../profiles.js';

export interface AddOptions {
  rpId?: string;
  origin?: string;
  use?: boolean;
  force?: boolean;
}

export function buildAdd(parent: Command, make: MakeContext): Command {
  return parent
    .command('add')
    .description('save a profile: the service address from --url and, with --token, a token (kept in the 0600 secrets file)')
    .argument('<name>', 'the profile name, 1-64 of [A-Za-z0-9._-]')
    .option('--rp-id <id>', 'the relying-party id the software passkey signs for', defaultRpId)
    .option('--origin <origin>', 'the origin the software passkey signs for', defaultOrigin)
    .option('--use', 'make it the active profile')
    .option('--force', 'replace a profile of that name (its secrets are kept unless --token replaces the token)')
    .action(action(make, runAdd));
}

/** The global `--url` and `--token` name what the profile keeps (`$LEDGER_URL` is not saved). */
export async function runAdd(ctx: Context, name: string, options: AddOptions): Promise<void> {
  const profiles = await ctx.profiles();
  const token = ctx.globals.token;
  if (profiles.get(name) !== undefined && options.force !== true) throw new UsageError(`a profile named ${name} exists already; --force replaces it`);
  profiles.put(name, { url: ctx.globals.url ?? defaultUrl, rpId: options.rpId ?? defaultRpId, origin: options.origin ?? defaultOrigin });
  if (token !== undefined) profiles.updateSecrets(name, (s) => withApiKeyToken(s, token));
  if (options.use === true || profiles.active === undefined) profiles.use(name);
  ctx.out.note(`saved profile ${name}${profiles.active === name ? ' (active)' : ''}`);
}
