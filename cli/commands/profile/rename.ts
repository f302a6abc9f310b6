import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';

export function buildRename(parent: Command, make: MakeContext): Command {
  return parent
    .command('rename')
    .description('rename a saved profile, its secrets with it')
    .argument('<name>', 'a saved profile')
    .argument('<new-name>', 'a name no profile has, 1-64 of [A-Za-z0-9._-]')
    .action(action(make, runRename));
}

export async function runRename(ctx: Context, name: string, newName: string): Promise<void> {
  (await ctx.profiles()).rename(name, newName);
  ctx.out.note(`renamed profile ${name} to ${newName}`);
}
