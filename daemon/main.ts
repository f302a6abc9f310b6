/**
 * `ledgerd`: `init` creates a book, `serve` serves it (CONTRACT 1), `restore` makes one
 * from a backup, `check` verifies a stopped one, `migrate` brings an older one to this
 * version's store layout, `config check|show` validates or prints the configuration. A
 * failure to start is one line on stderr (a log line once serve's log exists) and an exit code of failures.ts: 2 usage, 3 configuration (or a bad backup
 * file), 4 data dir, 5 listen address, 6 a book check found problems, 1 anything else.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { Refused } from '../src/errors.js';
import { storeLayout } from '../src/model/keys.js';
import { defaultGenesis, genesisSource } from '../src/book/genesis.js';
import { openGenesisFile } from './genesis-file.js';
import { BookExists, initBook, placeOf, prepareDataDir } from './book.js';
import { bookPaths } from './data-dir.js';
import { checkBook, dataDirIds, journalLength } from './check.js';
import { restoreBook } from './restore.js';
import type { BackupTrust } from './backup-format.js';
import { readVerifyKey } from './backup-key.js';
import { migrateBook } from './migrate.js';
import { layoutOf } from '../src/book/migrate-layout.js';
import { migratableLayout } from '../src/book/migrate-grant-index.js';
import { migratePauseHook } from './test-hooks.js';
import { StartupFailure, exitCodes } from './failures.js';
import { ConfigError, configFileOf, loadConfig } from './config.js';
import { configView } from './config-view.js';
import { type LogFormat, defaultLogFormat, earlyLine, logFormats, startupLog } from './log.js';
import { oneLine } from '../src/one-line.js';
import { countingReads, withProgress } from './progress.js';

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function fail(message: string, exitCode: number): never {
  // One line: a message holding a newline or a control character (a file's contents quoted) stays on it.
  // Once serve's log exists, in its format: no plain line in the middle of a JSON stream.
  if (startupLog.sink === null) process.stderr.write(`ledgerd: ${oneLine(message)}\n`);
  else startupLog.sink.write(earlyLine(60, oneLine(message), { exitCode }));
  process.exit(exitCode);
}

/** The data dir and the store of a command that works on the book without serving it (the config file names the store). */
const bookOptions = (options: { dataDir?: string; config?: string }) => {
  const { dataDir, store } = loadConfig({ flags: { dataDir: options.dataDir, config: options.config }, env: process.env });
  return { dataDir, store };
};

async function init(options: { dataDir?: string; config?: string; genesis?: string }): Promise<void> {
  const { dataDir, store } = bookOptions(options);
  // Streamed section by section into a book built aside: a bad file leaves no book behind.
  const path = options.genesis;
  await prepareDataDir(dataDir);
  // Opened (and refused if it is no regular file) before anything is built.
  const file = path === undefined ? null : await openGenesisFile(path);
  let made;
  try {
    made = await withProgress(process.stderr, 'ledgerd init', 'written', (progress) => {
      if (file !== null) progress.measure(() => file.share());
      return initBook(dataDir, file ?? genesisSource(defaultGenesis()), Date.now(), store, progress);
    });
  } catch (error) {
    if (error instanceof Refused) throw new StartupFailure(`genesis file ${path}: ${error.refusal.description}; fix the file`, exitCodes.config);
    throw error;
  } finally {
    await file?.close();
  }
  const paths = bookPaths(dataDir);
  process.stdout.write(
    `ledgerd: book created in ${placeOf(dataDir, store).name}\noperator API key: ${paths.operatorKey}\nidentities API key: ${paths.identitiesKey}\n` +
      `${backupKeyLine(made.backupKey)}\n`,
  );
}

/** The backup key's public half, as init and restore print it: the operator keeps it apart from the backups (docs/operations.md, Backups). */
const backupKeyLine = (hex: string) => `backup verify key: ${hex} (keep it apart from the backups: ledgerd restore --verify-key needs it)`;

