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
import { daemonKeys, hasBook, initBook, openBookStore, prepareDataDir } from './book.js';
import { listenFailure } from './failures.js';
import { Metrics } from './metrics.js';
import type { Config } from './config.js';
import { openSettlement } from './settlement.js';
import { poisonHook } from './test-hooks.js';

export async function serve(config: Config, version: string): Promise<void> {
  await prepareDataDir(config.dataDir);
  if (!hasBook(config.dataDir)) {
    await initBook(config.dataDir, genesisSource(defaultGenesis()), Date.now());
    process.stderr.write(`ledgerd: created a book with the embedded defaults in ${config.dataDir} (API keys in operator.key and identities.key there)\n`);
  }
  const store = await openBookStore(config.dataDir);
  const secrets = await daemonKeys(config.dataDir);
  const clock = Date.now;
  let stopping: Promise<void> | null = null;
  // The kernel may report before the app (and its logger) exists (a poison or a store failure on reopen): held until then.
  type Line = (log: FastifyBaseLogger) => void;
  const early: Line[] = [];
  let report = (line: Line): void => void early.push(line);
  const metrics = new Metrics(version);
  const settlement = await openSettlement(store, config.settlement, clock);
  const kernel = await Kernel.open({
    store: metrics.timedStore(store),
    clock,
    ids: keyedIds(secrets.ids),
    challengeMacKey: secrets.challenges,
    cacheEntries: config.cacheEntries,
    backlogMax: config.backlogMax,
    backlogPerPrincipalMax: config.backlogPerPrincipalMax,
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
    settlement: { instance: config.settlement.instance, instructionExpiryBlocks: config.settlement.instructionExpiryBlocks, layerHeight: () => settlement.layer.currentHead.height },
  });
  const app = buildApp({ kernel, config, clock, logger: loggerOptions(config), version, metrics, settlement });
  report = (line) => line(app.log);
  for (const line of early.splice(0)) report(line);

  const stop = (code: number): Promise<void> => {
    stopping ??= (async () => {
      const timer = setTimeout(() => {
        app.log.error(`shutdown took over ${config.shutdownTimeoutMs} ms; exiting`);
        process.exit(1);
      }, config.shutdownTimeoutMs);
      timer.unref();
      await app.close();
      await settlement.close();
      await kernel.close();
      app.log.info('stopped');
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
    throw listenFailure(`${config.listen.host}:${config.listen.port}`, error);
  }
  settlement.start(app.log, kernel);
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.listen.port;
  const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
  process.stdout.write(`ledgerd listening on http://${host}:${port}\n`);
}
