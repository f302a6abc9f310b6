import pg from 'pg';
import type { BatchOp, Range, ReadView, Snapshot, Store } from './port.js';

/**
 * The book on PostgreSQL: one table of (key bytea, value bytea). `bytea` compares
 * bytewise (memcmp), so keys order exactly as in LevelDB, whatever the database's
 * collation. Each batch is one statement, hence one transaction, and carries the
 * lease's fence (postgres-lease.ts). A snapshot is a REPEATABLE READ read-only
 * transaction on a connection of its own. Range reads go by keyset in bounded pages.
 */

/** Entries one range query reads (a range read longer than this is several queries, by keyset). */
export const pgRangePageEntries = 1_000;
/** Connections of the kernel's own reads and writes (a submission write and a decision write may overlap). */
export const pgKernelConnections = 4;
/** The longest a query waits for a pooled connection before it fails (and the caller answers ERR-DecisionUnavailable); the statement bound when shorter. */
export const pgConnectWaitMs = 10_000;
/** A statement's (and a lock wait's) bound where the config gives none: tools and tests that open a book directly. */
export const pgStatementTimeoutDefaultMs = 5_000;
/** The client's own bound on an answer, past the server's statement timeout: a server that stopped answering (SIGSTOP, a dead link) is given up on. */
const pgAnswerMarginMs = 2_000;
/** TCP keepalive on every connection: a peer gone without a word is noticed by the kernel, not by the next query's timeout alone. */
const pgKeepAliveInitialDelayMs = 10_000;

/** The book's table; a book being built lives beside it under another name until it is renamed into place. */
export const bookTable = 'ledgerd_kv';
const tableName = /^[a-z_][a-z0-9_]{0,62}$/;

/** SQLSTATE of a write refused by the fence: the daemon no longer holds the lease. */
export const leaseLostCode = 'LDLSE';
/** Code of a write refused because the server's settings may lose it (`durability: refuse`). */
export const notDurableCode = 'LDDUR';

export class NotDurable extends Error {
  override name = 'NotDurable';
  readonly code = notDurableCode;
}

export class LeaseLost extends Error {
  override name = 'LeaseLost';
  readonly code = leaseLostCode;
}

/**
 * SQLSTATE classes (and client-side codes) of a database that cannot serve right now, as opposed to bugs:
 * 57014 is a statement cancelled by statement_timeout, 55P03 a lock not granted within lock_timeout.
 */
const unavailableStates = ['08', '53', '57P', '57014', '55P03', '40001', '40P01', '25006', leaseLostCode, notDurableCode];
const unavailableClientCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN']);
const unavailableMessages = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end|the store is closed|Query read timeout/;

export function isPostgresUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (unavailableClientCodes.has(code) || unavailableStates.some((s) => code.startsWith(s)))) return true;
  return error instanceof Error && unavailableMessages.test(error.message);
}

export interface PgConnection {
  /** A libpq-style URL (`postgres://user:password@host:port/db`). Never logged: it may hold a password. */
  readonly url: string;
  /** Connections of snapshots (queries, backups, checks) at once. */
  readonly poolSize: number;
  /** Statement and lock-wait bound (the config's `store.statementTimeoutMs`); default `pgStatementTimeoutDefaultMs`. */
  readonly statementTimeoutMs?: number;
}

/** The fencing token a write must still hold when it commits (the lease's holder and epoch). */
export interface Fence {
  readonly holder: string;
  readonly epoch: bigint;
}

/** A pool that never lets a socket error escape: pg-pool emits idle clients' errors on the pool, and an unheard one kills the process. */
export function pgPool(connection: PgConnection, max: number, onError: (error: Error) => void = () => {}): pg.Pool {
  const statementTimeoutMs = connection.statementTimeoutMs ?? pgStatementTimeoutDefaultMs;
  const pool = new pg.Pool({
    connectionString: connection.url,
    max,
    // Waiting for a pooled connection (or making one) is bounded like a statement: behind a stuck database, queued reads fail in time too.
    connectionTimeoutMillis: Math.min(pgConnectWaitMs, statementTimeoutMs),
    application_name: 'ledgerd',
    // Every statement and lock wait bounded by the server, and every answer by the client: a held lock or a stalled server is a refusal, never a hang.
    statement_timeout: statementTimeoutMs,
    lock_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + pgAnswerMarginMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: pgKeepAliveInitialDelayMs,
  });
  pool.on('error', onError);
  return pool;
}

