/**
 * The command tree: `ledgerctl <noun> <verb>`. The man page test and shell completion read this
 * same tree, so they cannot drift from it. A command line loads only the noun it names (its verbs'
 * modules and what they import): loading every command's modules was most of a short command's
 * start (docs/performance.md, "ledgerctl start-up").
 */
import { Command, type HelpContext } from 'commander';
import { type Builder, type MakeContext, contextFor } from './command.js';
import { exitCodes } from './errors.js';
import type { Io } from './io.js';
import { timeoutDefaultMs } from './limits.js';
import { formats } from './output.js';
import { safeLines } from './safe.js';

export const version = '0.1.0';

/**
 * The nouns, in the order `--help` lists them: name, description, and the module of its verbs
 * (`cli/commands/NOUN/verbs.ts`, exporting `verbs`), imported only when the command line needs it.
 */
const nouns: readonly (readonly [string, string, () => Promise<{ verbs: readonly Builder[] }>])[] = [
  ['profile', 'saved connections and credentials', () => import('./commands/profile/verbs.js')],
  ['auth', 'signing in: challenges, passkey sessions, API keys', () => import('./commands/auth/verbs.js')],
  ['credentials', 'credentials of an identity', () => import('./commands/credentials/verbs.js')],
  ['identities', 'identities (created by the identities principal, listed by the operator)', () => import('./commands/identities/verbs.js')],
  ['accounts', 'ledger accounts', () => import('./commands/accounts/verbs.js')],
  ['custody', 'recoveries and successions', () => import('./commands/custody/verbs.js')],
  ['assets', 'registered assets and their settlement-layer bindings', () => import('./commands/assets/verbs.js')],
  ['aliases', "other systems' names for accounts", () => import('./commands/aliases/verbs.js')],
  ['transfers', 'moving value', () => import('./commands/transfers/verbs.js')],
  ['reservations', 'holding value, then capturing or releasing it', () => import('./commands/reservations/verbs.js')],
  ['withdrawals', 'moving value out to the settlement layer', () => import('./commands/withdrawals/verbs.js')],
  ['settlement', 'the book against the settlement layer (operator)', () => import('./commands/settlement/verbs.js')],
  ['operations', 'the outcome of commands', () => import('./commands/operations/verbs.js')],
  ['grants', 'delegated authority', () => import('./commands/grants/verbs.js')],
  ['ops', "the operator's own commands", () => import('./commands/ops/verbs.js')],
  ['checkpoints', 'the book anchored on the settlement layer', () => import('./commands/checkpoints/verbs.js')],
  ['disclosures', 'signed assertions about an account, and verifying them', () => import('./commands/disclosures/verbs.js')],
  ['events', 'the event stream', () => import('./commands/events/verbs.js')],
];

/** Verbless commands (like gh's `status`): the name each builder gives its command, and the builder, imported when needed. */
const singles: readonly (readonly [string, () => Promise<Builder>])[] = [
  ['statements', async () => (await import('./commands/statements/statements.js')).buildStatements],
  ['movements', async () => (await import('./commands/movements/movements.js')).buildMovements],
  ['trial-balance', async () => (await import('./commands/trial-balance/trial-balance.js')).buildTrialBalance],
  ['dashboard', async () => (await import('./commands/dashboard/dashboard.js')).buildDashboard],
  ['completion', async () => (await import('./commands/completion/completion.js')).buildCompletion],
];

/** Commands that read the whole tree (a completion script holds every command), so load every command. */
const readsWholeTree = new Set(['completion']);

/**
 * The program: the whole tree, or with `argv` only what that command line runs (the noun or
 * verbless command it names; nothing more for `--version`; everything when it names none, as
 * `--help` and a mistyped command need).
 */
