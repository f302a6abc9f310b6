/**
 * The CLI's failures and the exit code each one ends the process with (CONTRACT 1):
 * 0 ok, 1 refused by the service, 2 usage, 3 cannot reach the service; and 4, the token is missing,
 * unknown or expired (HTTP 401), so a script tells "sign in again" from a business refusal.
 */
import { oneLine } from '../src/one-line.js';

export const exitCodes = { ok: 0, refused: 1, usage: 2, unreachable: 3, unauthenticated: 4 } as const;
export type ExitCode = (typeof exitCodes)[keyof typeof exitCodes];

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
  }
}

/** The command line itself is wrong: the usage is printed with it. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, exitCodes.usage);
  }
}

/** The service answered with a refusal `{error, description}`; printed as `ERR-Code: description`. */
export class RefusedError extends CliError {
  constructor(
    readonly code: string,
    readonly description: string,
    readonly retryAfterS: number | null = null,
    exitCode: ExitCode = exitCodes.refused,
  ) {
    // The description may echo what a caller sent: one line, so it cannot forge the lines after it.
    super(`${oneLine(code)}: ${oneLine(description)}`, exitCode);
  }
}

/** The service could not be reached (connection refused, timeout, unknown host). */
export class UnreachableError extends CliError {
  constructor(message: string) {
    super(message, exitCodes.unreachable);
  }
}
