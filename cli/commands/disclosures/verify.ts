import type { Command } from 'commander';
import { verifyDisclosure } from '../../../src/disclosures/verify.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { CliError, UsageError, exitCodes } from '../../errors.js';
import { inlineOrFile, readCheckpointsFile } from '../../verifiable.js';

export interface VerifyOptions {
  offline?: boolean;
  clerkKey?: string;
  checkpoints?: string;
}

export function buildVerify(parent: Command, make: MakeContext): Command {
  return parent
    .command('verify')
    .description("check a disclosure: with the service (POST /v1/disclosures/verify), or --offline from the clerk's key and a checkpoints file, with no service at all; exits 1 unless every check holds")
    .argument('<disclosure>', 'the disclosure, hex or @file')
    .option('--offline', 'verify here, trusting only --clerk-key and --checkpoints')
    .option('--clerk-key <hex>', "the clerk's ed25519 public key, hex or @file (DIR/clerk.pub, GET /v1/clerk)")
    .option('--checkpoints <file>', 'a file written by ledgerctl checkpoints export')
    .action(action(make, runVerify));
}

export async function runVerify(ctx: Context, text: string, options: VerifyOptions): Promise<void> {
  const disclosure = await inlineOrFile('<disclosure>', text);
  let verification: { passed: boolean; report: string };
  if (options.offline === true) {
    if (options.clerkKey === undefined || options.checkpoints === undefined) throw new UsageError('--offline needs --clerk-key and --checkpoints');
    const clerkKey = await inlineOrFile('--clerk-key', options.clerkKey);
    if (!/^[0-9a-f]{64}$/.test(clerkKey)) throw new UsageError('--clerk-key must be 32 bytes of lowercase hex');
    const file = await readCheckpointsFile(options.checkpoints);
    const final = new Map(file.checkpoints.filter((c) => c.status === 'final').map((c) => [c.number, c]));
    verification = await verifyDisclosure(disclosure, { clerkPublicKeyHex: clerkKey, instance: file.instance, finalCheckpoint: (n) => final.get(n) });
  } else {
    if (options.clerkKey !== undefined || options.checkpoints !== undefined) throw new UsageError('--clerk-key and --checkpoints go with --offline');
    verification = await ctx.client().post<{ passed: boolean; report: string }>('/v1/disclosures/verify', { disclosure });
  }
  ctx.out.result(verification, () => `${verification.report}\n${verification.passed ? 'passed' : 'FAILED'}`);
  if (!verification.passed) throw new CliError('the disclosure did not verify', exitCodes.refused);
}
