/**
 * Every query and disclosure reads one snapshot of the store (a backup is the operator's,
 * one at a time; a checkpoint is taken one at a time); on PostgreSQL each holds a connection of
 * `poolSize` while it lasts, and a caller waiting for one is answered 503 after 10 s. So
 * one principal flooding queries would queue everyone behind it: each principal holds at
 * most `snapshotsPerPrincipalMax` at once, and on PostgreSQL the principals other than
 * the operator together at most `snapshotsNonOperatorMax`, leaving the operator a share.
 * A caller over either bound is refused at once (ERR-DecisionUnavailable, Retry-After)
 * instead of queuing, and the others go on being served (docs/daemon.md).
 */
import type { Actor } from '../src/auth/authority.js';
import type { Kernel } from '../src/book/kernel.js';
import { refuse } from '../src/errors.js';
import type { IdentityId } from '../src/model/values.js';
import type { BookView } from '../src/queries/queries.js';

export interface SnapshotBounds {
  readonly perPrincipalMax: number;
  /** Null: no bound over all principals (LevelDB's snapshots hold no connection). */
  readonly nonOperatorMax: number | null;
}

export class SnapshotSlots {
  private readonly held = new Map<IdentityId, number>();
  private nonOperatorHeld = 0;

  constructor(
    private readonly kernel: Kernel,
    private readonly bounds: SnapshotBounds,
  ) {}

  /** Runs `read` on one consistent view of the book, within `caller`'s bounds, and always closes it. */
  withView<T>(caller: Actor, read: (view: BookView) => Promise<T>): Promise<T> {
    return this.hold(caller, async () => {
      const view = await this.kernel.openView();
      try {
        return await read(view);
      } finally {
        await view.close();
      }
    });
  }

  /**
   * Runs `read`, which takes and closes one snapshot of the store itself (a disclosure
   * reads the raw store), holding one of `caller`'s slots while it lasts.
   */
  async hold<T>(caller: Actor, read: () => Promise<T>): Promise<T> {
    const { principal } = caller;
    const operator = principal === this.kernel.principals.operator;
    const held = this.held.get(principal) ?? 0;
    if (held >= this.bounds.perPrincipalMax) {
      refuse('ERR-DecisionUnavailable', `a principal may read ${this.bounds.perPrincipalMax} snapshots of the book at once; retry later`);
    }
    if (!operator && this.bounds.nonOperatorMax !== null && this.nonOperatorHeld >= this.bounds.nonOperatorMax) {
      refuse('ERR-DecisionUnavailable', 'the service is at its bound of snapshots of the book; retry later');
    }
    this.held.set(principal, held + 1);
    if (!operator) this.nonOperatorHeld += 1;
    try {
      return await read();
    } finally {
      const left = this.held.get(principal)! - 1;
      if (left === 0) this.held.delete(principal);
      else this.held.set(principal, left);
      if (!operator) this.nonOperatorHeld -= 1;
    }
  }
}
