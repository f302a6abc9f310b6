/**
 * The daemon's configuration: embedded defaults, then a JSON config file, then the
 * environment, then command-line flags (each overrides the one before). Every value
 * is checked against its bounds once, at start, and the result is frozen.
 */
import { type ApprovalPolicy, parsePolicy } from '../src/auth/approvals.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fsReason } from './failures.js';
import { sessionLifetimeDefaultMs, sessionLifetimeMaxMs } from '../src/auth/constants.js';
import { levelOpenFilesMax, levelWriteBufferBytes, recoveryDelayDefaultMs, recoveryDelayMaxMs } from '../src/constants.js';
import { isIdentityId } from '../src/model/values.js';
import { backlogCommandsMax, backlogShareDivisor, cacheEntriesDefault, cacheEntriesMin, deadlineHorizonMaxMs, reservationDeadlineDefaultMs, transferDeadlineDefaultMs } from '../src/constants.js';

export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

export interface Listen {
  readonly host: string;
  readonly port: number;
}

/** Where the book is kept (CONTRACT 1): LevelDB in the data dir (the default), or a PostgreSQL database. */
export type StoreConfig =
  | {
      readonly kind: 'leveldb';
      /** Table files LevelDB keeps open, each mapped into memory (docs/operations.md, memory sizing). */
      readonly openFilesMax: number;
      /** LevelDB's memtable: larger means less compaction work per write, more memory and a longer reopen after a crash. */
      readonly writeBufferBytes: number;
    }
  | {
      readonly kind: 'postgres';
      /** The database's URL; it may hold a password, so it is never logged or echoed. */
      readonly url: string;
      /** Connections for queries, backups and checks (snapshots), beside the kernel's own few. */
      readonly poolSize: number;
      /** How long the serving daemon's hold on the book lasts from its last renewal (docs/operations.md). */
      readonly leaseMs: number;
      /** The longest any one statement (or wait for a lock) may run before the database cancels it: a stuck database answers 503, never a hang. */
      readonly statementTimeoutMs: number;
      /** How often the server's durability settings are read again (besides at start and after a failure). */
      readonly durabilityCheckMs: number;
      /** With settings that may lose an acknowledged commit: `refuse` to write (503) until they are mended, or serve `degraded` (logged, metric 0). */
      readonly durability: 'refuse' | 'degraded';
    };

/** Bounds of the PostgreSQL store's settings (inclusive). */
const postgresNumeric = {
  // At least 2: one connection shared by all would be one principal's whole pool (docs/daemon.md, "Reads under load").
  poolSize: { default: 8, min: 2, max: 100 },
  leaseMs: { default: 10_000, min: 1_000, max: 600_000 },
  statementTimeoutMs: { default: 5_000, min: 100, max: 600_000 },
  durabilityCheckMs: { default: 10_000, min: 1_000, max: 3_600_000 },
} as const;

/**
 * Bounds of the LevelDB store's settings (inclusive). LevelDB silently raises fewer than
 * 74 open files to 74 (64 table files and 10 of its own) and lowers more than 50 000 to
 * 50 000; it clips a write buffer to 64 KiB..1 GiB, and less than 1 MiB only adds compaction.
 */
const levelNumeric = {
  openFilesMax: { default: levelOpenFilesMax, min: 74, max: 50_000 },
  writeBufferBytes: { default: levelWriteBufferBytes, min: 1024 * 1024, max: 1024 * 1024 * 1024 },
} as const;

/** The book on LevelDB with its defaults. */
export const leveldbStoreDefault: StoreConfig = Object.freeze({ kind: 'leveldb', openFilesMax: levelNumeric.openFilesMax.default, writeBufferBytes: levelNumeric.writeBufferBytes.default });

/**
 * The read slots' settings (daemon/snapshot-slots.ts); the defaults of the first three
 * are derived from the store (`readSlotSettings`). On LevelDB a slot is an open snapshot,
 * cheap (docs/performance.md, "Open snapshots"); on PostgreSQL a pooled connection.
 */
