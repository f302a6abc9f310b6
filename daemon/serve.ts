/**
 * `ledgerd serve`: opens (or first creates) the book, serves it, prints the
 * readiness line once it accepts requests, and on SIGTERM/SIGINT stops accepting,
 * finishes in-flight requests and decisions, closes the store and exits 0.
 */
import { defaultGenesis, genesisSource } from '../src/book/genesis.js';
import { keyedIds } from '../src/model/ids.js';
import type { FastifyBaseLogger } from 'fastify';
import { Kernel } from '../src/book/kernel.js';
import { buildApp, loggerOptions } from './app.js';
import { existsSync } from 'node:fs';
import { openServedBook } from './book-place.js';
import { BookExists, bookIdentity, daemonKeys, idsEpoch, initBook, placeOf, prepareDataDir } from './book.js';
import { bookPaths } from './data-dir.js';
import { StartupFailure, exitCodes } from './failures.js';
import { listenFailure } from './failures.js';
import { Metrics } from './metrics.js';
import { PgStore } from '../src/store/postgres.js';
import { type Config, ConfigError } from './config.js';
import { changedSettings } from './config-view.js';
import { type LogFormat, earlyLine, logSink, startupLog, stderrIsJournal } from './log.js';
import { notifier } from './sd-notify.js';
import { loadClerk, loadLiabilitiesKey } from './clerk.js';
import { loadBackupKey } from './backup-key.js';
import { openLayer, openSettlement } from './settlement.js';
import type { IdentityId } from '../src/model/values.js';
import { poisonHook } from './test-hooks.js';
import { keys } from '../src/model/keys.js';
import { oneLine } from '../src/one-line.js';
import { admissionWaitDefaultMs } from '../src/constants.js';

export interface ServeOptions {
  readonly logFormat: LogFormat;
  /** Reads the configuration again (SIGHUP); throws ConfigError when it is not valid. */
  readonly reload: () => Config;
}

