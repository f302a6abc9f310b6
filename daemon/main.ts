/**
 * `ledgerd`: `init` creates a book, `serve` serves it (CONTRACT 1). A failure to start
 * is one line on stderr and an exit code of failures.ts: 2 usage, 3 configuration,
 * 4 data dir, 5 listen address, 1 anything else.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { Refused } from '../src/errors.js';
import { defaultGenesis, parseGenesis } from '../src/genesis.js';
import { BookExists, bookPaths, initBook, prepareDataDir } from './book.js';
import { StartupFailure, exitCodes, fsReason } from './failures.js';
import { ConfigError, defaults, loadConfig } from './config.js';
import { serve } from './serve.js';

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function fail(message: string, exitCode: number): never {
  // One line: a message holding a newline (a file's contents quoted) stays on it.
  process.stderr.write(`ledgerd: ${message.replaceAll('\n', ' ')}\n`);
  process.exit(exitCode);
}

function readGenesis(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new StartupFailure(`cannot read genesis file ${path}: ${fsReason(error)}`, exitCodes.config);
  }
}

async function init(options: { dataDir?: string; genesis?: string }): Promise<void> {
  const dataDir = options.dataDir ?? process.env.LEDGERD_DATA_DIR ?? defaults.dataDir;
  // Parsed whole before anything is written: a bad file leaves no book behind.
  let genesis;
  try {
    genesis = options.genesis === undefined ? defaultGenesis() : parseGenesis(readGenesis(options.genesis));
  } catch (error) {
    if (error instanceof Refused) throw new StartupFailure(`genesis file ${options.genesis}: ${error.refusal.description}; fix the file`, exitCodes.config);
    throw error;
  }
  await prepareDataDir(dataDir);
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
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? exitCodes.ok : exitCodes.usage);
  if (error instanceof ConfigError) fail(`${error.message}; fix the configuration (settings: ledgerd(8), docs/daemon.md)`, exitCodes.config);
  if (error instanceof BookExists) fail(`${error.message}; serve it, or init another --data-dir`, exitCodes.dataDir);
  if (error instanceof StartupFailure) fail(error.message, error.exitCode);
  if (error instanceof Refused) fail(error.refusal.description, exitCodes.failed);
  // Unforeseen: the message, never a stack trace (run with NODE_DEBUG or a debugger to dig).
  fail(error instanceof Error ? error.message : String(error), exitCodes.failed);
}