const readSlotsNumeric = {
  snapshotsMax: { min: 2, max: 1_000 },
  snapshotsOperatorReserved: { min: 0, max: 998 },
  snapshotsPerPrincipalMax: { min: 1, max: 999 },
  snapshotQueuePerPrincipalMax: { default: 64, min: 0, max: 10_000 },
  snapshotQueueWaitMs: { default: 5_000, min: 1, max: 60_000 },
} as const;
/** Read slots on LevelDB by default: far more than PostgreSQL's pool, as a snapshot holds no connection. */
const levelSnapshotsMaxDefault = 64;

export interface Config {
  readonly dataDir: string;
  readonly store: StoreConfig;
  readonly listen: Listen;
  readonly logLevel: LogLevel;
  /** Passkeys are verified for this relying party (CONTRACT 1). */
  readonly relyingParty: { readonly id: string; readonly origin: string };
  /** Default deadlines, added to the submission time when a command names none (CONTRACT 4). */
  readonly transferDeadlineMs: number;
  readonly reservationDeadlineMs: number;
  /** Commands acknowledged and not yet decided; past it, ERR-DecisionUnavailable. */
  readonly backlogMax: number;
  /** One principal's share of the backlog: 1/backlogShareDivisor of `backlogMax`, rounded up (derived, not set). */
  readonly backlogPerPrincipalMax: number;
  /** Reads of the book (each one snapshot) in progress at once, all principals together; on PostgreSQL at most `poolSize`. */
  readonly snapshotsMax: number;
  /** Of `snapshotsMax`, the slots only the operator may take. */
  readonly snapshotsOperatorReserved: number;
  /** Reads one principal may run at once; a fraction of what all but the operator share. */
  readonly snapshotsPerPrincipalMax: number;
  /** Reads of one principal waiting for a slot; past it, ERR-DecisionUnavailable. */
  readonly snapshotQueuePerPrincipalMax: number;
  /** How long a read waits for a slot before it is refused ERR-DecisionUnavailable; below `requestTimeoutMs`. */
  readonly snapshotQueueWaitMs: number;
  readonly cacheEntries: number;
  readonly bodyBytesMax: number;
  /** Request line and headers together (Node's maxHeaderSize). */
  readonly headerBytesMax: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly sseConnectionsMax: number;
  /** Event streams one principal may hold at once. */
  readonly sseConnectionsPerPrincipalMax: number;
  /** Of `sseConnectionsMax`, the streams only the operator may take, so it can always watch its book. */
  readonly sseOperatorConnectionsReserved: number;
  /** A stream whose unsent data passes this is closed; the client resumes with `?after=`. */
  readonly sseBufferedBytesMax: number;
  /** Unsent data of all streams; past it the slowest streams are closed. */
  readonly sseBufferedBytesTotalMax: number;
  /** Stored events a replay reads (and live events it holds meanwhile) per step. */
  readonly sseReplayPageEvents: number;
  readonly sseHeartbeatMs: number;
  /** How long a passkey session lasts (CONTRACT 5: 12 h by default). */
  readonly sessionLifetimeMs: number;
  /** How long a bearer token's lookup is remembered (0: never); a revoked token may work this long. */
  readonly authCacheMs: number;
  /** Connections open at once from one address; past it, its requests are refused ERR-DecisionUnavailable and closed. */
  readonly connectionsPerSourceMax: number;
  /** Requests a second from one address, before authentication (a second's worth may come at once). */
  readonly requestsPerSourcePerSecond: number;
  /** Requests a second from one principal, once authenticated (a second's worth may come at once). */
  readonly requestsPerPrincipalPerSecond: number;
  /** The `Retry-After` of ERR-DecisionUnavailable, integer seconds. */
  readonly retryAfterSeconds: number;
  /** How long a graceful shutdown may take before the process gives up and exits 1. */
  readonly shutdownTimeoutMs: number;
  /** How long an online check (POST /v1/ops/check) may read before it stops, `incomplete`, freeing its slot and snapshot. */
  readonly checkTimeMaxMs: number;
  /** The embedded settlement layer and checkpoints (CONTRACT 9). */
  readonly settlement: SettlementConfig;
  /** Recovery terms (CONTRACT 8): the authority (an identity of the book; null: the identities principal) and the delay. */
  readonly recovery: { readonly authority: string | null; readonly delayMs: number };
  /** Backups (CONTRACT 13): whether one may be served unencrypted, and how long a client may stop reading one before it is cut off. */
  readonly backup: BackupConfig;
  /** The approval policy a book starts with (CONTRACT 13); once the book holds one, only an approved proposal changes it. */
  readonly approvals: ApprovalPolicy;
}