export async function serve(config: Config, version: string, options: ServeOptions): Promise<void> {
  // Every line on stderr from here is a log line in the chosen format (and priority, under the journal).
  const sink = logSink(options.logFormat, stderrIsJournal(process.env), process.stderr);
  startupLog.sink = sink;
  // Until the app exists a SIGHUP has nothing to reload (and must not end the process, its default).
  let reload = (): void => {};
  process.on('SIGHUP', () => reload());
  await prepareDataDir(config.dataDir);
  const place = placeOf(config.dataDir, config.store);
  if (!(await place.exists())) {
    try {
      const { backupKey } = await initBook(config.dataDir, genesisSource(defaultGenesis()), Date.now(), config.store);
      sink.write(earlyLine(30, `created a book with the embedded defaults in ${place.name} (API keys in operator.key and identities.key in ${config.dataDir}; backup verify key ${backupKey})`));
    } catch (error) {
      // Another ledgerd made the database's book first: serve that one (the data dir must then be a copy of its maker's).
      if (!(error instanceof BookExists)) throw error;
    }
  } else if (config.store.kind === 'postgres' && !existsSync(bookPaths(config.dataDir).daemonKey)) {
    // A fresh daemon.key would mint ids that collide with the book's own.
    throw new StartupFailure(`${config.dataDir} has no daemon.key, and the book in ${place.name} exists: copy the data dir of the ledgerd that made the book`, exitCodes.dataDir);
  }
  const secrets = await daemonKeys(config.dataDir);
  // A book from before backups were signed draws its backup key now (its public half in DIR/backup.pub).
  await loadBackupKey(config.dataDir);
  const clock = Date.now;
  let stopping: Promise<void> | null = null;
  // The kernel may report before the app (and its logger) exists (a poison or a store failure on reopen): held until then.
  type Line = (log: FastifyBaseLogger) => void;
  const early: Line[] = [];
  let report = (line: Line): void => void early.push(line);
  let stop = (code: number): Promise<void> => process.exit(code);
  const notify = notifier(process.env, (message) => report((log) => log.warn(message)));

  // A standby waits here for the lease; a signal meanwhile ends the wait (nothing else is open yet).
  const waiting = new AbortController();
  const stopWaiting = () => waiting.abort();
  process.once('SIGTERM', stopWaiting);
  process.once('SIGINT', stopWaiting);
  const served = await openServedBook(config.dataDir, bookPaths(config.dataDir).book, config.store, await bookIdentity(config.dataDir), {
    onWaiting: (holder, expiresAtMs) => {
      const line = `standby: the book is served by ${holder} (lease until ${new Date(expiresAtMs).toISOString()}); taking over when its lease lapses`;
      sink.write(earlyLine(30, line));
      void notify([`STATUS=${line}`]);
    },
    onWaitFailure: (error) => sink.write(earlyLine(40, `standby: the book's database does not answer (${oneLine(error.message)}); waiting on`)),
    onLost: () =>
      report((log) => {
        log.fatal('another ledgerd holds the lease now (this one stalled past it): stopping; restarted, it waits as the standby');
        void stop(exitCodes.failed);
      }),
    onConnectionError: (error) => report((log) => log.warn({ err: { message: error.message } }, 'a connection to the book\'s database failed')),
    onRenewalHeld: (held) =>
      report((log) =>
        held
          ? log.error({ leaseMs: config.store.kind === 'postgres' ? config.store.leaseMs : null }, 'writes to the book\'s database have failed or hung for longer than the lease: no longer renewing it, so a standby can take the book over')
          : log.warn('writes to the book\'s database work again: renewing the lease again'),
      ),
    onDurability: (risk) =>
      report((log) =>
        risk === null
          ? log.warn('the book\'s database keeps what it acknowledges again')
          : config.store.kind === 'postgres' && config.store.durability === 'refuse'
            ? log.error({ settings: risk }, 'the book\'s database may lose what it acknowledges on a crash: refusing every write (503) until it is mended (docs/operations.md)')
            : log.error({ settings: risk }, 'the book\'s database may lose what it acknowledges on a crash: serving degraded, as store.durability says (docs/operations.md)'),
      ),
  }, waiting.signal);
  process.removeListener('SIGTERM', stopWaiting);
  process.removeListener('SIGINT', stopWaiting);
  if (served === null) process.exit(exitCodes.ok);
  const store = served.store;
  const recoveryAuthority = config.recovery.authority as IdentityId | null;
  if (recoveryAuthority !== null && (await store.get(keys.identity(recoveryAuthority))) === undefined) {
    await store.close();
    throw new ConfigError(`recovery.authority ${recoveryAuthority} is not an identity of the book`);
  }
  const metrics = new Metrics(version);
  if (store instanceof PgStore && config.store.kind === 'postgres') {
    const onRisk = config.store.durability;
    metrics.store = () => ({ kind: 'postgres', durabilityRisk: store.risk, onRisk, writesFailingMs: store.trouble.forMs(Date.now()) });
  }
  const layer = await openLayer(store, config.settlement);
  const kernel = await Kernel.open({
    store: metrics.timedStore(store),
    clock,
    ids: keyedIds(secrets.ids, await idsEpoch(store)),
    challengeMacKey: secrets.challenges,
    cacheEntries: config.cacheEntries,
    backlogMax: config.backlogMax,
    backlogPerPrincipalMax: config.backlogPerPrincipalMax,
    // A command waiting its turn is refused (503, Retry-After) well before its request would time out.
    admissionWaitMs: Math.min(admissionWaitDefaultMs, Math.floor(config.requestTimeoutMs / 2)),
    recovery: { authority: recoveryAuthority ?? undefined, delayMs: config.recovery.delayMs },
    approvals: config.approvals,
    // A broken invariant: stop deciding, shut down, and let the supervisor restart us.
    onFatal: (error) => {
      app.log.fatal({ err: error }, 'the kernel stopped deciding');
      void stop(1);
    },
    onPoison: ({ operation, what, error }) =>
      report((log) => log.error({ operation, command: what, assertion: error.message }, 'poison: a decision tripped an assertion when taken alone; refused with ERR-Internal (an expiry is skipped instead), deciding goes on')),
    onStoreFailure: (error) =>
      report((log) => (error ? log.error({ err: error }, 'the store failed; commands are refused with ERR-DecisionUnavailable until it recovers') : log.warn('the store recovered; deciding again'))),
    beforeDecide: poisonHook(process.env),
    settlement: { instance: config.settlement.instance, instructionExpiryBlocks: config.settlement.instructionExpiryBlocks, layerHeight: () => layer.currentHead.height },
  });
  const settlement = await openSettlement({ store, layer, kernel, clerk: await loadClerk(config.dataDir), config: config.settlement, clock, liabilitiesKey: await loadLiabilitiesKey(config.dataDir) });
  const app = buildApp({ kernel, config, clock, logger: loggerOptions(config, sink), version, metrics, settlement, cursorKey: secrets.cursors });
  report = (line) => line(app.log);
  for (const line of early.splice(0)) report(line);

  stop = (code: number): Promise<void> => {
    stopping ??= (async () => {
      const told = notify(['STOPPING=1']);
      // The step shutdown is in, so a shutdown past its bound says what it was waiting for.
      let step = 'closing the HTTP server (requests and streams in flight)';
      const timer = setTimeout(() => {
        app.log.error({ step }, `shutdown took over ${config.shutdownTimeoutMs} ms, still ${step}; exiting`);
        process.exit(1);
      }, config.shutdownTimeoutMs);
      timer.unref();
      try {
        // A checkpoint asked for over HTTP may be building its liabilities trees: abandoned now, or app.close() would wait for it.
        settlement.checkpoints.close();
        await app.close();
        step = 'stopping settlement';
        await settlement.close();
        step = 'closing the kernel (its last round and the store)';
        await kernel.close();
        step = 'releasing the book';
        await served.release();
      } catch (error) {
        // Said, not an unhandled rejection: the operator learns what did not close.
        app.log.error({ err: error }, 'shutdown failed');
        await told;
        process.exit(1);
      }
      app.log.info('stopped');
      await told;
      process.exit(code);
    })();
    return stopping;
  };
  process.once('SIGTERM', () => void stop(0));
  process.once('SIGINT', () => void stop(0));

  try {
    await app.listen({ host: config.listen.host, port: config.listen.port });
  } catch (error) {
    // Nothing was served: close what was opened, then fail with the reason.
    await app.close();
    await settlement.close();
    await kernel.close();
    await served.release();
    throw listenFailure(`${config.listen.host}:${config.listen.port}`, error);
  }
  await settlement.start(app.log, app.snapshots.gate(app.snapshots.internal));
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.listen.port;
  const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
  process.stdout.write(`ledgerd listening on http://${host}:${port}\n`);
  reload = () => reloadConfig(app.log, config, options.reload);
  await notify(['READY=1', `STATUS=serving on http://${host}:${port}`]);
}

/**
 * SIGHUP: the configuration read again. What applies without a restart is the log level;
 * every other setting that changed is named (never its value) as waiting for a restart.
 * A configuration that is not valid is refused whole, and the running one kept.
 */
function reloadConfig(log: FastifyBaseLogger, running: Config, read: () => Config): void {
  let next: Config;
  try {
    next = read();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    log.error({ reason: error.message }, 'SIGHUP: the configuration is not valid; the running one is kept');
    return;
  }
  log.level = next.logLevel;
  const waiting = changedSettings(running, next).filter((name) => name !== 'logLevel');
  log.info({ logLevel: next.logLevel, restartNeededFor: waiting }, 'SIGHUP: configuration read again');
}
