import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';

export function buildUse(parent: Command, make: MakeContext): Command {
  return parent.command('use').description('make a profile the active one').argument('<name>', 'a saved profile').action(action(make, runUse));
}

export async function runUse(ctx: Context, name: string): Promise<void> {
  (await ctx.profiles()).use(name);
  ctx.out.note(`active profile: ${name}`);
}
