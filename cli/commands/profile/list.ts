import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { table } from '../../output.js';

export interface ProfileRow {
  name: string;
  active: boolean;
  url: string;
  signed_in: boolean;
}

export function buildList(parent: Command, make: MakeContext): Command {
  return parent.command('list').description('list saved profiles').action(action(make, runList));
}

export async function runList(ctx: Context): Promise<void> {
  const profiles = await ctx.profiles();
  const rows: ProfileRow[] = profiles.names().map((name) => ({
    name,
    active: profiles.active === name,
    url: profiles.get(name)!.url,
    signed_in: profiles.secretsOf(name).token !== undefined,
  }));
  ctx.out.result(rows, () =>
    table(
      [
        { header: '', value: (r: ProfileRow) => (r.active ? '*' : '') },
        { header: 'NAME', value: (r) => r.name },
        { header: 'URL', value: (r) => r.url },
        { header: 'TOKEN', value: (r) => (r.signed_in ? 'yes' : 'no') },
      ],
      rows,
    ),
  );
}