export interface BackupConfig {
  /** A backup without `recipient` (the book's secrets in clear on the wire and on disk): refused unless true. */
  readonly allowPlaintext: boolean;
  /** A backup whose client reads nothing for this long is cut off, freeing the one backup slot and its snapshot. */
  readonly stallTimeoutMs: number;
}

export interface SettlementConfig {
  /** This deployment's instance on the layer (uint32). */
  readonly instance: number;
  /** A block every this many ms (0: blocks only on request). */
  readonly blockIntervalMs: number;
  /** A block at height h is final once the head is h + finalityDepth. */
  readonly finalityDepth: number;
  /** A checkpoint every this many ms when entries were added since the last (0: only on request). */
  readonly checkpointIntervalMs: number;
  readonly instructionExpiryBlocks: number;
  /** How long the embedded layer's status holds after its last block or serving change (0: declared afresh at every read). */
  readonly statusFreshMs: number;
}

type ReadSlotSetting = keyof typeof readSlotsNumeric;
type Tunable = Exclude<keyof Config, 'dataDir' | 'listen' | 'logLevel' | 'relyingParty' | 'backlogPerPrincipalMax' | ReadSlotSetting | 'store' | 'settlement' | 'recovery' | 'backup' | 'approvals'>;

/** Every numeric setting with its default and bounds (inclusive). */
const numeric: Record<Tunable, { default: number; min: number; max: number }> = {
  transferDeadlineMs: { default: transferDeadlineDefaultMs, min: 1, max: deadlineHorizonMaxMs },
  reservationDeadlineMs: { default: reservationDeadlineDefaultMs, min: 1, max: deadlineHorizonMaxMs },
  // At least 2: a principal's share (an eighth, rounded up) of a backlog of 1 would be all of it.
  backlogMax: { default: backlogCommandsMax, min: 2, max: backlogCommandsMax },
  cacheEntries: { default: cacheEntriesDefault, min: cacheEntriesMin, max: 10_000_000 },
  bodyBytesMax: { default: 64 * 1024, min: 4 * 1024, max: 1024 * 1024 },
  headerBytesMax: { default: 16 * 1024, min: 4 * 1024, max: 64 * 1024 },
  requestTimeoutMs: { default: 30_000, min: 1_000, max: 600_000 },
  keepAliveTimeoutMs: { default: 72_000, min: 1_000, max: 600_000 },
  // Room for the smallest share below the operator's reserve: a principal never holds all that others share.
  sseConnectionsMax: { default: 256, min: 2, max: 10_000 },
  sseConnectionsPerPrincipalMax: { default: 8, min: 1, max: 9_999 },
  sseOperatorConnectionsReserved: { default: 8, min: 0, max: 9_998 },
  sseBufferedBytesMax: { default: 1024 * 1024, min: 64 * 1024, max: 64 * 1024 * 1024 },
  sseBufferedBytesTotalMax: { default: 64 * 1024 * 1024, min: 64 * 1024, max: 1024 * 1024 * 1024 },
  sseReplayPageEvents: { default: 100, min: 1, max: 1_000 },
  sseHeartbeatMs: { default: 15_000, min: 1_000, max: 600_000 },
  sessionLifetimeMs: { default: sessionLifetimeDefaultMs, min: 60_000, max: sessionLifetimeMaxMs },
  authCacheMs: { default: 1_000, min: 0, max: 60_000 },
  connectionsPerSourceMax: { default: 1_024, min: 1, max: 65_536 },
  requestsPerSourcePerSecond: { default: 50_000, min: 1, max: 1_000_000 },
  requestsPerPrincipalPerSecond: { default: 20_000, min: 1, max: 1_000_000 },
  retryAfterSeconds: { default: 1, min: 1, max: 3_600 },
  shutdownTimeoutMs: { default: 30_000, min: 1_000, max: 600_000 },
  checkTimeMaxMs: { default: 3_600_000, min: 1_000, max: 86_400_000 },
};

