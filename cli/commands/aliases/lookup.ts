import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';

export interface LookupOptions {
  source: string;
  name: string;
}

export function buildLookup(parent: Command, make: MakeContext): Command {
  return parent
    .command('lookup')
    .description('find the account an alias names (GET /v1/aliases)')
    .requiredOption('--source <source>', "the alias's source system (ledger for the built-in treasury aliases)")
    .requiredOption('--name <name>', 'the alias, for example treasury:USD')
    .action(action(make, runLookup));
}

export async function runLookup(ctx: Context, options: LookupOptions): Promise<void> {
  const found = await ctx.client().get<{ account: string }>('/v1/aliases', { source: options.source, name: options.name });
  ctx.out.result(found, () => found.account);
}