/**
 * A connection taken from `pool` for more than one query (a transaction, a snapshot). pg
 * emits a held connection's socket errors on it, and an unheard one ends the process: it
 * is heard here, and the connection is given back broken (closed, not reused).
 */
export async function holdClient(pool: pg.Pool): Promise<{ readonly client: pg.PoolClient; release(failure?: Error): void }> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error) => (broken = error);
  client.on('error', onError);
  return {
    client,
    release(failure) {
      client.removeListener('error', onError);
      client.release(failure ?? broken);
    },
  };
}

/**
 * Prepares the book's database on first use: the lease table with its one row, which
 * also names the book's identity (the data dir keys it was made with). Tables of books
 * are made when built.
 */
export async function prepareSchema(pool: pg.Pool): Promise<void> {
  // A prepared database takes no DDL: a serving role with data rights alone (docs/operations.md) meets none.
  if (await tableExists(pool, 'ledgerd_lease')) return;
  const held = await holdClient(pool);
  const { client } = held;
  try {
    await client.query('BEGIN');
    // Two daemons preparing one database at once: the second waits, then finds it done.
    await client.query("SELECT pg_advisory_xact_lock(hashtext('ledgerd schema'))");
    await client.query(`CREATE TABLE IF NOT EXISTS ledgerd_lease (
      id smallint PRIMARY KEY CHECK (id = 1),
      holder text NOT NULL,
      epoch bigint NOT NULL,
      expires_at timestamptz NOT NULL,
      book text NOT NULL)`);
    await client.query("INSERT INTO ledgerd_lease VALUES (1, '', 0, '-infinity', '') ON CONFLICT (id) DO NOTHING");
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    held.release();
  }
}

/** What serving a book needs of the role on each table: reads, the writes of a round, and the lease's renewals. */
const servingRights: Readonly<Record<string, readonly string[]>> = {
  [bookTable]: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  ledgerd_lease: ['SELECT', 'UPDATE'],
};

/** The rights serving needs that the connecting role lacks, as `RIGHT on TABLE` (none: it may serve). */
export async function missingServingRights(pool: pg.Pool): Promise<string[]> {
  const missing: string[] = [];
  for (const [table, rights] of Object.entries(servingRights)) {
    for (const right of rights) {
      const result = await pool.query('SELECT has_table_privilege($1, $2) AS granted', [table, right]);
      if (!(result.rows[0] as { granted: boolean }).granted) missing.push(`${right} on ${table}`);
    }
  }
  return missing;
}

/**
 * Why the server may lose a commit it acknowledged, from the settings of a session like the
 * writer's own (per-role and per-database settings included), or null when it may not:
 * fsync off, synchronous_commit off, or local while a synchronous standby is named (the
 * commit then waits for no standby: "on two machines" no longer holds).
 */
export async function durabilityRisk(pool: pg.Pool): Promise<string | null> {
  const row = (await pool.query("SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS commit, current_setting('synchronous_standby_names') AS standbys")).rows[0] as Record<string, string>;
  const risks: string[] = [];
  if (row.fsync === 'off') risks.push('fsync = off');
  if (row.commit === 'off') risks.push('synchronous_commit = off');
  else if (row.commit === 'local' && row.standbys !== '') risks.push('synchronous_commit = local while synchronous_standby_names is set (commits wait for no standby)');
  return risks.length === 0 ? null : risks.join(', ');
}

export async function tableExists(pool: pg.Pool, table: string): Promise<boolean> {
  const result = await pool.query('SELECT to_regclass($1) IS NOT NULL AS present', [checkedTable(table)]);
  return (result.rows[0] as { present: boolean }).present;
}

export async function createBookTable(pool: pg.Pool, table: string): Promise<void> {
  await pool.query(`DROP TABLE IF EXISTS ${checkedTable(table)}`);
  await pool.query(`CREATE TABLE ${table} (k bytea PRIMARY KEY, v bytea NOT NULL)`);
}

export async function dropBookTable(pool: pg.Pool, table: string): Promise<void> {
  await pool.query(`DROP TABLE IF EXISTS ${checkedTable(table)}`);
}

/** Puts a built book in place: one transaction, so the book appears whole or not at all; false when one is already there. */
export async function renameBookTable(pool: pg.Pool, from: string, to: string): Promise<boolean> {
  try {
    await pool.query(`ALTER TABLE ${checkedTable(from)} RENAME TO ${checkedTable(to)}`);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === '42P07') return false;
    throw error;
  }
}