async function restore(options: { from: string; dataDir?: string; config?: string; verifyKey?: string; acceptUnverified?: boolean; identity?: string }): Promise<void> {
  if ((options.verifyKey === undefined) === (options.acceptUnverified !== true)) {
    throw new StartupFailure('restore needs --verify-key KEY (the backup key\'s public half, printed by ledgerd init and kept in DIR/backup.pub of the source), or --accept-unverified for a file you vouch for by other means, not both', exitCodes.usage);
  }
  const trust: BackupTrust = options.verifyKey === undefined ? { unverified: true } : { verifyKey: await readVerifyKey(options.verifyKey) };
  const { dataDir, store } = bookOptions(options);
  if ('unverified' in trust) process.stderr.write(`ledgerd: WARNING: restoring ${options.from} WITHOUT verifying its signature (--accept-unverified): whoever could write the file chose what the restored book holds\n`);
  const { header, trailer, backupKey } = await withProgress(process.stderr, 'ledgerd restore', 'restored', (progress) =>
    restoreBook({ from: options.from, trust, identity: options.identity }, dataDir, store, progress),
  );
  const head = header.head as { postingSeq?: unknown };
  process.stdout.write(
    `ledgerd: book restored in ${placeOf(dataDir, store).name} from ${options.from}: ${trailer.entries} entries, journal position ${String(head.postingSeq)}, taken at ${new Date(header.createdAtMs).toISOString()}, ${'unverified' in trust ? 'NOT VERIFIED' : 'signature verified'}\n` +
      'the API keys are the source book\'s (the backup carries only their hashes): bring operator.key and identities.key from it\n' +
      `${backupKeyLine(backupKey)}; backups of this book are signed by it, not by the source's key\n`,
  );
}

async function check(options: { dataDir?: string; config?: string }): Promise<void> {
  const { dataDir, store: storeConfig } = bookOptions(options);
  const place = placeOf(dataDir, storeConfig);
  if (!(await place.exists())) throw new StartupFailure(`${place.name} holds no book`, exitCodes.dataDir);
  const store = await place.openToRead();
  let report;
  try {
    const layout = await layoutOf(store);
    if (layout !== storeLayout) throw new StartupFailure(`${place.name} holds a book in store layout ${layout}; this ledgerd reads ${storeLayout}${migratableLayout(layout) ? ': run ledgerd migrate on it first' : ''}`, exitCodes.dataDir);
    const ids = await dataDirIds(dataDir);
    report = await withProgress(process.stderr, 'ledgerd check', 'read', async (progress) => {
      // Folding every journal entry is most of the work (the checkpoint pass after it hashes them, faster): the time left is told from it.
      const journal = await journalLength(store);
      let folded = 0;
      if (journal !== null && journal > 0) progress.measure(() => folded / journal);
      return checkBook(countingReads(store, progress), ids, (counts) => (folded = counts.postings));
    });
  } catch (error) {
    if (error instanceof StartupFailure) throw error;
    // A record that cannot even be decoded is damage too, not a failure of the check.
    process.stdout.write(`the book cannot be read through: ${oneLine((error as Error).message)}\nledgerd check: ${place.name}: damaged\n`);
    process.exit(exitCodes.damaged);
  } finally {
    await store.close();
  }
  // A problem may quote what the book holds (a customer's text): one line each, whatever it holds.
  for (const line of report.problems) process.stdout.write(`${oneLine(line)}\n`);
  const counts = `${report.accounts} accounts, ${report.balances} balances, ${report.postings} journal entries, journal position ${report.view}, ${report.checkpoints} checkpoints`;
  if (report.problemCount === 0) {
    process.stdout.write(`ledgerd check: ${place.name}: ${counts}: consistent\n`);
    return;
  }
  const unlisted = report.problemCount - report.problems.length;
  process.stdout.write(`ledgerd check: ${place.name}: ${counts}: ${report.problemCount} problems${unlisted > 0 ? ` (${unlisted} not listed)` : ''}\n`);
  process.exit(exitCodes.damaged);
}