/** The `settlement` settings with their defaults (CONTRACT 9) and bounds (inclusive). */
const settlementNumeric: Record<keyof SettlementConfig, { default: number; min: number; max: number }> = {
  instance: { default: 1, min: 0, max: 0xffff_ffff },
  blockIntervalMs: { default: 1_000, min: 0, max: 3_600_000 },
  finalityDepth: { default: 2, min: 0, max: 1_000 },
  checkpointIntervalMs: { default: 60_000, min: 0, max: 86_400_000 },
  instructionExpiryBlocks: { default: 100, min: 1, max: 1_000_000 },
  statusFreshMs: { default: 0, min: 0, max: 86_400_000 },
};

export const defaults = {
  dataDir: './.ledgerd',
  listen: '127.0.0.1:8470',
  logLevel: 'info' as LogLevel,
  relyingParty: { id: 'localhost', origin: 'http://localhost:8470' },
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** `HOST:PORT`, with an IPv6 host in brackets. Port 0 asks the system for a free one. */
export function parseListen(text: string): Listen {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]+)):([0-9]{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new ConfigError(`listen must be HOST:PORT (got ${JSON.stringify(text)})`);
  return { host: (m[1] ?? m[2])!, port };
}

export interface ConfigSources {
  /** Flags given on the command line (undefined when absent). */
  readonly flags: { dataDir?: string; listen?: string; config?: string; logLevel?: string };
  readonly env: NodeJS.ProcessEnv;
  readonly readFile?: (path: string) => string | null;
}

function readIfPresent(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    // Absent (a data dir not yet made, or not a directory, has no ledgerd.json; the data dir's own check speaks for it).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw new ConfigError(`cannot read config file ${path}: ${fsReason(error)}`);
  }
}

const fileKeys = new Set<string>([...Object.keys(numeric), ...Object.keys(readSlotsNumeric), 'listen', 'logLevel', 'relyingParty', 'store', 'settlement', 'recovery', 'backup', 'approvals']);

function parseFile(path: string, text: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config file ${path} is not JSON: ${(error as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ConfigError(`config file ${path} must hold a JSON object`);
  for (const key of Object.keys(doc)) if (!fileKeys.has(key)) throw new ConfigError(`config file ${path}: unknown setting ${key}`);
  return doc as Record<string, unknown>;
}

interface IntegerBound {
  readonly default: number;
  readonly min: number;
  readonly max: number;
}

function integerSetting(value: unknown, name: string, bound: IntegerBound): number {
  const v = value ?? bound.default;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < bound.min || v > bound.max) throw new ConfigError(`${name} must be an integer in ${bound.min}..${bound.max}`);
  return v;
}

/** Every member a table of bounds names, read from `given` (its default when absent) and checked; `section.member` in errors. */
function integerSettings<K extends string>(given: Record<string, unknown>, section: string, bounds: Readonly<Record<K, IntegerBound>>): Record<K, number> {
  const out = {} as Record<K, number>;
  for (const name of Object.keys(bounds) as K[]) out[name] = integerSetting(given[name], `${section}.${name}`, bounds[name]);
  return out;
}

function settlementSettings(value: unknown): SettlementConfig {
  const section = value ?? {};
  if (typeof section !== 'object' || section === null || Array.isArray(section)) throw new ConfigError('settlement must be an object');
  const given = section as Record<string, unknown>;
  for (const key of Object.keys(given)) if (!Object.hasOwn(settlementNumeric, key)) throw new ConfigError(`settlement: unknown setting ${key}`);
  return Object.freeze(integerSettings(given, 'settlement', settlementNumeric));
}

function stringSetting(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0) throw new ConfigError(`${name} must be a non-empty string`);
  return value;
}