function checkedTable(table: string): string {
  if (!tableName.test(table)) throw new Error(`not a table name: ${table}`);
  return table;
}

type Bound = 'gt' | 'gte' | 'lt' | 'lte';
const operators: Record<Bound, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** The named statements of one table (prepared once per connection by pg). */
class Statements {
  readonly get: pg.QueryConfig;
  readonly getMany: pg.QueryConfig;
  readonly write: pg.QueryConfig;
  readonly fencedWrite: pg.QueryConfig;
  private readonly ranges = new Map<string, string>();

  constructor(private readonly table: string) {
    checkedTable(table);
    this.get = { name: `${table}.get`, text: `SELECT v FROM ${table} WHERE k = $1` };
    this.getMany = { name: `${table}.getMany`, text: `SELECT k, v FROM ${table} WHERE k = ANY($1::bytea[])` };
    // Deletes and puts never name one key twice (the batch is folded first), so one statement may do both.
    const apply = (fenced: boolean) => {
      const held = fenced ? 'EXISTS (SELECT 1 FROM fence)' : 'true';
      return `
      del AS (DELETE FROM ${table} WHERE k = ANY($1::bytea[]) AND ${held}),
      ins AS (INSERT INTO ${table} (k, v) SELECT k, v FROM unnest($2::bytea[], $3::bytea[]) AS t(k, v) WHERE ${held}
              ON CONFLICT (k) DO UPDATE SET v = excluded.v)`;
    };
    this.write = { name: `${table}.write`, text: `WITH ${apply(false)} SELECT 1 AS written` };
    // The fence: the lease row must still name this holder and epoch. FOR SHARE holds it until commit, so a takeover
    // (an UPDATE of that row) waits for this write to end, and any write after a takeover finds the new epoch and writes nothing.
    this.fencedWrite = {
      name: `${table}.fencedWrite`,
      text: `WITH fence AS (SELECT 1 FROM ledgerd_lease WHERE id = 1 AND holder = $4 AND epoch = $5 FOR SHARE),${apply(true)}
        SELECT count(*)::int AS written FROM fence`,
    };
  }

  range(lower: Bound | null, upper: Bound | null, reverse: boolean): pg.QueryConfig {
    const name = `${this.table}.range.${lower ?? '-'}.${upper ?? '-'}.${reverse ? 'desc' : 'asc'}`;
    let text = this.ranges.get(name);
    if (text === undefined) {
      const where: string[] = [];
      let n = 1;
      if (lower) where.push(`k ${operators[lower]} $${n++}`);
      if (upper) where.push(`k ${operators[upper]} $${n++}`);
      text = `SELECT k, v FROM ${this.table}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY k ${reverse ? 'DESC' : 'ASC'} LIMIT $${n}`;
      this.ranges.set(name, text);
    }
    return { name, text };
  }
}

interface Queryable {
  query(config: pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult>;
}

const bytes = (text: string) => Buffer.from(text, 'utf8');
const text = (value: Buffer) => value.toString('utf8');

/** Reads through one connection source (the pool, or a snapshot's transaction). */
class Reader implements ReadView {
  constructor(
    protected readonly statements: Statements,
    private readonly source: () => Promise<Queryable>,
  ) {}

  async get(key: string): Promise<string | undefined> {
    const result = await (await this.source()).query(this.statements.get, [bytes(key)]);
    const row = result.rows[0] as { v: Buffer } | undefined;
    return row === undefined ? undefined : text(row.v);
  }

  async getMany(keys: readonly string[]): Promise<(string | undefined)[]> {
    if (keys.length === 0) return [];
    const result = await (await this.source()).query(this.statements.getMany, [keys.map(bytes)]);
    const found = new Map<string, string>();
    for (const row of result.rows as { k: Buffer; v: Buffer }[]) found.set(text(row.k), text(row.v));
    return keys.map((k) => found.get(k));
  }

