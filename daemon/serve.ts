/**
 * `ledgerd serve`: opens (or first creates) the book, serves it, prints the
 * readiness line once it accepts requests, and on SIGTERM/SIGINT stops accepting,
 * finishes in-flight requests and decisions, closes the store and exits 0.
 */
import { defaultGenesis } from '../src/genesis.js';
import { saltedIds } from '../src/ids.js';
import { Kernel, type PoisonReport } from '../src/kernel.js';
import { buildApp, loggerOptions } from './app.js';
import { hasBook, initBook, openBookStore } from './book.js';
import type { Config } from './config.js';
import { poisonHook } from './test-hooks.js';

export async function serve(config: Config, version: string): Promise<void> {
  if (!hasBook(config.dataDir)) {
    await initBook(config.dataDir, defaultGenesis(), Date.now());
    process.stderr.write(`ledgerd: created a book with the embedded defaults in ${config.dataDir} (API keys in operator.key and identities.key there)\n`);
  }
  const store = await openBookStore(config.dataDir);
  const clock = Date.now;
  let stopping: Promise<void> | null = null;
  // A poison found on reopen may be reported before the app (and its logger) exists.
  const earlyPoison: PoisonReport[] = [];
  let reportPoison: (report: PoisonReport) => void = (report) => earlyPoison.push(report);
  const kernel = await Kernel.open({
    store,
    clock,
    ids: saltedIds(),
    cacheEntries: config.cacheEntries,
    backlogMax: config.backlogMax,
    backlogPerPrincipalMax: config.backlogPerPrincipalMax,
    // A broken invariant: stop deciding, shut down, and let the supervisor restart us.
    onFatal: (error) => {
      app.log.fatal({ err: error }, 'the kernel stopped deciding');
      void stop(1);
    },
    onPoison: (report) => reportPoison(report),
    beforeDecide: poisonHook(process.env),
  });
  const app = buildApp({ kernel, config, clock, logger: loggerOptions(config), version });
  reportPoison = ({ operation, what, error }) =>
    app.log.error({ operation, command: what, assertion: error.message }, 'poison: a decision tripped an assertion when taken alone; refused with ERR-Internal (an expiry is skipped instead), deciding goes on');
  for (const report of earlyPoison.splice(0)) reportPoison(report);

  const stop = (code: number): Promise<void> => {
    stopping ??= (async () => {
      const timer = setTimeout(() => {
        app.log.error(`shutdown took over ${config.shutdownTimeoutMs} ms; exiting`);
        process.exit(1);
      }, config.shutdownTimeoutMs);
      timer.unref();
      await app.close();
      await kernel.close();
      app.log.info('stopped');
      process.exit(code);
    })();
    return stopping;
  };
  process.once('SIGTERM', () => void stop(0));
  process.once('SIGINT', () => void stop(0));

  await app.listen({ host: config.listen.host, port: config.listen.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.listen.port;
  const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
  process.stdout.write(`ledgerd listening on http://${host}:${port}\n`);
}
