import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { checkpointPagesMax } from '../../limits.js';
import { type Column, table, time } from '../../output.js';
import { listPages } from '../../pages.js';
import { integer } from '../../parse.js';
import type { CheckpointPage, CheckpointView } from '../../verifiable.js';

export interface ListOptions {
  limit?: string;
  before?: string;
  all?: boolean;
}

export function buildList(parent: Command, make: MakeContext): Command {
  return parent
    .command('list')
    .description('checkpoints, newest first (GET /v1/checkpoints)')
    .option('--limit <n>', 'checkpoints per page, 1..1000 (default 100)')
    .option('--before <number>', 'only checkpoints numbered below this (a page\'s next)')
    .option('--all', 'follow every page, one checkpoint per line for programs')
    .action(action(make, runList));
}

export const checkpointColumns: Column<CheckpointView>[] = [
  { header: 'NUMBER', value: (c: CheckpointView) => String(c.number), alignRight: true },
  { header: 'STATUS', value: (c: CheckpointView) => c.status },
  { header: 'ENTRIES', value: (c: CheckpointView) => String(c.entry_sequence), alignRight: true },
  { header: 'CREATED', value: (c: CheckpointView) => time(c.created_at) },
  { header: 'COMMITMENT', value: (c: CheckpointView) => c.commitment },
];

export async function runList(ctx: Context, options: ListOptions): Promise<void> {
  const limit = options.limit === undefined ? undefined : integer('--limit', options.limit, 1, 1000);
  if (options.before !== undefined) integer('--before', options.before, 0, Number.MAX_SAFE_INTEGER);
  type Page = { items: CheckpointView[]; next?: string };
  await listPages<Page, CheckpointView>(ctx, { cursor: options.before, all: options.all }, {
    read: async (before) => {
      const page = await ctx.client().get<CheckpointPage>('/v1/checkpoints', { limit, before });
      return { items: page.items, next: page.next === undefined ? undefined : String(page.next) };
    },
    items: (page) => page.items,
    show: async (page, header) => ctx.out.result(page, () => table(checkpointColumns, page.items, header)),
    pagesMax: checkpointPagesMax,
  });
}