/** A PostgreSQL store's setting with the defaults for whatever `fields` leaves out (tools and tests that point at a database). */
export function postgresStoreOf(fields: Record<string, unknown>): Extract<StoreConfig, { kind: 'postgres' }> {
  return storeSetting({ ...fields, kind: 'postgres' }, {}) as Extract<StoreConfig, { kind: 'postgres' }>;
}

/** The `store` setting; `$LEDGERD_STORE_URL` overrides its `url`. */
function storeSetting(value: unknown, env: NodeJS.ProcessEnv): StoreConfig {
  const doc = value ?? { kind: 'leveldb' };
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ConfigError('store must be an object {kind, ...}');
  const fields = doc as Record<string, unknown>;
  const envUrl = env.LEDGERD_STORE_URL;
  if (fields.kind === 'leveldb') {
    for (const key of Object.keys(fields)) if (key !== 'kind' && !Object.hasOwn(levelNumeric, key)) throw new ConfigError(`store: unknown setting ${key} for kind leveldb`);
    // A URL meant to move the book to PostgreSQL must not be ignored while the daemon keeps another book.
    if (envUrl !== undefined) throw new ConfigError('LEDGERD_STORE_URL is set but the store is leveldb: set store.kind to postgres in the config file, or unset it');
    return Object.freeze({ kind: 'leveldb', ...integerSettings(fields, 'store', levelNumeric) });
  }
  if (fields.kind !== 'postgres') throw new ConfigError('store.kind must be leveldb or postgres');
  for (const key of Object.keys(fields)) if (!['kind', 'url', 'durability', ...Object.keys(postgresNumeric)].includes(key)) throw new ConfigError(`store: unknown setting ${key}`);
  const durability = fields.durability ?? 'refuse';
  if (durability !== 'refuse' && durability !== 'degraded') throw new ConfigError('store.durability must be refuse or degraded');
  const url = (envUrl === undefined || envUrl === '' ? undefined : envUrl) ?? stringSetting(fields.url, 'store.url');
  if (url === undefined) throw new ConfigError('store.url (or LEDGERD_STORE_URL) is required for a postgres store');
  if (!/^postgres(ql)?:\/\//.test(url)) throw new ConfigError('store.url must be a postgres:// URL');
  return Object.freeze({ kind: 'postgres', url, durability, ...integerSettings(fields, 'store', postgresNumeric) });
}

/** The config file the sources name (`explicit`: by `--config` or `$LEDGERD_CONFIG`, so it must exist), else the data dir's `ledgerd.json`. */
export function configFileOf({ flags, env }: ConfigSources): { path: string; explicit: string | undefined } {
  const explicit = flags.config ?? env.LEDGERD_CONFIG;
  return { path: explicit ?? join(flags.dataDir ?? env.LEDGERD_DATA_DIR ?? defaults.dataDir, 'ledgerd.json'), explicit };
}

/**
 * Builds the configuration. The config file is `--config`, else `$LEDGERD_CONFIG`,
 * else `ledgerd.json` in the data dir when it exists.
 */
export function loadConfig(sources: ConfigSources): Config {
  const { flags, env } = sources;
  const read = sources.readFile ?? readIfPresent;
  const dataDir = flags.dataDir ?? env.LEDGERD_DATA_DIR ?? defaults.dataDir;
  const { path, explicit: explicitPath } = configFileOf(sources);
  const text = read(path);
  if (text === null && explicitPath !== undefined) throw new ConfigError(`config file ${path} does not exist`);
  const file = text === null ? {} : parseFile(path, text);

  const tunables = {} as Record<Tunable, number>;
  for (const [name, bound] of Object.entries(numeric) as [Tunable, (typeof numeric)[Tunable]][]) {
    tunables[name] = integerSetting(file[name], name, bound);
  }
  if (tunables.sseOperatorConnectionsReserved >= tunables.sseConnectionsMax) {
    throw new ConfigError('sseOperatorConnectionsReserved must be below sseConnectionsMax (other principals need a stream too)');
  }
  shareBelowPool('sseConnectionsPerPrincipalMax', tunables.sseConnectionsPerPrincipalMax, 'sseConnectionsMax', tunables.sseConnectionsMax, 'sseOperatorConnectionsReserved', tunables.sseOperatorConnectionsReserved);
  const rpFile = file.relyingParty ?? {};
  if (typeof rpFile !== 'object' || rpFile === null || Array.isArray(rpFile)) throw new ConfigError('relyingParty must be an object {id, origin}');
  const rp = rpFile as Record<string, unknown>;
  for (const key of Object.keys(rp)) if (key !== 'id' && key !== 'origin') throw new ConfigError(`relyingParty: unknown setting ${key}`);
  const recovery = recoverySetting(file.recovery);
  const logLevel = flags.logLevel ?? env.LEDGERD_LOG_LEVEL ?? stringSetting(file.logLevel, 'logLevel') ?? defaults.logLevel;
  if (!(logLevels as readonly string[]).includes(logLevel)) throw new ConfigError(`log level must be one of ${logLevels.join(', ')}`);

  const store = storeSetting(file.store, env);
  return Object.freeze({
    ...tunables,
    backlogPerPrincipalMax: Math.ceil(tunables.backlogMax / backlogShareDivisor),
    ...readSlotSettings(store, file, tunables.requestTimeoutMs),
    settlement: settlementSettings(file.settlement),
    dataDir,
    store,
    listen: Object.freeze(parseListen(flags.listen ?? env.LEDGERD_LISTEN ?? stringSetting(file.listen, 'listen') ?? defaults.listen)),
    logLevel: logLevel as LogLevel,
    recovery,
    backup: backupSetting(file.backup),
    approvals: approvalsSetting(file.approvals),
    relyingParty: Object.freeze({
      id: env.LEDGERD_RP_ID ?? stringSetting(rp.id, 'relyingParty.id') ?? defaults.relyingParty.id,
      origin: env.LEDGERD_RP_ORIGIN ?? stringSetting(rp.origin, 'relyingParty.origin') ?? defaults.relyingParty.origin,
    }),
  });
}

/**
 * A per-principal share of a pool is a fraction of what all but the operator share:
 * below the pool less the operator's reserve, so no principal can take all of it.
 */
function shareBelowPool(share: string, shareValue: number, pool: string, poolValue: number, reserve: string, reserveValue: number): void {
  if (shareValue >= poolValue - reserveValue) throw new ConfigError(`${share} must be below ${pool} less ${reserve} (${poolValue - reserveValue}): one principal would hold every slot the others share`);
}

/**
 * The read slots: `snapshotsMax` is 64 on LevelDB and the pool on PostgreSQL (each
 * read holds a pooled connection, so no more); the operator reserves a quarter of them
 * (rounded down) and a principal runs half (at least 1). Both defaults keep a
 * principal's share below what all but the operator share, for every pool of 2 or more.
 */
function readSlotSettings(store: StoreConfig, file: Record<string, unknown>, requestTimeoutMs: number): Pick<Config, ReadSlotSetting> {
  const poolSize = store.kind === 'postgres' ? store.poolSize : null;
  const b = readSlotsNumeric;
  const snapshotsMax = integerSetting(file.snapshotsMax, 'snapshotsMax', { default: poolSize ?? levelSnapshotsMaxDefault, ...b.snapshotsMax });
  if (poolSize !== null && snapshotsMax > poolSize) throw new ConfigError(`snapshotsMax must be at most store.poolSize (${poolSize}) on PostgreSQL: each read holds a pooled connection`);
  const snapshotsOperatorReserved = integerSetting(file.snapshotsOperatorReserved, 'snapshotsOperatorReserved', { default: Math.floor(snapshotsMax / 4), ...b.snapshotsOperatorReserved });
  if (snapshotsOperatorReserved >= snapshotsMax) throw new ConfigError('snapshotsOperatorReserved must be below snapshotsMax (other principals need a slot too)');
  const snapshotsPerPrincipalMax = integerSetting(file.snapshotsPerPrincipalMax, 'snapshotsPerPrincipalMax', { default: Math.max(1, Math.floor(snapshotsMax / 2)), ...b.snapshotsPerPrincipalMax });
  shareBelowPool('snapshotsPerPrincipalMax', snapshotsPerPrincipalMax, 'snapshotsMax', snapshotsMax, 'snapshotsOperatorReserved', snapshotsOperatorReserved);
  const snapshotQueuePerPrincipalMax = integerSetting(file.snapshotQueuePerPrincipalMax, 'snapshotQueuePerPrincipalMax', b.snapshotQueuePerPrincipalMax);
  // By default at most half the request's own timeout, so a shorter timeout set alone still starts.
  const snapshotQueueWaitMs = integerSetting(file.snapshotQueueWaitMs, 'snapshotQueueWaitMs', { ...b.snapshotQueueWaitMs, default: Math.min(b.snapshotQueueWaitMs.default, Math.floor(requestTimeoutMs / 2)) });
  // A read that could wait past the request's own timeout would end in a timeout instead of a refusal.
  if (snapshotQueueWaitMs >= requestTimeoutMs) throw new ConfigError('snapshotQueueWaitMs must be below requestTimeoutMs');
  return { snapshotsMax, snapshotsOperatorReserved, snapshotsPerPrincipalMax, snapshotQueuePerPrincipalMax, snapshotQueueWaitMs };
}

/** `recovery`: `{authority?, delayMs?}` (CONTRACT 8); the authority must be an identity of the book (checked when the book opens). */
function recoverySetting(value: unknown): Config['recovery'] {
  if (value === undefined) return Object.freeze({ authority: null, delayMs: recoveryDelayDefaultMs });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError('recovery must be an object {authority, delayMs}');
  const r = value as Record<string, unknown>;
  for (const key of Object.keys(r)) if (key !== 'authority' && key !== 'delayMs') throw new ConfigError(`recovery: unknown setting ${key}`);
  const delayMs = r.delayMs ?? recoveryDelayDefaultMs;
  if (typeof delayMs !== 'number' || !Number.isSafeInteger(delayMs) || delayMs < 0 || delayMs > recoveryDelayMaxMs) throw new ConfigError(`recovery.delayMs must be an integer in 0..${recoveryDelayMaxMs}`);
  const authority = stringSetting(r.authority, 'recovery.authority') ?? null;
  if (authority !== null && !isIdentityId(authority)) throw new ConfigError('recovery.authority must be an identity, did:ledger:id:<id>');
  return Object.freeze({ authority, delayMs });
}

/** `approvals`: `{rules?, issuanceAboveMinor?, ttlMs?}` (CONTRACT 13; defaults: src/auth/approvals.ts). */
function approvalsSetting(value: unknown): ApprovalPolicy {
  const policy = parsePolicy(value ?? {});
  if (typeof policy === 'string') throw new ConfigError(`approvals: ${policy}`);
  return Object.freeze(policy);
}

/** The `backup` settings' bounds (inclusive). */
const backupNumeric = { stallTimeoutMs: { default: 60_000, min: 1_000, max: 3_600_000 } } as const;

/** `backup`: `{allowPlaintext?, stallTimeoutMs?}` (CONTRACT 13: plaintext only when allowed). */
function backupSetting(value: unknown): BackupConfig {
  const section = value ?? {};
  if (typeof section !== 'object' || section === null || Array.isArray(section)) throw new ConfigError('backup must be an object {allowPlaintext, stallTimeoutMs}');
  const given = section as Record<string, unknown>;
  for (const key of Object.keys(given)) if (key !== 'allowPlaintext' && !Object.hasOwn(backupNumeric, key)) throw new ConfigError(`backup: unknown setting ${key}`);
  const allowPlaintext = given.allowPlaintext ?? false;
  if (typeof allowPlaintext !== 'boolean') throw new ConfigError('backup.allowPlaintext must be true or false');
  return Object.freeze({ allowPlaintext, ...integerSettings(given, 'backup', backupNumeric) });
}
