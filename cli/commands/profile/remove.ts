import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';

export function buildRemove(parent: Command, make: MakeContext): Command {
  return parent.command('remove').description('forget a saved profile and its secrets (tokens, keys, the passkey)').argument('<name>', 'a saved profile').action(action(make, runRemove));
}

export async function runRemove(ctx: Context, name: string): Promise<void> {
  (await ctx.profiles()).remove(name);
  ctx.out.note(`removed profile ${name}`);
}
