import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { type Fence, type PgConnection, PgStore, type PgStoreOptions, isPostgresUnavailable, pgPool } from './postgres.js';

/**
 * One decider at a time on a PostgreSQL book: the lease row (`ledgerd_lease`, one row)
 * names the daemon that may write (`holder`), until when (`expires_at`, by the database's
 * clock, so the daemons' clocks never matter), and the epoch of its holding. Each
 * acquisition increases the epoch; every write carries (holder, epoch) and commits only
 * while the row still holds them (the fence, in postgres.ts). A daemon that stalls past
 * its lease may be replaced; when it wakes, its writes find another epoch and write nothing.
 */

export interface LeaseTimings {
  /** How long a holding lasts from its last renewal. */
  readonly leaseMs: number;
  /** The holder renews this often (a third of the lease: two renewals may fail before it lapses). */
  readonly renewEveryMs: number;
  /** A standby tries to take the lease this often. */
  readonly pollEveryMs: number;
}

export function leaseTimings(leaseMs: number): LeaseTimings {
  return { leaseMs, renewEveryMs: Math.max(1, Math.floor(leaseMs / 3)), pollEveryMs: Math.max(1, Math.floor(leaseMs / 4)) };
}

export interface LeaseHolding {
  readonly holder: string;
  /** When it lapses unless renewed, ms since the epoch by the database's clock. */
  readonly expiresAtMs: number;
}

export interface LeaseEvents {
  /** Another daemon holds the lease: this one waits (called once per change of holder). */
  readonly onWaiting?: (current: LeaseHolding) => void;
  /** The lease is gone (another daemon took it): this daemon must stop deciding. Called once. */
  readonly onLost?: () => void;
  /** A renewal failed (the database is unreachable); it is tried again at the next interval. */
  readonly onRenewFailure?: (error: Error) => void;
  /**
   * Whether a lease `holder` names a dead predecessor of this daemon (its own host and data
   * dir, whose lock this daemon now holds): taken at once instead of waiting for it to lapse.
   * Safe for the reason expiry takeover is: the takeover waits for a write in flight, which
   * then commits first or is fenced.
   */
  readonly reclaimable?: (holder: string) => boolean;
  /** The database did not answer the wait's poll (it is tried again at the next one): told once per run of failures. */
  readonly onWaitFailure?: (error: Error) => void;
  /** Renewals stopped (or started again) because of `mayRenew`: told once per change. */
  readonly onRenewalHeld?: (held: boolean) => void;
}

const takeSql = `UPDATE ledgerd_lease SET holder = $1, epoch = epoch + 1, expires_at = clock_timestamp() + $2 * interval '1 millisecond'
  WHERE id = 1 AND expires_at <= clock_timestamp() RETURNING epoch::text AS epoch`;
const renewSql = `UPDATE ledgerd_lease SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
  WHERE id = 1 AND holder = $1 AND epoch = $2 RETURNING 1`;
const reclaimSql = `UPDATE ledgerd_lease SET holder = $1, epoch = epoch + 1, expires_at = clock_timestamp() + $2 * interval '1 millisecond'
  WHERE id = 1 AND holder = $3 RETURNING epoch::text AS epoch`;
const releaseSql = `UPDATE ledgerd_lease SET expires_at = '-infinity' WHERE id = 1 AND holder = $1 AND epoch = $2`;
const currentSql = `SELECT holder, (extract(epoch FROM expires_at) * 1000)::float8 AS "expiresAtMs" FROM ledgerd_lease WHERE id = 1`;

export class PgLease {
  private renewTimer: NodeJS.Timeout | null = null;
  private renewing = false;
  private renewalHeld = false;
  private lost = false;
  /** Whether the holder can still decide: when not (its writes stuck past the lease), renewals stop so a standby may take over. */
  mayRenew: () => boolean = () => true;
  private released = false;

  private constructor(
    private readonly pool: pg.Pool,
    readonly holder: string,
    readonly epoch: bigint,
    private readonly timings: LeaseTimings,
    private readonly events: LeaseEvents,
  ) {}

