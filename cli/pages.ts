/**
 * Paged listings (`movements`, `accounts list`, `grants list`): one page, or with `--all` every
 * page by following `next`. Programs get the page as the API returned it, or with `--all` one item
 * per line; a terminal gets a table, and a page that has more ends saying how to read on.
 */
import type { Context } from './context.js';
import { CliError, exitCodes } from './errors.js';

export interface PageOptions {
  limit?: string;
  cursor?: string;
  all?: boolean;
}

export interface Listing<Page extends { next?: string }, Item> {
  /** Reads the page starting at `cursor` (the first without one). */
  read: (cursor: string | undefined) => Promise<Page>;
  items: (page: Page) => readonly Item[];
  /** Shows a page for people; `header` is false for the second and later pages of `--all`. */
  show: (page: Page, header: boolean) => Promise<void>;
  /** Pages `--all` follows before it stops: a cursor loop would otherwise never end. */
  pagesMax: number;
}

/** The line a terminal shows under a page that has more. */
export const morePages = (next: string): string => `more: --cursor ${next} (or --all)`;

export async function listPages<Page extends { next?: string }, Item>(ctx: Context, options: PageOptions, listing: Listing<Page, Item>): Promise<void> {
  if (options.all !== true) {
    const page = await listing.read(options.cursor);
    await listing.show(page, true);
    if (page.next !== undefined) ctx.out.footer(morePages(page.next));
    return;
  }
  let cursor = options.cursor;
  for (let pages = 0; pages < listing.pagesMax; pages++) {
    const page = await listing.read(cursor);
    if (ctx.out.machine || ctx.out.picksField) for (const item of listing.items(page)) ctx.out.line(item);
    else if (listing.items(page).length > 0 || pages === 0) await listing.show(page, pages === 0);
    if (page.next === undefined) return;
    cursor = page.next;
  }
  throw new CliError(`stopped after ${listing.pagesMax} pages: narrow the query or pass --cursor ${cursor}`, exitCodes.refused);
}
