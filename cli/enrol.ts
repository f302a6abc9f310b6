/**
 * Making a credential and registering it (`credentials register`, `identities create`): the key
 * pair or software passkey is made here and its secret kept in a profile's 0600 secrets file; an
 * API key is printed once.
 */
import { generateKeyPairSync } from 'node:crypto';
import type { Command } from 'commander';
import type { Challenge, CommandReply, OperationView } from './api.js';
import type { Context } from './context.js';
import { UsageError } from './errors.js';
import { details } from './output.js';
import { createPasskey, registration } from './passkey.js';
import type { KeyCredential, ProfileSecrets, SoftwarePasskey } from './profiles.js';
import { type SubmitFlags, decision, send, timeoutOf, withSubmitFlags } from './submit.js';
import { failureOf } from './wait.js';

export const schemes = ['key', 'webauthn-es256', 'api-key'] as const;
export type Scheme = (typeof schemes)[number];

export function schemeOf(text: string): Scheme {
  if (!(schemes as readonly string[]).includes(text)) throw new UsageError(`--scheme must be one of ${schemes.join(', ')}: ${text}`);
  return text as Scheme;
}

/** The scheme's fields of the request body, and the secret to keep once the credential has its name. */
interface Material {
  fields: Record<string, unknown>;
  secret: KeyCredential | SoftwarePasskey | null;
}

export async function materialFor(ctx: Context, scheme: Scheme, challengeIdentity: string | null): Promise<Material> {
  if (scheme === 'api-key') return { fields: { scheme }, secret: null };
  if (scheme === 'key') {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const publicKeyHex = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');
    const privateKeyPem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    return { fields: { scheme, verifier: publicKeyHex }, secret: { scheme, privateKeyPem, publicKeyHex } };
  }
  const profile = await ctx.profile();
  const passkey = createPasskey(profile.rpId, profile.origin);
  const challenge = await ctx.client().post<Challenge>('/v1/auth/challenge', { purpose: 'register', identity: challengeIdentity });
  return { fields: { scheme, passkey: registration(passkey, challenge.challenge) }, secret: passkey };
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

/**
 * Submits the registration, waits for its decision, keeps the secret under the credential's name
 * in the `saveAs` profile, and prints the outcome (an API key exactly once, from its deciding reply).
 */
export async function enrol(ctx: Context, path: string, body: Record<string, unknown>, material: Material, flags: EnrolFlags): Promise<void> {
  const saveAs = flags.saveAs ?? (await ctx.profileName());
  const reply = await send(ctx, path, body, flags);
  const view = await decision(ctx, reply.operation_reference, timeoutOf(flags));
  const failure = failureOf(view);
  if (failure !== null) throw failure;
  // The API key is on the first terminal reply under the client key: the acknowledgement if it was, else this repeat.
  const deciding = reply.terminal ? reply : await send(ctx, path, body, { ...flags, clientKey: reply.client_key });
  const credential = view.result?.credential ?? null;
  if (credential === null) throw new UsageError(`${view.operation_reference} decided without naming a credential`);
  // An API key becomes a profile's token only where asked (`--save-as`); otherwise it is only printed.
  await keep(ctx, saveAs, credential, material.secret, flags.saveAs === undefined ? null : (deciding.api_key ?? null));
  printEnrolment(ctx, view, deciding, saveAs);
}

async function keep(ctx: Context, saveAs: string, credential: string, secret: Material['secret'], apiKey: string | null): Promise<void> {
  if (secret === null && apiKey === null) return;
  const profiles = await ctx.profiles();
  if (profiles.get(saveAs) === undefined) profiles.put(saveAs, await ctx.profile());
  profiles.updateSecrets(saveAs, (current): ProfileSecrets => {
    if (secret?.scheme === 'key') return { ...current, keys: { ...current.keys, [credential]: secret } };
    if (secret?.scheme === 'webauthn-es256') return { ...current, passkey: { ...secret, credential } };
    return apiKey === null ? current : { ...current, token: apiKey };
  });
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
