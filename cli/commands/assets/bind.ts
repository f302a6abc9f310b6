import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { type SubmitFlags, withSubmitFlags } from '../../submit.js';
import { submitSettlement } from '../../settlement-print.js';

export function buildBind(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    parent
      .command('bind')
      .description('bind an asset to a location on the settlement layer: binding, then bound once attested in a final block (operator)')
      .argument('<asset>', 'its symbol')
      .requiredOption('--location <hex>', 'the location on the layer, 32 bytes hex'),
  ).action(action(make, runBind));
}

export async function runBind(ctx: Context, asset: string, options: SubmitFlags & { location: string }): Promise<void> {
  await submitSettlement(ctx, `/v1/ops/assets/${encodeURIComponent(asset)}/binding`, { location: options.location }, options);
}
