import type { Command } from 'commander';
import type { Asset } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { show, table } from '../../output.js';

export function buildList(parent: Command, make: MakeContext): Command {
  return parent.command('list').description('list the registered assets (GET /v1/assets)').action(action(make, runList));
}

export async function runList(ctx: Context): Promise<void> {
  const assets = await ctx.client().get<Asset[]>('/v1/assets');
  await ctx.rememberAssets(assets.map((a) => a.id));
  ctx.out.result(assets, () =>
    table(
      [
        { header: 'ASSET', value: (a: Asset) => a.id },
        { header: 'KIND', value: (a) => a.kind },
        { header: 'PRECISION', value: (a) => String(a.precision), alignRight: true },
        { header: 'STATUS', value: (a) => a.status },
        { header: 'BINDING', value: (a) => a.binding },
        { header: 'LOCATION', value: (a) => show(a.location) },
      ],
      assets,
    ),
  );
}
