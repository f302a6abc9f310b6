/**
 * man/ledgerctl.1, generated from the command tree (as gh does) with the prose around it.
 * Regenerate with `npm run build && node dist/cli/manpage-write.js`; a test keeps the file in step.
 */
import type { Command, Option } from 'commander';
import { exitCodes } from './errors.js';
import { examplesOf } from './examples.js';
import { leaves, ownOptions } from './tree.js';

/** Roff text: backslashes escaped, hyphens as minus signs (copy-pasteable options), no line starting a request. */
export function roff(text: string): string {
  return text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/^([.'])/gm, '\\&$1');
}

const bold = (text: string) => `\\fB${roff(text)}\\fR`;

function optionEntry(option: Option): string {
  const shown = option.defaultValue === undefined || option.defaultValue === false || option.negate ? '' : ` (default: ${String(option.defaultValue)})`;
  const required = option.mandatory ? ' (required)' : '';
  return `.TP\n${bold(option.flags)}\n${roff(option.description + shown + required)}`;
}

function synopsis(path: string[], command: Command): string {
  const args = command.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`));
  return [`ledgerctl ${path.join(' ')}`, ...args, ...(ownOptions(command).length > 0 ? ['[options]'] : [])].join(' ');
}

function commandSection(path: string[], command: Command): string {
  const lines = [`.SS ${bold(synopsis(path, command))}`, roff(command.description())];
  for (const argument of command.registeredArguments) lines.push(`.TP\n${bold(argument.name())}\n${roff(argument.description)}`);
  for (const option of ownOptions(command)) lines.push(optionEntry(option));
  const examples = examplesOf(path);
  if (examples.length > 0) lines.push('.PP\nExamples:\n.RS\n.nf', ...examples.map(roff), '.fi\n.RE');
  return lines.join('\n');
}

export function renderManPage(program: Command, version: string): string {
  const sections = [
    `.TH LEDGERCTL 1 "" "ledger ${version}" "User Commands"`,
    '.SH NAME',
    'ledgerctl \\- operate a ledger service (ledgerd) from a terminal or a runbook',
    '.SH SYNOPSIS',
    `${bold('ledgerctl')} \\fInoun\\fR \\fIverb\\fR [\\fIoptions\\fR]`,
    '.br',
    `${bold('ledgerctl')} \\fIcommand\\fR [\\fIoptions\\fR]`,
    '.SH DESCRIPTION',
    roff(
      'ledgerctl is the operator CLI of ledger. Commands are acknowledged by the service and decided later: every command that submits waits for the decision (at most --timeout-ms) and prints the decided operation, or with --no-wait the acknowledgement with its operation reference. Without --client-key each invocation sends a fresh random client key, shown on stderr: running the command again with --client-key and that key is safe, never a second effect. Results go to stdout, as tables on a terminal and as the JSON the service returned with --json or when stdout is not a terminal; everything else goes to stderr. Amount flags take minor units as a bare integer (--amount 1050), as scripts always wrote them, or major units with a decimal point or the asset symbol (--amount 10.50, --amount "10.50 USD"); more decimals than the asset has is a usage error (exit 2). On a terminal every amount shows in major units with its symbol (10.50 USD); --json always carries the service\'s minor-unit strings. A repeat under a client key is answered with the first reply, and stderr says it was a replay.',
    ),
    '.SH GLOBAL OPTIONS',
    ...ownOptions(program).map(optionEntry),
    '.SH COMMANDS',
    ...leaves(program).map(({ path, command }) => commandSection(path, command)),
    '.SH CONNECTION',
    roff('Flags beat the environment, which beats the profile. The service address is --url, else $LEDGER_URL, else the profile in use, else http://127.0.0.1:8470. The bearer token is --token, else $LEDGER_TOKEN, else the profile\'s token (from profile add --token or auth login). An explicit --profile uses that profile\'s address and token whatever the environment says; a profile that does not exist is a usage error. Where an option takes an account it takes an identifier, a name saved in the profile by accounts open --save-as, or a ledger alias such as treasury:USD.'),
    '.SH EXIT STATUS',
    `.TP\n${exitCodes.ok}\n${roff('Success.')}`,
    `.TP\n${exitCodes.refused}\n${roff('Refused by the service: its code and description are printed on stderr as ERR-Code: description. A decided operation that was rejected or expired, or a wait for a decision that ran out of --timeout-ms, also exits 1.')}`,
    `.TP\n${exitCodes.usage}\n${roff('Usage error: one line on stderr, and the help command that shows the usage.')}`,
    `.TP\n${exitCodes.unreachable}\n${roff('The service cannot be reached (connection refused, no answer within --timeout-ms, unknown host), or it answered past the bound of one answer (16 MiB; a backup line, 64 MiB): a broken service, or not a ledgerd.')}`,
    `.TP\n${exitCodes.unauthenticated}\n${roff('Not signed in: the token is missing, unknown or expired (ERR-CredentialInvalid). Sign in again (auth login) or give another token.')}`,
    '.SH ENVIRONMENT',
    `.TP\n${bold('LEDGER_URL')}\n${roff('The service address.')}`,
    `.TP\n${bold('LEDGER_TOKEN')}\n${roff('The bearer token: an API key or a session.')}`,
    `.TP\n${bold('LEDGER_PROFILE')}\n${roff('The profile to use.')}`,
    `.TP\n${bold('LEDGERCTL_CONFIG_DIR')}\n${roff('Where profiles are kept, instead of the user configuration directory.')}`,
    `.TP\n${bold('NO_COLOR')}\n${roff('Set and not empty: no colours or styles, as with --no-color.')}`,
    '.SH FILES',
    `.TP\n${bold('config.json')}\n${roff('Profiles: service addresses and relying-party settings (mode 0600).')}`,
    `.TP\n${bold('secrets.json')}\n${roff('Tokens, ed25519 private keys and the software passkey of each profile (mode 0600). Never printed.')}`,
    '.SH EXAMPLES',
    '.nf',
    roff(
      [
        'export LEDGER_TOKEN=$(cat .ledgerd/operator.key)',
        'ledgerctl trial-balance',
        'ledgerctl transfers create --from treasury:USD --to ACCT --amount 1000 --asset USD --client-key step-7',
        'ledgerctl accounts balance ACCT',
        'ledgerctl operations wait op_0000000000000007abcdef --timeout-ms 30000',
        'ledgerctl movements --account ACCT --all --json > movements.ndjson',
        'ledgerctl completion bash > /etc/bash_completion.d/ledgerctl',
      ].join('\n'),
    ),
    '.fi',
    '.SH SEE ALSO',
    '\\fBledgerd\\fR(8)',
  ];
  return `${sections.join('\n')}\n`;
}