async function migrate(options: { dataDir?: string; config?: string }): Promise<void> {
  const { dataDir, store } = bookOptions(options);
  const outcome = await withProgress(process.stderr, 'ledgerd migrate', 'read', (progress) => migrateBook(dataDir, store, migratePauseHook(process.env), progress));
  const name = placeOf(dataDir, store).name;
  if (!outcome.migrated) {
    process.stdout.write(`ledgerd migrate: ${name}: the book is in store layout ${outcome.layout} already: nothing to do\n`);
    return;
  }
  const { report, grants, index, operations, keptIn } = outcome;
  const moved = [
    ...(grants === null ? [] : [`${grants.held} held and ${grants.revoked} revoked grant index entries moved`]),
    ...(index === null ? [] : [`${index.rewritten} account index entries made compact`]),
    ...(operations === null ? [] : [`${operations.chunks} event chunks rewritten, ${operations.pointers} operations stored once (${operations.whole} kept whole, their event pruned)`]),
  ];
  // A move in place ends with the mark alone: the records of layouts 2-6 are read as they stand (book/migrate-mark-only.ts).
  if (report === null) moved.push('the older records kept as they stand');
  const movedText = moved.join(', ');
  if (report === null || keptIn === null) {
    process.stdout.write(`ledgerd migrate: ${name}: book migrated from store layout ${outcome.from} to ${storeLayout} in place: ${movedText}\n`);
    return;
  }
  process.stdout.write(
    `ledgerd migrate: ${name}: book migrated from store layout 1 to ${storeLayout} and verified: ${report.entriesRead} entries read, ${report.postings} journal entries in ${report.journalChunks} chunks, ${report.accounts} accounts, ${report.assets} assets, ${movedText}\n` +
      `the layout-1 book is kept in ${keptIn}: remove it once the migrated book serves (ledgerd check, then serve)\n`,
  );
}

