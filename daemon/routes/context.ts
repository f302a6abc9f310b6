/** What every route module is given: the kernel, the frozen config and the clock. */
import type { FastifyRequest } from 'fastify';
import type { Kernel } from '../../src/book/kernel.js';
import type { BookView } from '../../src/queries/queries.js';
import type { Config } from '../config.js';
import { callerOf } from '../http/auth.js';
import type { CursorSeal } from '../http/cursors.js';
import type { SnapshotSlots } from '../snapshot-slots.js';
import type { Settlement } from '../settlement.js';

export interface RouteContext {
  readonly kernel: Kernel;
  readonly config: Config;
  readonly clock: () => number;
  readonly settlement: Settlement;
  readonly cursors: CursorSeal;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The per-principal bounds on snapshots every query reads (daemon/snapshot-slots.ts). */
    snapshots: SnapshotSlots;
  }
}

/** Runs `read` on one consistent view of the book, within the caller's snapshot bounds, and always closes it. */
export function withView<T>(request: FastifyRequest, read: (view: BookView) => Promise<T>): Promise<T> {
  return request.server.snapshots.withView(callerOf(request), read);
}
