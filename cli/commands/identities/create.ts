import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { type EnrolFlags, enrol, schemeOf, withEnrolFlags } from '../../enrol.js';
import { UsageError } from '../../errors.js';
import { referenceOf, withReference } from '../../submit.js';

export interface CreateOptions extends EnrolFlags {
  reference?: string;
}

export function buildIdentityCreate(parent: Command, make: MakeContext): Command {
  return withEnrolFlags(
    withReference(parent.command('create').description('create an identity with its first credential (identities principal; POST /v1/identities)')),
    "keep the new identity's secret in this profile (required for key and webauthn-es256; with api-key it becomes the profile's token)",
  ).action(action(make, runCreate));
}

export async function runCreate(ctx: Context, options: CreateOptions): Promise<void> {
  const scheme = schemeOf(options.scheme);
  // The secret belongs to the new identity, not to the identities principal whose profile is in use.
  if (options.saveAs === undefined && scheme !== 'api-key') throw new UsageError(`--scheme ${scheme} needs --save-as PROFILE to keep the new identity's secret`);
  const body = (fields: Record<string, unknown>) => ({ ...fields, reference: referenceOf(options.reference) });
  await enrol(ctx, { path: '/v1/identities', challengeIdentity: undefined, body }, options);
}