  /**
   * Takes the lease, waiting while another daemon holds it (the standby), then renews
   * it on an interval until released. `pool` is the lease's own (one connection), so a
   * busy book never delays a renewal. Resolves null when `signal` aborts the wait.
   */
  static async acquire(pool: pg.Pool, holder: string, timings: LeaseTimings, events: LeaseEvents = {}, signal?: AbortSignal): Promise<PgLease | null> {
    const won = (row: { epoch: string }) => {
      const lease = new PgLease(pool, holder, BigInt(row.epoch), timings, events);
      lease.scheduleRenewal();
      return lease;
    };
    let lastSeen: string | null = null;
    let failing = false;
    while (!signal?.aborted) {
      try {
        const taken = (await pool.query(takeSql, [holder, timings.leaseMs])).rows[0] as { epoch: string } | undefined;
        if (taken !== undefined) return won(taken);
        const current = (await pool.query(currentSql)).rows[0] as LeaseHolding | undefined;
        if (current !== undefined && current.holder !== '' && events.reclaimable?.(current.holder) === true) {
          // Compare and swap on the holder seen: a lease that changed hands meanwhile is not touched.
          const reclaimed = (await pool.query(reclaimSql, [holder, timings.leaseMs, current.holder])).rows[0] as { epoch: string } | undefined;
          if (reclaimed !== undefined) return won(reclaimed);
        }
        failing = false;
        if (current !== undefined && current.holder !== lastSeen) {
          lastSeen = current.holder;
          events.onWaiting?.(current);
        }
      } catch (error) {
        // A database that stalls or restarts while the standby waits is waited out, not a reason to exit:
        // the standby is most needed just when the database (or the holder's link to it) has trouble.
        if (!isPostgresUnavailable(error)) throw error;
        if (!failing) events.onWaitFailure?.(error as Error);
        failing = true;
      }
      // An abort ends the wait at once (and removes its listener, unlike a listener per try).
      await sleep(timings.pollEveryMs, undefined, { signal }).catch(() => {});
    }
    return null;
  }

  get fence(): Fence {
    return { holder: this.holder, epoch: this.epoch };
  }

  /** Renews now; false when the lease turned out lost. */
  async renew(): Promise<boolean> {
    if (this.lost) return false;
    const result = await this.pool.query(renewSql, [this.holder, this.epoch.toString(), this.timings.leaseMs]);
    if (result.rowCount === 1) return true;
    this.noteLost();
    return false;
  }

  /** Gives the lease up at once (a graceful stop): a standby takes over at its next try, not a lease later. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    if (this.renewTimer) clearTimeout(this.renewTimer);
    if (!this.lost) await this.pool.query(releaseSql, [this.holder, this.epoch.toString()]);
  }

  /** The lease is gone (a renewal or a fenced write found another epoch): stop renewing and tell the holder, once. */
  noteLost(): void {
    if (this.lost) return;
    this.lost = true;
    if (this.renewTimer) clearTimeout(this.renewTimer);
    this.events.onLost?.();
  }

  private scheduleRenewal(): void {
    if (this.lost || this.released) return;
    this.renewTimer = setTimeout(() => void this.renewOnce(), this.timings.renewEveryMs);
    this.renewTimer.unref();
  }

  private async renewOnce(): Promise<void> {
    if (this.renewing || this.released) return;
    this.renewing = true;
    try {
      // A holder that cannot write lets its lease lapse rather than keep the book from a standby that might.
      const may = this.mayRenew();
      if (may === this.renewalHeld) {
        this.renewalHeld = !may;
        this.events.onRenewalHeld?.(this.renewalHeld);
      }
      if (may) await this.renew();
    } catch (error) {
      // Unreachable for now: writes are fenced anyway, so nothing is risked by trying again later.
      this.events.onRenewFailure?.(error as Error);
    } finally {
      this.renewing = false;
      this.scheduleRenewal();
    }
  }
}

/**
 * A store for the one decider of a book: waits for the lease (as a standby does), then
 * opens the book with every write fenced by it; closing it gives the lease up. A write
 * fenced off reports the lease lost. Resolves null when `signal` aborts the wait.
 */
export async function openLeasedStore(
  connection: PgConnection,
  holder: string,
  timings: LeaseTimings,
  events: LeaseEvents & { readonly onConnectionError?: (error: Error) => void; readonly durability?: PgStoreOptions['durability'] } = {},
  signal?: AbortSignal,
  table?: string,
): Promise<PgStore | null> {
  const pool = pgPool(connection, 1, events.onConnectionError);
  try {
    const lease = await PgLease.acquire(pool, holder, timings, events, signal);
    if (lease === null) {
      await pool.end();
      return null;
    }
    let opened: PgStore | null = null;
    // Stuck past the lease (a held lock, a stalled server): stop renewing, so a standby may serve the book.
    lease.mayRenew = () => opened === null || opened.trouble.forMs(Date.now()) < timings.leaseMs;
    opened = await PgStore.open({
      connection,
      table,
      fence: () => lease.fence,
      onFenced: () => lease.noteLost(),
      onConnectionError: events.onConnectionError,
      durability: events.durability,
      // After the last write: the lease goes (a standby takes over at its next try), then its connection.
      afterClose: async () => {
        await lease.release().catch(() => {});
        await pool.end();
      },
    });
    return opened;
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
}
