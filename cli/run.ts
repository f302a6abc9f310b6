/** Runs one command line and turns its outcome into the CONTRACT's exit code. */
import { CommanderError } from 'commander';
import { completeCommand, printCompletionValues } from './completion-values.js';
import { CliError, RefusedError, exitCodes } from './errors.js';
import type { Io } from './io.js';
import { buildProgram, helpArgv } from './program.js';
import { safeLines } from './safe.js';

export async function runCli(argv: readonly string[], io: Io): Promise<number> {
  // Shell completion's own entry, outside the command tree (so not in the man page or --help).
  if (argv[0] === completeCommand) return printCompletionValues(io, argv.slice(1));
  try {
    const args = helpArgv(argv);
    await (await buildProgram(io, undefined, args)).parseAsync([...args], { from: 'user' });
    return exitCodes.ok;
  } catch (error) {
    return report(io, error);
  }
}

function report(io: Io, error: unknown): number {
  // Commander has printed its message and the hint already. `--help` and `--version` end with 0;
  // a noun given without its verb is a usage error.
  if (error instanceof CommanderError) return error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
  if (error instanceof RefusedError) {
    const retry = error.retryAfterS === null ? '' : `\nretry after ${error.retryAfterS} s with the same --client-key`;
    io.stderr.write(`${safeLines(error.message)}${retry}\n`);
    return error.exitCode;
  }
  if (error instanceof CliError) {
    io.stderr.write(`ledgerctl: ${safeLines(error.message)}\n`);
    return error.exitCode;
  }
  io.stderr.write(`ledgerctl: internal error: ${safeLines(error instanceof Error ? (error.stack ?? error.message) : String(error))}\n`);
  return exitCodes.refused;
}
