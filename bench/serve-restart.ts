/**
 * Restart to serving, ledgerd as a process (issue 26): per store, `ledgerd init` makes a
 * book with the embedded defaults in a fresh data dir (on PostgreSQL, a database of a
 * private durable cluster: test/support/postgres-cluster.ts), then `ledgerd serve` is
 * started and timed from spawn to its readiness line, killed with SIGKILL once ready, and
 * started again `--trials` times on the same data dir: what a supervisor's restart after a
 * crash costs (on PostgreSQL it takes its dead predecessor's lease at once, the data dir's
 * lock proving it dead). Prints the figures; nothing is asserted.
 *
 *   npm run build && node dist/bench/serve-restart.js [--stores leveldb,postgres] [--trials 5]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { postgresStoreOf } from '../daemon/config.js';
import { startServer } from './http-load.js';
import { percentile } from './percentile.js';
import { BenchStores, parseStores } from './stores.js';

const run = promisify(execFile);
const { values: args } = parseArgs({ options: { stores: { type: 'string', default: 'leveldb,postgres' }, trials: { type: 'string', default: '5' } } });
const trials = Number(args.trials);
const ledgerd = new URL('../../bin/ledgerd', import.meta.url).pathname;
const stores = new BenchStores();

async function startedMs(dir: string): Promise<{ ms: number; kill: () => Promise<void> }> {
  const t0 = performance.now();
  const { child } = await startServer([ledgerd, 'serve', '--data-dir', dir, '--listen', '127.0.0.1:0'], { ...process.env, LEDGERD_LOG_LEVEL: 'warn' });
  const ms = performance.now() - t0;
  return {
    ms,
    kill: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${new Date().toISOString()}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  for (const kind of parseStores(args.stores!)) {
    const dir = mkdtempSync(join(tmpdir(), 'ledger-serve-restart-'));
    try {
      if (kind === 'postgres') {
        const connection = await stores.database();
        writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ store: postgresStoreOf({ url: connection.url, poolSize: connection.poolSize }) }));
      }
      await run(process.execPath, [ledgerd, 'init', '--data-dir', dir]);
      const first = await startedMs(dir);
      await first.kill();
      const restarts: number[] = [];
      for (let i = 0; i < trials; i++) {
        const again = await startedMs(dir);
        restarts.push(again.ms);
        await again.kill();
      }
      restarts.sort((a, b) => a - b);
      console.log(
        `${kind}: first start ${first.ms.toFixed(0)} ms; restart after SIGKILL to readiness: median ${percentile(restarts, 50).toFixed(0)} ms, ` +
          `min ${restarts[0]!.toFixed(0)}, max ${restarts[restarts.length - 1]!.toFixed(0)} ms over ${trials}; load average now ${loadavg()[0]!.toFixed(1)}`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  await stores.stop();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
