/**
 * The command tree: `ledgerctl <noun> <verb>`. The man page test and shell completion read this
 * same tree, so they cannot drift from it.
 */
import { Command, type HelpContext } from 'commander';
import { buildBalance } from './commands/accounts/balance.js';
import { buildCustody } from './commands/accounts/custody.js';
import { buildClose, buildFreeze, buildUnfreeze } from './commands/accounts/lifecycle.js';
import { buildLiabilities, buildVerifyLiabilities } from './commands/accounts/liabilities.js';
import { buildReclaim } from './commands/accounts/reclaim.js';
import { buildRecoveryMechanisms } from './commands/accounts/recovery-mechanisms.js';
import { buildChanges } from './commands/custody/changes.js';
import { buildRecoveryTerms } from './commands/identities/recovery-terms.js';
import { buildIdentityRestrictions } from './commands/ops/identities.js';
import { buildAccountList } from './commands/accounts/list.js';
import { buildOpen } from './commands/accounts/open.js';
import { buildShow as buildAccountShow } from './commands/accounts/show.js';
import { buildLookup } from './commands/aliases/lookup.js';
import { buildBind } from './commands/assets/bind.js';
import { buildDeprecate } from './commands/assets/deprecate.js';
import { buildList as buildAssetList } from './commands/assets/list.js';
import { buildRegister as buildAssetRegister } from './commands/assets/register.js';
import { buildChallenge } from './commands/auth/challenge.js';
import { buildLogin } from './commands/auth/login.js';
import { buildLogout } from './commands/auth/logout.js';
import { buildWhoami } from './commands/auth/whoami.js';
import { buildConsistency, buildVerify as buildCheckpointVerify } from './commands/checkpoints/consistency.js';
import { buildCreate as buildCheckpointCreate } from './commands/checkpoints/create.js';
import { buildExport as buildCheckpointExport } from './commands/checkpoints/export.js';
import { buildList as buildCheckpointList } from './commands/checkpoints/list.js';
import { buildShow as buildCheckpointShow } from './commands/checkpoints/show.js';
import { buildWait as buildCheckpointWait } from './commands/checkpoints/wait.js';
import { buildRegister } from './commands/credentials/register.js';
import { buildCreate as buildDisclosureCreate } from './commands/disclosures/create.js';
import { buildShow as buildDisclosureShow } from './commands/disclosures/show.js';
import { buildVerify as buildDisclosureVerify } from './commands/disclosures/verify.js';
import { buildGrantList } from './commands/grants/list.js';
import { buildIssue } from './commands/grants/issue.js';
import { buildRevoke } from './commands/grants/revoke.js';
import { buildIdentityCreate } from './commands/identities/create.js';
import { buildBackup } from './commands/ops/backup.js';
import { buildIssuanceGrant } from './commands/ops/issuance-grant.js';
import { buildParties } from './commands/ops/parties.js';
import { buildAudit, buildMembers } from './commands/ops/members.js';
import { buildProposals } from './commands/ops/proposals.js';
import { buildCompletion } from './commands/completion/completion.js';
import { buildDashboard } from './commands/dashboard/dashboard.js';
import { buildTail } from './commands/events/tail.js';
import { buildMovements } from './commands/movements/movements.js';
import { buildShow as buildOperationShow } from './commands/operations/show.js';
import { buildWait } from './commands/operations/wait.js';
import { buildAdd } from './commands/profile/add.js';
import { buildList as buildProfileList } from './commands/profile/list.js';
import { buildRemove } from './commands/profile/remove.js';
import { buildRename } from './commands/profile/rename.js';
import { buildShow as buildProfileShow } from './commands/profile/show.js';
import { buildUse } from './commands/profile/use.js';
import { buildCapture } from './commands/reservations/capture.js';
import { buildCreate as buildReservationCreate } from './commands/reservations/create.js';
import { buildRelease } from './commands/reservations/release.js';
import { buildCompare, buildObserve, buildRescan, buildSettlementStatus, buildSync } from './commands/settlement/settlement.js';
import { buildStatements } from './commands/statements/statements.js';
import { buildTransferCreate } from './commands/transfers/create.js';
import { buildTrialBalance } from './commands/trial-balance/trial-balance.js';
import { buildWithdrawalCreate } from './commands/withdrawals/create.js';
import { type MakeContext, contextFor } from './command.js';
import { exitCodes } from './errors.js';
import { examplesHelp, examplesOf } from './examples.js';
import type { Io } from './io.js';
import { timeoutDefaultMs } from './limits.js';
import { formats } from './output.js';
import { safeLines } from './safe.js';
import { leaves } from './tree.js';

