/**
 * Making a credential and registering it (`credentials register`, `identities create`): the key
 * pair or software passkey is made here and its secret kept in a profile's 0600 secrets file; an
 * API key is printed once.
 */
import { generateKeyPairSync } from 'node:crypto';
import type { Command } from 'commander';
import type { Challenge, CommandReply, OperationView } from './api.js';
import type { Context } from './context.js';
import { CliError, UsageError, exitCodes } from './errors.js';
import { details } from './output.js';
import { type KeyCredential, type ProfileSecrets, type SoftwarePasskey, withApiKeyToken } from './profiles.js';
import { type SubmitFlags, decisionOf, send, withSubmitFlags } from './submit.js';
import { failureOf } from './wait.js';

export const schemes = ['key', 'webauthn-es256', 'api-key'] as const;
export type Scheme = (typeof schemes)[number];

export function schemeOf(text: string): Scheme {
  if (!(schemes as readonly string[]).includes(text)) throw new UsageError(`--scheme must be one of ${schemes.join(', ')}: ${text}`);
  return text as Scheme;
}

/** The scheme's fields of the request body, and the secret to keep once the credential has its name. */
export interface Material {
  fields: Record<string, unknown>;
  secret: KeyCredential | SoftwarePasskey | null;
}

async function materialFor(ctx: Context, scheme: Scheme, challengeIdentity: string | undefined): Promise<Material> {
  if (scheme === 'api-key') return { fields: { scheme }, secret: null };
  if (scheme === 'key') {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const publicKeyHex = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');
    const privateKeyPem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    return { fields: { scheme, verifier: publicKeyHex }, secret: { scheme, privateKeyPem, publicKeyHex } };
  }
  const { registerByMs: _registerBy, ...material } = await passkeyMaterial(ctx, challengeIdentity);
  return material;
}

/** A new software passkey's registration, over a register challenge that serves until `registerByMs`. */
export async function passkeyMaterial(ctx: Context, challengeIdentity: string | undefined): Promise<Material & { secret: SoftwarePasskey; registerByMs: number }> {
  // The WebAuthn encoder is loaded only for passkeys: it costs more than the rest of a run.
  const [{ createPasskey, registration }, profile] = await Promise.all([import('./passkey.js'), ctx.profile()]);
  const passkey = createPasskey(profile.rpId, profile.origin);
  const challenge = await ctx.client().post<Challenge>('/v1/auth/challenge', { purpose: 'register', identity: challengeIdentity });
  return { fields: { scheme: 'webauthn-es256', passkey: registration(passkey, challenge.challenge) }, secret: passkey, registerByMs: challenge.expires_at };
}

export interface EnrolFlags extends SubmitFlags {
  scheme: string;
  saveAs?: string;
}

export function withEnrolFlags(command: Command, saveAs: string): Command {
  return withSubmitFlags(
    command
      .option('--scheme <scheme>', 'key (an ed25519 key pair made here), webauthn-es256 (the software passkey) or api-key (printed once)', 'key')
      .option('--save-as <profile>', saveAs),
  );
}

export interface Enrolment {
  path: string;
  /** The register challenge's identity, for a passkey registered into another identity's set. */
  challengeIdentity: string | undefined;
  /** The request body around the scheme's fields. */
  body: (fields: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * Makes the credential, submits the registration, waits for its decision, keeps the secret under
 * the credential's name in the `saveAs` profile, and prints the outcome (an API key exactly once,
 * from its deciding reply). Under `--client-key` the material is kept with the key, so a retry
 * sends the very same request instead of a new key the service would refuse (ERR-ClientKeyReused).
 */
export async function enrol(ctx: Context, enrolment: Enrolment, flags: EnrolFlags): Promise<void> {
  const scheme = schemeOf(flags.scheme);
  const saveAs = flags.saveAs ?? (await ctx.profileName());
  const profiles = await ctx.profiles();
  const profile = await ctx.profile();
  // Secrets go into a saved profile: the one named is created (with this connection) on first use.
  const update = (change: (current: ProfileSecrets) => ProfileSecrets) => {
    if (profiles.get(saveAs) === undefined) profiles.put(saveAs, profile);
    profiles.updateSecrets(saveAs, change);
  };
  // Made before the request: a key or passkey sent under it is kept by it, for a retry to resend.
  const clientKey = ctx.clientKey(flags.clientKey);
  const material = profiles.secretsOf(saveAs).sent?.[clientKey] ?? (await materialFor(ctx, scheme, enrolment.challengeIdentity));
  if (material.secret !== null) update((s) => ({ ...s, sent: { ...s.sent, [clientKey]: material } }));
  const path = enrolment.path;
  const body = enrolment.body(material.fields);
  const reply = await send(ctx, path, body, flags);
  // A credential is kept only once it is named, so registration always waits, whatever --no-wait says.
  const view = await decisionOf(ctx, reply, flags);
  const failure = failureOf(view);
  if (failure !== null) throw failure;
  // The API key is on the first terminal reply under the client key: the acknowledgement if it was, else this repeat.
  const deciding = reply.terminal ? reply : await send(ctx, path, body, flags, true);
  const credential = view.result?.credential ?? null;
  if (credential === null) throw new CliError(`${view.operation_reference} was decided without naming a credential`, exitCodes.refused);
  // An API key becomes a profile's token only where asked (`--save-as`); otherwise it is only printed.
  const apiKey = flags.saveAs === undefined ? null : (deciding.api_key ?? null);
  if (material.secret !== null || apiKey !== null) update((current) => kept(current, credential, material.secret, apiKey));
  printEnrolment(ctx, view, deciding, saveAs);
}

function kept(current: ProfileSecrets, credential: string, secret: Material['secret'], apiKey: string | null): ProfileSecrets {
  const next: ProfileSecrets = apiKey === null ? { ...current } : withApiKeyToken(current, apiKey);
  if (secret?.scheme === 'key') next.keys = { ...current.keys, [credential]: secret };
  // A retry must not wind back the counter of a passkey already signing.
  if (secret?.scheme === 'webauthn-es256' && current.passkey?.rawId !== secret.rawId) next.passkey = { ...secret, credential };
  return next;
}

function printEnrolment(ctx: Context, view: OperationView, deciding: CommandReply, saveAs: string): void {
  const result = { ...view, api_key: deciding.api_key ?? null };
  ctx.out.result(result, () =>
    details({
      operation: view.operation_reference,
      state: view.state,
      identity: view.result?.identity ?? undefined,
      credential: view.result?.credential ?? undefined,
      'kept in profile': saveAs,
      'api key': deciding.api_key === undefined || deciding.api_key === null ? undefined : `${deciding.api_key}  (shown once: store it now)`,
    }),
  );
}
