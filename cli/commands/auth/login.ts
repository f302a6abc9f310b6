import type { Command } from 'commander';
import type { Challenge, Session, Whoami } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { LedgerClient } from '../../client.js';
import { details, time } from '../../output.js';
import { withApiKeyToken, withSessionToken } from '../../profiles.js';

export interface LoginOptions {
  apiKey?: string;
  /** The credential the profile's passkey was registered as by someone else (ops members prepare). */
  credential?: string;
}

export function buildLogin(parent: Command, make: MakeContext): Command {
  return parent
    .command('login')
    .description("sign in with the profile's software passkey (POST /v1/auth/passkey), or keep an API key, as the profile's token")
    .option('--api-key <key>', 'sign in with this API key instead (checked with GET /v1/whoami)')
    .option('--credential <credential>', "the credential the profile's passkey was added as by someone else (ops members prepare; ops members list names it), kept from then on")
    .action(action(make, runLogin));
}

/** Signs in and keeps the token in the profile's secrets; the token itself is never printed. */
export async function runLogin(ctx: Context, options: LoginOptions): Promise<void> {
  const profileName = await ctx.profileName();
  const profiles = await ctx.profiles();
  if (options.apiKey !== undefined && options.credential !== undefined) throw new UsageError('--credential names a passkey: not with --api-key');
  const signedIn = options.apiKey === undefined ? await withPasskey(ctx, profileName, options.credential) : await withApiKey(ctx, options.apiKey);
  if (profiles.get(profileName) === undefined) profiles.put(profileName, await ctx.profile());
  const before = profiles.secretsOf(profileName);
  // A session never silently replaces the profile's API key: the key is kept aside for when the session ends.
  profiles.updateSecrets(profileName, (s) => (signedIn.expiresAt === null ? withApiKeyToken(s, signedIn.token) : withSessionToken(s, signedIn.token, signedIn.expiresAt)));
  const keptApiKey = signedIn.expiresAt !== null && profiles.secretsOf(profileName).apiKey !== undefined && before.apiKey === undefined;
  if (keptApiKey) ctx.out.note(`the profile's API key is kept: it is the token again once the session expires or after ledgerctl auth logout`);
  const shown = { profile: profileName, principal: signedIn.principal, credential: signedIn.credential, expires_at: signedIn.expiresAt };
  ctx.out.result(shown, () => details({ ...shown, expires_at: signedIn.expiresAt === null ? 'never (API key)' : time(signedIn.expiresAt) }));
}

interface SignedIn {
  token: string;
  principal: string;
  credential: string;
  expiresAt: number | null;
}

async function withPasskey(ctx: Context, profileName: string, named: string | undefined): Promise<SignedIn> {
  const profiles = await ctx.profiles();
  const passkey = profiles.secretsOf(profileName).passkey;
  if (passkey === undefined) throw new UsageError(`profile ${profileName} holds no passkey (ledgerctl credentials register --scheme webauthn-es256), or use --api-key`);
  const credential = passkey.credential ?? named;
  if (credential === undefined) throw new UsageError(`profile ${profileName}'s passkey was prepared, not registered here: name the credential it was added as (--credential)`);
  if (named !== undefined && named !== credential) throw new UsageError(`profile ${profileName}'s passkey is ${credential}, not ${named}`);
  const [{ assertion }, challenge] = await Promise.all([import('../../passkey.js'), ctx.client().post<Challenge>('/v1/auth/challenge', { purpose: 'authenticate' })]);
  const signCount = passkey.signCount + 1;
  // The counter is kept before it is used: a crash after signing never reuses it.
  profiles.updateSecrets(profileName, (s) => ({ ...s, passkey: { ...passkey, signCount } }));
  const session = await ctx.client().post<Session>('/v1/auth/passkey', { assertion: assertion(passkey, challenge.challenge, signCount), credential });
  // A prepared passkey is named once it signed in as that credential.
  if (passkey.credential === null) profiles.updateSecrets(profileName, (s) => ({ ...s, passkey: { ...s.passkey!, credential: session.credential } }));
  return { token: session.session, principal: session.principal, credential: session.credential, expiresAt: session.expires_at };
}

async function withApiKey(ctx: Context, apiKey: string): Promise<SignedIn> {
  const client = new LedgerClient(ctx.client().baseUrl.href, apiKey, ctx.timeoutMs, ctx.client().deadlineAtMs);
  try {
    const who = await client.get<Whoami>('/v1/whoami');
    return { token: apiKey, principal: who.principal, credential: who.credential, expiresAt: who.expires_at };
  } finally {
    await client.close();
  }
}
