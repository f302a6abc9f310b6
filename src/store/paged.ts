/** Reading a whole key space of a store a page at a time, so memory holds one page however large the space. */
import { prefixEnd } from '../model/keys.js';
import type { ReadView } from './port.js';

/** The entries under `prefix` (every entry for '') in key order, `pageEntries` per read, at most `max` in all. */
export async function* pagedEntries(view: ReadView, prefix: string, pageEntries: number, max = Infinity): AsyncGenerator<[string, string]> {
  const end = prefix === '' ? {} : { lt: prefixEnd(prefix) };
  let after: string | null = null;
  let seen = 0;
  while (seen < max) {
    const page: [string, string][] = [];
    for await (const entry of view.entries({ gt: after ?? prefix, ...end, limit: Math.min(pageEntries, max - seen) })) page.push(entry);
    if (page.length === 0) return;
    after = page[page.length - 1]![0];
    seen += page.length;
    yield* page;
  }
}