/** `--log-format`, else `$LEDGERD_LOG_FORMAT`, else text on a terminal and json otherwise. */
function logFormatOf(flag: LogFormat | undefined, env: NodeJS.ProcessEnv): LogFormat {
  const chosen = flag ?? env.LEDGERD_LOG_FORMAT;
  if (chosen === undefined || chosen === '') return defaultLogFormat(process.stderr);
  if (!(logFormats as readonly string[]).includes(chosen)) throw new ConfigError(`LEDGERD_LOG_FORMAT must be one of ${logFormats.join(', ')}`);
  return chosen as LogFormat;
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
  .option('--config <file>', 'config file naming the store (default: $LEDGERD_CONFIG, else DIR/ledgerd.json when present)')
  .option('--genesis <file>', "a prior system's book to load and seal")
  .action(init);

program
  .command('serve')
  .description('serve the book (initialising one with the embedded defaults if the data dir has none)')
  .option('--data-dir <dir>', 'data directory (default: $LEDGERD_DATA_DIR, else ./.ledgerd)')
  .option('--listen <host:port>', 'address to listen on (default: $LEDGERD_LISTEN, else 127.0.0.1:8470)')
  .option('--config <file>', 'config file (default: $LEDGERD_CONFIG, else DIR/ledgerd.json when present)')
  .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (SIGHUP reads the config again and applies a changed logLevel)')
  .addOption(new Option('--log-format <format>', 'log lines on stderr as json or text (default: $LEDGERD_LOG_FORMAT, else text on a terminal, json otherwise)').choices(logFormats))
  .action(async (flags: { dataDir?: string; listen?: string; config?: string; logLevel?: string; logFormat?: LogFormat }) => {
    const sources = { flags, env: process.env };
    const config = loadConfig(sources);
    // Loaded by serve only: the HTTP stack is most of what a start loads, and init, check, restore and migrate need none of it.
    const { serve } = await import('./serve.js');
    return serve(config, version, { logFormat: logFormatOf(flags.logFormat, process.env), reload: () => loadConfig(sources) });
  });

program
  .command('restore')
  .description('make a book from a backup (ledgerctl ops backup) in a data dir that holds none')
  .requiredOption('--from <file>', 'the backup file')
  .option('--verify-key <key>', 'the public half of the source book\'s backup key (64 hex digits, or a file holding them, as DIR/backup.pub): the backup must be signed by it')
  .option('--accept-unverified', 'restore a file without verifying its signature (an unsigned backup of an older ledgerd, or a lost key): only for a file you vouch for by other means')
  .option('--identity <file>', 'an age identity file (age-keygen), for a backup encrypted to its recipient')
  .option('--data-dir <dir>', 'data directory (default: $LEDGERD_DATA_DIR, else ./.ledgerd)')
  .option('--config <file>', 'config file naming the store (default: $LEDGERD_CONFIG, else DIR/ledgerd.json when present)')
  .action(restore);

program
  .command('migrate')
  .description('bring a stopped book written by an older ledgerd (store layout 1) to this version\'s layout; the old book is kept beside it')
  .option('--data-dir <dir>', 'data directory (default: $LEDGERD_DATA_DIR, else ./.ledgerd)')
  .option('--config <file>', 'config file naming the store (default: $LEDGERD_CONFIG, else DIR/ledgerd.json when present)')
  .action(migrate);

program
  .command('check')
  .description('verify a book offline (on PostgreSQL also a served one; a served LevelDB book online: ledgerctl ops check): trial balance, every balance against its journal entries')
  .option('--data-dir <dir>', 'data directory (default: $LEDGERD_DATA_DIR, else ./.ledgerd)')
  .option('--config <file>', 'config file naming the store (default: $LEDGERD_CONFIG, else DIR/ledgerd.json when present)')
  .action(check);

const config = program.command('config').description('the configuration ledgerd serve would use: check it, or show it');
config
  .command('check')
  .description('validate the config file, environment and defaults as serve would at start: exit 0 when valid, 3 (with the reason) when not')
  .option('--data-dir <dir>', 'data directory (default: $LEDGERD_DATA_DIR, else ./.ledgerd)')
  .option('--config <file>', 'config file (default: $LEDGERD_CONFIG, else DIR/ledgerd.json when present)')
  .action((flags: { dataDir?: string; config?: string }) => {
    const sources = { flags, env: process.env };
    loadConfig(sources);
    const { path, explicit } = configFileOf(sources);
    process.stdout.write(`ledgerd config check: ${explicit === undefined && !existsSync(path) ? `no config file (${path}): the defaults and environment` : path}: valid\n`);
  });
config
  .command('show')
  .description('print the effective configuration as JSON (defaults filled in, environment applied), the store URL\'s password redacted')
  .option('--data-dir <dir>', 'data directory (default: $LEDGERD_DATA_DIR, else ./.ledgerd)')
  .option('--config <file>', 'config file (default: $LEDGERD_CONFIG, else DIR/ledgerd.json when present)')
  .action((flags: { dataDir?: string; config?: string }) => {
    process.stdout.write(`${JSON.stringify(configView(loadConfig({ flags, env: process.env })), null, 2)}\n`);
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? exitCodes.ok : exitCodes.usage);
  if (error instanceof ConfigError) fail(`${error.message}; fix the configuration (settings: ledgerd(8), docs/daemon.md)`, exitCodes.config);
  if (error instanceof BookExists) fail(`${error.message}; serve it, or init or restore into another --data-dir`, exitCodes.dataDir);
  if (error instanceof StartupFailure) fail(error.message, error.exitCode);
  if (error instanceof Refused) fail(error.refusal.description, exitCodes.failed);
  // Unforeseen: the message, never a stack trace (run with NODE_DEBUG or a debugger to dig).
  fail(error instanceof Error ? error.message : String(error), exitCodes.failed);
}
