import { open, rename } from 'node:fs/promises';
import type { Command } from 'commander';
import { chainProblem } from '../../../src/checkpoints/verify-proofs.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { CliError, exitCodes } from '../../errors.js';
import { details } from '../../output.js';
import { type CheckpointsFile, type ClerkView, allCheckpoints } from '../../verifiable.js';

export interface ExportOptions {
  out: string;
}

export function buildExport(parent: Command, make: MakeContext): Command {
  return parent
    .command('export')
    .description("write the clerk's key and every checkpoint, chain checked, to a file that disclosures verify --offline trusts")
    .requiredOption('--out <file>', 'the file to write (written beside it and renamed in once whole)')
    .action(action(make, runExport));
}

export async function runExport(ctx: Context, options: ExportOptions): Promise<void> {
  const clerk = await ctx.client().get<ClerkView>('/v1/clerk');
  const checkpoints = await allCheckpoints(ctx);
  const problem = chainProblem(clerk.instance, checkpoints);
  if (problem !== null) throw new CliError(`the service's checkpoints do not chain: ${problem}`, exitCodes.refused);
  const file: CheckpointsFile = { format: 'ledger-checkpoints:v1', instance: clerk.instance, clerk: clerk.public_key, checkpoints };
  const temp = `${options.out}.partial`;
  const handle = await open(temp, 'w', 0o644);
  try {
    await handle.writeFile(`${JSON.stringify(file, null, 1)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, options.out);
  const final = checkpoints.filter((c) => c.status === 'final').length;
  const summary = { file: options.out, instance: clerk.instance, clerk: clerk.public_key, checkpoints: checkpoints.length, final };
  ctx.out.result(summary, () => details({ ...summary, checkpoints: String(checkpoints.length), final: String(final), instance: String(clerk.instance) }));
}