export const version = '0.1.0';

type Builder = (parent: Command, make: MakeContext) => Command;

/** The nouns and their verbs, in the order `--help` lists them. */
const nouns: readonly (readonly [string, string, readonly Builder[]])[] = [
  ['profile', 'saved connections and credentials', [buildAdd, buildUse, buildProfileList, buildProfileShow, buildRemove, buildRename]],
  ['auth', 'signing in: challenges, passkey sessions, API keys', [buildChallenge, buildLogin, buildLogout, buildWhoami]],
  ['credentials', 'credentials of an identity', [buildRegister]],
  ['identities', 'identities (the identities principal)', [buildIdentityCreate, buildRecoveryTerms]],
  ['accounts', 'ledger accounts', [buildOpen, buildAccountShow, buildBalance, buildAccountList, buildCustody, buildRecoveryMechanisms, buildReclaim, buildFreeze, buildUnfreeze, buildClose, buildLiabilities, buildVerifyLiabilities]],
  ['custody', 'recoveries and successions', [buildChanges]],
  ['assets', 'registered assets and their settlement-layer bindings', [buildAssetList, buildAssetRegister, buildBind, buildDeprecate]],
  ['aliases', "other systems' names for accounts", [buildLookup]],
  ['transfers', 'moving value', [buildTransferCreate]],
  ['reservations', 'holding value, then capturing or releasing it', [buildReservationCreate, buildCapture, buildRelease]],
  ['withdrawals', 'moving value out to the settlement layer', [buildWithdrawalCreate]],
  ['settlement', 'the book against the settlement layer (operator)', [buildSettlementStatus, buildSync, buildCompare, buildRescan, buildObserve]],
  ['operations', 'the outcome of commands', [buildOperationShow, buildWait]],
  ['grants', 'delegated authority', [buildIssue, buildGrantList, buildRevoke]],
  ['ops', "the operator's own commands", [buildBackup, buildIssuanceGrant, buildParties, buildIdentityRestrictions, buildMembers, buildProposals, buildAudit]],
  ['checkpoints', 'the book anchored on the settlement layer', [buildCheckpointList, buildCheckpointShow, buildCheckpointCreate, buildCheckpointWait, buildCheckpointExport, buildConsistency, buildCheckpointVerify]],
  ['disclosures', 'signed assertions about an account, and verifying them', [buildDisclosureCreate, buildDisclosureShow, buildDisclosureVerify]],
  ['events', 'the event stream', [buildTail]],
];

/** Verbless commands (like gh's `status`). */
const singles: readonly Builder[] = [buildStatements, buildMovements, buildTrialBalance, buildDashboard, buildCompletion];

export function buildProgram(io: Io, make: MakeContext = contextFor(io)): Command {
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
  for (const [name, description, verbs] of nouns) {
    const noun = new Noun(name).copyInheritedSettings(program).description(description);
    program.addCommand(noun);
    for (const build of verbs) build(noun, make);
  }
  for (const build of singles) build(program, make);
  for (const { path, command } of leaves(program)) command.addHelpText('after', examplesHelp(examplesOf(path)));
  withHints(program, []);
  return program;
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
