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
    /** The slots every pooled read of the book takes, shared fairly between principals (daemon/snapshot-slots.ts). */
    snapshots: SnapshotSlots;
  }
  interface FastifyRequest {
    /** How long this request's reads waited for a slot in all (null: none waited); the request log says it. */
    readWaitedMs: number | null;
  }
}

/** Notes a read's wait on its request, for the request log. */
export const noteWait = (request: FastifyRequest) => (waitedMs: number) => {
  request.readWaitedMs = (request.readWaitedMs ?? 0) + waitedMs;
};

/** Runs `read` on one consistent view of the book, in one of the caller's read slots, and always closes it. */
export function withView<T>(request: FastifyRequest, read: (view: BookView) => Promise<T>): Promise<T> {
  const slots = request.server.snapshots;
  return slots.withView(slots.principal(callerOf(request).principal), read, noteWait(request));
}

/** Runs `read`, which reads the store itself (not through a view), in one of the caller's read slots. */
export function withSlot<T>(request: FastifyRequest, read: () => Promise<T>): Promise<T> {
  const slots = request.server.snapshots;
  return slots.hold(slots.principal(callerOf(request).principal), read, noteWait(request));
}

/** Runs `read` before the caller is known (a credential looked up to authenticate it): in the source address's slots. */
export function withSourceSlot<T>(request: FastifyRequest, read: () => Promise<T>): Promise<T> {
  return request.server.snapshots.hold(sourceReader(request), read, noteWait(request));
}

/** Before authentication a read is charged to the address it came from. */
export const sourceReader = (request: FastifyRequest) => ({ key: `source:${request.ip}`, operator: false });
