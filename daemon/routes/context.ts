/** What every route module is given: the kernel, the frozen config and the clock. */
import type { Kernel } from '../../src/book/kernel.js';
import type { BookView } from '../../src/queries/queries.js';
import type { Config } from '../config.js';
import type { Settlement } from '../settlement.js';

export interface RouteContext {
  readonly kernel: Kernel;
  readonly config: Config;
  readonly clock: () => number;
  readonly settlement: Settlement;
}

/** Runs `read` on one consistent view of the book and always closes it. */
export async function withView<T>(kernel: Kernel, read: (view: BookView) => Promise<T>): Promise<T> {
  const view = await kernel.openView();
  try {
    return await read(view);
  } finally {
    await view.close();
  }
}
