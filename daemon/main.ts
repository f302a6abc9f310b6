/**
 * `ledgerd`: `init` creates a book, `serve` serves it (CONTRACT 1). Exit codes: 0 ok,
 * 1 failed (the reason on stderr), 2 usage.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { Refused } from '../src/errors.js';
import { defaultGenesis, parseGenesis } from '../src/genesis.js';
import { BookExists, bookPaths, initBook } from './book.js';
import { ConfigError, defaults, loadConfig } from './config.js';
import { serve } from './serve.js';

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function fail(message: string): never {
  process.stderr.write(`ledgerd: ${message}\n`);
  process.exit(1);
}

async function init(options: { dataDir?: string; genesis?: string }): Promise<void> {
  const dataDir = options.dataDir ?? process.env.LEDGERD_DATA_DIR ?? defaults.dataDir;
  // Parsed whole before anything is written: a bad file leaves no book behind.
  const genesis = options.genesis === undefined ? defaultGenesis() : parseGenesis(readFileSync(options.genesis, 'utf8'));
  await initBook(dataDir, genesis, Date.now());
  const paths = bookPaths(dataDir);
  process.stdout.write(`ledgerd: book created in ${dataDir}\noperator API key: ${paths.operatorKey}\nidentities API key: ${paths.identitiesKey}\n`);
}

const program = new Command('ledgerd')
  .description('the ledger daemon: keeps the book and serves the /v1 HTTP API')
  .version(version)
  .exitOverride()
  .configureOutput({ writeErr: (text) => process.stderr.write(text) });

program
  .command('init')
  .description('create a book in the data dir, from a genesis file or the embedded defaults')
  .option('--data-dir <dir>', 'data directory (default: $LEDGERD_DATA_DIR, else ./.ledgerd)')
  .option('--genesis <file>', "a prior system's book to load and seal")
  .action(init);

program
  .command('serve')
  .description('serve the book (initialising one with the embedded defaults if the data dir has none)')
  .option('--data-dir <dir>', 'data directory (default: $LEDGERD_DATA_DIR, else ./.ledgerd)')
  .option('--listen <host:port>', 'address to listen on (default: $LEDGERD_LISTEN, else 127.0.0.1:8470)')
  .option('--config <file>', 'config file (default: $LEDGERD_CONFIG, else DIR/ledgerd.json when present)')
  .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent')
  .action((flags: { dataDir?: string; listen?: string; config?: string; logLevel?: string }) => serve(loadConfig({ flags, env: process.env }), version));

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
  if (error instanceof ConfigError || error instanceof BookExists) fail(error.message);
  if (error instanceof Refused) fail(error.refusal.description);
  fail((error as Error).stack ?? String(error));
}
