/**
 * `accounts reclaim ACCOUNT` (spec endpoint 4, CONTRACT 5 and 8): shows the recovery
 * mechanisms the account would keep, asks to acknowledge them on a terminal (`--yes` for
 * scripts), then proves the holder's control: an ed25519 signature over
 * `ledger-reclaim:v1:<account>:<epoch>` with a key of the profile, or an assertion of the
 * profile's software passkey over a fresh `authenticate` challenge.
 */
import { createPrivateKey, sign } from 'node:crypto';
import type { Command } from 'commander';
import type { Challenge } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { isTerminal } from '../../io.js';
import { accountOf } from '../../names.js';
import { safeLines } from '../../safe.js';
import type { KeyCredential, SoftwarePasskey } from '../../profiles.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';
import type { CustodyView } from './custody.js';
import { type Mechanisms, mechanismsText } from './recovery-mechanisms.js';

export interface ReclaimOptions extends SubmitFlags {
  credential?: string;
  yes?: boolean;
}

export function buildReclaim(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    parent
      .command('reclaim')
      .description('take an account into owned custody, proving control with a key or the passkey of the profile (POST /v1/accounts/{account}/custody/reclaim)')
      .argument('<account>', 'did:ledger:acct:<id>, a saved name or a ledger alias')
      .option('--credential <credential>', "the profile's key credential (did:ledger:cred:<id>) or passkey to prove with (default: its only key, else its passkey)")
      .option('--yes', 'acknowledge the recovery mechanisms without asking (scripts)'),
  ).action(action(make, runReclaim));
}

type Prover = { credential: string; key: KeyCredential } | { credential: string; passkey: SoftwarePasskey };

/** The profile credential to prove with: the one named, else its only key, else its registered passkey. */
async function proverOf(ctx: Context, named: string | undefined): Promise<Prover> {
  const profileName = await ctx.profileName();
  const secrets = (await ctx.profiles()).secretsOf(profileName);
  const keys = Object.entries(secrets.keys ?? {});
  const passkey = secrets.passkey?.credential ? secrets.passkey : undefined;
  if (named !== undefined) {
    const key = secrets.keys?.[named];
    if (key !== undefined) return { credential: named, key };
    if (passkey?.credential === named) return { credential: named, passkey };
    throw new UsageError(`profile ${profileName} holds no key or passkey ${named}`);
  }
  if (keys.length === 1) return { credential: keys[0]![0], key: keys[0]![1] };
  if (keys.length > 1) throw new UsageError(`profile ${profileName} holds ${keys.length} keys: name one with --credential`);
  if (passkey !== undefined) return { credential: passkey.credential!, passkey };
  throw new UsageError(`profile ${profileName} holds no key or registered passkey (ledgerctl credentials register --scheme key or webauthn-es256)`);
}

/** On a terminal: shows the mechanisms and asks. Elsewhere `--yes` must say it: an acknowledgement is never implied. */
async function acknowledge(ctx: Context, account: string, mechanisms: Mechanisms, yes: boolean): Promise<void> {
  if (yes) return;
  if (!isTerminal(ctx.io.stdin) || !isTerminal(ctx.io.stderr)) throw new UsageError('reclaiming acknowledges the recovery mechanisms: pass --yes (after reading them with ledgerctl accounts recovery-mechanisms), or run it on a terminal');
  // Served text reaches the terminal escaped, like every other (cli/safe.ts).
  ctx.io.stderr.write(safeLines(`Reclaiming ${account} into owned custody. The account keeps these recovery mechanisms:\n${mechanismsText(mechanisms)}\n`));
  // Loaded only to ask: every other call of `accounts` starts without readline.
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: ctx.io.stdin, output: ctx.io.stderr });
  try {
    const answer = await rl.question('Acknowledge them and reclaim? [y/N] ');
    if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError('not acknowledged: nothing was sent');
  } finally {
    rl.close();
  }
}

export async function runReclaim(ctx: Context, name: string, options: ReclaimOptions): Promise<void> {
  const account = await accountOf(ctx, 'account', name);
  const path = `/v1/accounts/${encodeURIComponent(account)}/custody/reclaim`;
  const profiles = await ctx.profiles();
  const profileName = await ctx.profileName();
  // A retry under --client-key resends the very request it sent (the epoch it signed has moved on since).
  const sent = options.clientKey === undefined ? undefined : profiles.secretsOf(profileName).sent?.[options.clientKey];
  const body = sent?.fields ?? (await reclaimBody(ctx, account, options));
  if (options.clientKey !== undefined && sent === undefined) profiles.updateSecrets(profileName, (s) => ({ ...s, sent: { ...s.sent, [options.clientKey!]: { fields: body, secret: null } } }));
  await submit(ctx, path, body, options);
}

/** The reclaim request: the mechanisms acknowledged, then the proof over the account's epoch as the custody view shows it. */
async function reclaimBody(ctx: Context, account: string, options: ReclaimOptions): Promise<Record<string, unknown>> {
  const prover = await proverOf(ctx, options.credential);
  const path = `/v1/accounts/${encodeURIComponent(account)}`;
  const [custody, mechanisms] = await Promise.all([ctx.client().get<CustodyView>(`${path}/custody`), ctx.client().get<Mechanisms>(`${path}/recovery-mechanisms`)]);
  await acknowledge(ctx, account, mechanisms, options.yes === true);
  const body: Record<string, unknown> = { proof_credential: prover.credential, acknowledged: mechanisms.digest };
  if ('key' in prover) {
    const message = Buffer.from(`ledger-reclaim:v1:${account}:${custody.epoch}`, 'utf8');
    body.signature = sign(null, message, createPrivateKey(prover.key.privateKeyPem)).toString('hex');
    return body;
  }
  const [{ assertion }, challenge] = await Promise.all([import('../../passkey.js'), ctx.client().post<Challenge>('/v1/auth/challenge', { purpose: 'authenticate' })]);
  const profiles = await ctx.profiles();
  const profileName = await ctx.profileName();
  const signCount = prover.passkey.signCount + 1;
  // The counter is kept before it is used: a crash after signing never reuses it.
  profiles.updateSecrets(profileName, (s) => ({ ...s, passkey: { ...prover.passkey, signCount } }));
  body.assertion = assertion(prover.passkey, challenge.challenge, signCount);
  return body;
}
