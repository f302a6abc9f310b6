import type { Command } from 'commander';
import type { PartiesListing } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { table, time } from '../../output.js';

type Item = PartiesListing['items'][number];

export function buildParties(parent: Command, make: MakeContext): Command {
  return parent.command('parties').description('integrating parties and their principals (operator; GET /v1/ops/integrating-parties)').action(action(make, runParties));
}

export async function runParties(ctx: Context): Promise<void> {
  const listing = await ctx.client().get<PartiesListing>('/v1/ops/integrating-parties');
  ctx.out.result(listing, () =>
    table(
      [
        { header: 'PARTY', value: (p: Item) => p.party },
        { header: 'REGISTERED', value: (p) => time(p.registered_at) },
        { header: 'PRINCIPALS', value: (p) => p.principals.map((x) => x.principal).join(', ') },
      ],
      listing.items,
    ),
  );
}