  /** Page by page: each page starts past the last key of the one before (keyset), so no page re-reads or skips. */
  async *entries(range: Range): AsyncIterable<[string, string]> {
    const reverse = range.reverse === true;
    let lower: [Bound, string] | null = range.gt !== undefined ? ['gt', range.gt] : range.gte !== undefined ? ['gte', range.gte] : null;
    let upper: [Bound, string] | null = range.lt !== undefined ? ['lt', range.lt] : range.lte !== undefined ? ['lte', range.lte] : null;
    let remaining = range.limit;
    while (remaining > 0) {
      const pageLimit = Math.min(remaining, pgRangePageEntries);
      const values: unknown[] = [];
      if (lower) values.push(bytes(lower[1]));
      if (upper) values.push(bytes(upper[1]));
      values.push(pageLimit);
      const result = await (await this.source()).query(this.statements.range(lower?.[0] ?? null, upper?.[0] ?? null, reverse), values);
      const rows = result.rows as { k: Buffer; v: Buffer }[];
      for (const row of rows) yield [text(row.k), text(row.v)];
      remaining -= rows.length;
      if (rows.length < pageLimit) return;
      const last = text(rows[rows.length - 1]!.k);
      if (reverse) upper = ['lt', last];
      else lower = ['gt', last];
    }
  }
}

export interface PgStoreOptions {
  readonly connection: PgConnection;
  readonly table?: string;
  /** The fencing token of the lease this daemon holds; none for a book being built (no daemon serves it yet). */
  readonly fence?: () => Fence;
  /** A write found the lease taken by another daemon (told once per refused write; the daemon stops deciding). */
  readonly onFenced?: () => void;
  /** Errors of idle connections (the server went away): reported, never thrown. */
  readonly onConnectionError?: (error: Error) => void;
  /** Run once the store is closed (the lease is given up after the last write). */
  readonly afterClose?: () => Promise<void>;
  /** Watch the server's durability settings (the serving daemon): every `checkMs`, at open and at each recovery. */
  readonly durability?: { readonly refuse: boolean; readonly checkMs: number; readonly onChange: (risk: string | null) => void };
}

/**
 * How long the book's writes have been failing or unfinished: from the start of the oldest
 * write still running, or of the first of an unbroken run of failed writes. A decider stuck
 * this way for longer than its lease stops renewing it (postgres-lease.ts), so a standby can
 * take the book over instead of waiting behind it.
 */
export class WriteTrouble {
  private readonly running = new Map<number, number>();
  private next = 0;
  private failingSinceMs: number | null = null;

  started(nowMs: number): number {
    const token = this.next++;
    this.running.set(token, nowMs);
    return token;
  }

  ended(token: number, ok: boolean): void {
    const startedAtMs = this.running.get(token)!;
    this.running.delete(token);
    if (ok) this.failingSinceMs = null;
    else this.failingSinceMs ??= startedAtMs;
  }

  forMs(nowMs: number): number {
    let since = this.failingSinceMs ?? nowMs;
    for (const startedAtMs of this.running.values()) since = Math.min(since, startedAtMs);
    return nowMs - since;
  }
}

export class PgStore extends Reader implements Store {
  private closed = false;
  readonly trouble = new WriteTrouble();
  /** Why the server may lose an acknowledged commit now (null: it may not), as last read. */
  risk: string | null = null;
  private durabilityTimer: NodeJS.Timeout | null = null;
  private durabilityWatch: PgStoreOptions['durability'] | null = null;

  private constructor(
    statements: Statements,
    private readonly kernelPool: pg.Pool,
    private readonly snapshotPool: pg.Pool,
    private readonly fence: (() => Fence) | null,
    private readonly onFenced: () => void,
    private readonly afterClose: () => Promise<void>,
  ) {
    super(statements, async () => {
      if (this.closed) throw new Error('the store is closed');
      return this.kernelPool;
    });
  }

  /** Opens the book's table (made if `create`); the database's lease table is prepared by `prepareSchema`. */
  static async open(options: PgStoreOptions & { create?: boolean }): Promise<PgStore> {
    const table = checkedTable(options.table ?? bookTable);
    const onError = options.onConnectionError ?? (() => {});
    const kernelPool = pgPool(options.connection, pgKernelConnections, onError);
    const snapshotPool = pgPool(options.connection, options.connection.poolSize, onError);
    try {
      if (options.create) await createBookTable(kernelPool, table);
      else if (!(await tableExists(kernelPool, table))) throw new Error(`the database holds no book (no table ${table})`);
    } catch (error) {
      await Promise.all([kernelPool.end(), snapshotPool.end()]);
      throw error;
    }
    const store = new PgStore(new Statements(table), kernelPool, snapshotPool, options.fence ?? null, options.onFenced ?? (() => {}), options.afterClose ?? (async () => {}));
    if (options.durability !== undefined) await store.watchDurability(options.durability);
    return store;
  }