export async function buildProgram(io: Io, make: MakeContext = contextFor(io), argv?: readonly string[]): Promise<Command> {
  const program = new Command('ledgerctl')
    .description('ledgerctl operates a ledger service (ledgerd): accounts, transfers, reservations, grants and the book')
    .version(version)
    .option('--url <url>', 'the service address (else $LEDGER_URL, the profile, http://127.0.0.1:8470)')
    .option('--token <token>', 'the bearer token (else $LEDGER_TOKEN, the profile)')
    .option('--profile <name>', 'the profile to use (else $LEDGER_PROFILE, the active one)')
    .option('--json', 'print the JSON the service returned (the default when stdout is not a terminal)')
    .option('-o, --output <format>', `output format: ${formats.join(', ')} (default: table on a terminal, else json)`)
    .option('--no-color', 'no colours or styles on a terminal (also when $NO_COLOR is set)')
    .option('--field <path>', 'print only this field of the result, raw (for example result.account)')
    .option('--timeout-ms <ms>', 'bound of the whole command: its requests, retries and wait for a decision', String(timeoutDefaultMs))
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .configureOutput({ writeOut: (s) => void io.stdout.write(s), writeErr: (s) => void io.stderr.write(safeLines(s)) })
    .exitOverride();
  const wanted = argv === undefined ? () => true : needed(program, argv);
  const [verbsOf, builders] = await Promise.all([
    Promise.all(nouns.map(([name, , load]) => (wanted(name) ? load() : null))),
    Promise.all(singles.map(([name, load]) => (wanted(name) ? load() : null))),
  ]);
  nouns.forEach(([name, description], i) => {
    const loaded = verbsOf[i];
    if (loaded === null || loaded === undefined) return;
    const noun = new Noun(name).copyInheritedSettings(program).description(description);
    program.addCommand(noun);
    for (const build of loaded.verbs) build(noun, make);
  });
  singles.forEach(([name], i) => {
    const build = builders[i];
    if (build === null || build === undefined) return;
    // The table's name decides what is loaded for a command line: it must be the command's own.
    const command = build(program, make);
    if (command.name() !== name) throw new Error(`program.ts: the verbless command listed as ${name} is named ${command.name()}`);
  });
  // Examples are only shown in help: a command line that asks for none starts without them.
  if (argv === undefined || argv.some((a) => a === '-h' || a === '--help' || a === 'help')) {
    const [{ examplesHelp, examplesOf }, { leaves }] = await Promise.all([import('./examples.js'), import('./tree.js')]);
    for (const { path, command } of leaves(program)) command.addHelpText('after', examplesHelp(examplesOf(path)));
  }
  withHints(program, []);
  return program;
}

/** Which nouns and verbless commands `argv` needs, from its first word past the global options. */
function needed(program: Command, argv: readonly string[]): (name: string) => boolean {
  const word = commandWord(program, argv);
  const names = [...nouns.map(([name]) => name), ...singles.map(([name]) => name)];
  if (word !== null && names.includes(word) && !readsWholeTree.has(word)) return (name) => name === word;
  const versionOnly = word === null && argv.some((a) => a === '-V' || a === '--version') && !argv.some((a) => a === '-h' || a === '--help');
  return () => !versionOnly;
}

/** The first word of `argv` that is neither an option nor an option's value (commander's own options say which take one). */
function commandWord(program: Command, argv: readonly string[]): string | null {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return null;
    if (!arg.startsWith('-') || arg === '-') return arg;
    const option = program.options.find((o) => o.long === arg || o.short === arg);
    if (option !== undefined && (option.required || option.optional)) i++;
  }
  return null;
}

/**
 * A noun given without its verb is a usage error of one line naming the verbs (commander would
 * print the noun's whole help); `--help` and `help NOUN` still show it.
 */
class Noun extends Command {
  // Groups within a noun (`custody changes`) answer a missing verb the same way.
  override createCommand(name?: string): Command {
    return new Noun(name);
  }

  // Both of commander's signatures, so Noun stays a Command.
  override help(context?: HelpContext | ((text: string) => string)): never {
    if (typeof context === 'object' && context.error) {
      this.error(`error: ${this.name()} needs a verb: ${this.commands.map((c) => c.name()).join(', ')}`, { exitCode: exitCodes.usage, code: 'ledgerctl.verb' });
    }
    return super.help(context as HelpContext);
  }
}

/** A usage error is one line, then where its command's help is (not the whole usage). */
function withHints(command: Command, path: readonly string[]): void {
  command.showHelpAfterError(`hint: ledgerctl ${path.length === 0 ? '--help' : `help ${path.join(' ')}`}`);
  for (const sub of command.commands) withHints(sub, [...path, sub.name()]);
}

/** `ledgerctl help NOUN VERB` is `ledgerctl NOUN VERB --help` (commander's own help command takes one word). */
export function helpArgv(argv: readonly string[]): readonly string[] {
  return argv[0] === 'help' ? [...argv.slice(1), '--help'] : argv;
}
