/**
 * The operator's listings of the whole book (GET /v1/ops/identities, accounts, operations,
 * reservations, grants; docs/api.md, Operator listings), as `identities list`, `accounts list`
 * without `--owner`, `operations list`, `reservations list` and `grants list` without a subject
 * show them: paged like every listing (pages.ts), a table on terminals, the page as served otherwise.
 * A filtered page may hold no items and still have `next` (the service bounds what a page reads),
 * so `--all` follows `next` to its end.
 */
import type { Command } from 'commander';
import type { Query } from './client.js';
import type { Context } from './context.js';
import { opsPagesMax } from './limits.js';
import { type AmountText, Money } from './money.js';
import { type Column, table } from './output.js';
import { type PageOptions, listPages } from './pages.js';

export interface OpsPage<Item> {
  items: Item[];
  next?: string;
  view: number;
}

/** Columns of a listing's table; those that show amounts are given how to write one. */
export type OpsColumns<Item> = readonly Column<Item>[] | ((amount: AmountText) => readonly Column<Item>[]);

export async function listOps<Item>(ctx: Context, options: PageOptions, listing: string, filters: Query, columns: OpsColumns<Item>): Promise<void> {
  const shown = typeof columns === 'function' ? columns(await Money.forPeople(ctx.out.machine, ctx.client())) : columns;
  await listPages(ctx, options, {
    read: (cursor) => ctx.client().get<OpsPage<Item>>(`/v1/ops/${listing}`, { ...filters, limit: options.limit, cursor }),
    items: (page) => page.items,
    show: async (page, header) => ctx.out.result(page, () => table(shown, page.items, header)),
    pagesMax: opsPagesMax,
  });
}

/** The `--limit`, `--cursor` and `--all` of an operator listing of `nouns`. */
export function withPageFlags(command: Command, noun: string, nouns = `${noun}s`): Command {
  return command
    .option('--limit <n>', `${nouns} per page, 1..1000 (the service's 100 when not given)`)
    .option('--cursor <hex>', "continue from a page's next")
    .option('--all', `follow next to the end (with --json: one ${noun} per line)`);
}