  private async watchDurability(watch: NonNullable<PgStoreOptions['durability']>): Promise<void> {
    this.durabilityWatch = watch;
    await this.checkDurability();
    const tick = () => {
      this.durabilityTimer = setTimeout(() => void this.checkDurability().catch(() => {}).finally(() => !this.closed && tick()), watch.checkMs);
      this.durabilityTimer.unref();
    };
    tick();
  }

  /** Reads the server's settings again; told to the watcher when the verdict changes. */
  private async checkDurability(): Promise<void> {
    const watch = this.durabilityWatch;
    if (watch === null || watch === undefined || this.closed) return;
    const risk = await durabilityRisk(this.kernelPool);
    if (risk !== this.risk) watch.onChange(risk);
    this.risk = risk;
  }

  private refuseIfNotDurable(): void {
    if (this.risk !== null && this.durabilityWatch?.refuse === true) throw new NotDurable(`the book's database may lose what it acknowledges (${this.risk}): nothing is written until that is mended`);
  }

  /** `_sync` is the port's: every commit here is durable. */
  async write(ops: readonly BatchOp[], _sync?: boolean): Promise<void> {
    if (ops.length === 0) return;
    if (this.closed) throw new Error('the store is closed');
    this.refuseIfNotDurable();
    // The last op on a key decides it, as in a LevelDB batch.
    const last = new Map<string, string | null>();
    for (const op of ops) last.set(op.key, op.type === 'put' ? op.value : null);
    const dels: Buffer[] = [];
    const putKeys: Buffer[] = [];
    const putValues: Buffer[] = [];
    for (const [key, value] of last) {
      if (value === null) dels.push(bytes(key));
      else {
        putKeys.push(bytes(key));
        putValues.push(bytes(value));
      }
    }
    // Always durable: synchronous_commit decides where (the standby too, when named); `sync` has nothing to add.
    if (this.fence === null) {
      await this.kernelPool.query(this.statements.write, [dels, putKeys, putValues]);
      return;
    }
    const { holder, epoch } = this.fence();
    const token = this.trouble.started(Date.now());
    let written = false;
    try {
      const result = await this.kernelPool.query(this.statements.fencedWrite, [dels, putKeys, putValues, holder, epoch.toString()]);
      written = (result.rows[0] as { written: number }).written === 1;
    } finally {
      this.trouble.ended(token, written);
    }
    if (written) return;
    this.onFenced();
    throw new LeaseLost('the write was fenced off: another ledgerd holds the lease now');
  }

  /** A failed write was one transaction, rolled back whole or committed whole: nothing to mend but the connection, tried here. */
  async recover(): Promise<void> {
    if (this.closed) throw new Error('the store is closed');
    await this.kernelPool.query('SELECT 1');
    // After a failure (a reconnect among them) the settings are read again before writing resumes.
    await this.checkDurability();
    this.refuseIfNotDurable();
  }

  snapshot(): Snapshot {
    return new PgSnapshot(this.statements, this.snapshotPool);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.durabilityTimer) clearTimeout(this.durabilityTimer);
    await Promise.all([this.kernelPool.end(), this.snapshotPool.end()]);
    await this.afterClose();
  }
}

/**
 * One REPEATABLE READ read-only transaction, begun at the first read: it sees every
 * write that committed before the snapshot was asked for (and maybe a few after: a
 * consistent instant no earlier than the call, which is what readers need).
 */
class PgSnapshot extends Reader implements Snapshot {
  private held: Promise<Awaited<ReturnType<typeof holdClient>>> | null = null;
  private closed = false;

  constructor(statements: Statements, pool: pg.Pool) {
    super(statements, async () => {
      if (this.closed) throw new Error('the snapshot is closed');
      this.held ??= (async () => {
        const held = await holdClient(pool);
        try {
          await held.client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        } catch (error) {
          held.release(error as Error);
          throw error;
        }
        return held;
      })();
      return (await this.held).client;
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.held === null) return;
    let held;
    try {
      held = await this.held;
    } catch {
      return;
    }
    // A connection that failed mid-transaction is released broken, not given back for reuse.
    try {
      await held.client.query('COMMIT');
      held.release();
    } catch (error) {
      held.release(error as Error);
    }
  }
}
