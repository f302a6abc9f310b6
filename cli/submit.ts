/**
 * Submitting commands: the flags every submitting verb takes (`--client-key` so a runbook can retry
 * safely, `--on-behalf-of`, `--wait`), and printing the acknowledgement or the decided operation.
 */
import type { Command } from 'commander';
import { type CommandReply, type OperationView, isDecided } from './api.js';
import type { Context } from './context.js';
import { isTerminal } from './io.js';
import { waitTimeoutDefaultMs, waitTimeoutMaxMs } from './limits.js';
import { details, show, time } from './output.js';
import { integer, jsonText, timeMs } from './parse.js';
import { failureOf, waitForDecision } from './wait.js';

export interface SubmitFlags {
  clientKey?: string;
  onBehalfOf?: string;
  wait?: boolean;
  timeoutMs?: string;
}

export function withSubmitFlags(command: Command): Command {
  return command
    .option('--client-key <key>', 'idempotency key (at most 256 characters): a retry with it never has a second effect')
    .option('--on-behalf-of <identity>', 'the identity you act for, where different from the signed-in one')
    .option('--wait', 'wait for the decision and print the operation instead of the acknowledgement')
    .option('--timeout-ms <ms>', 'how long --wait waits for the decision', String(waitTimeoutDefaultMs));
}

/** `--reference`: the pass-through value every command with a `reference` takes. */
export function withReference(command: Command): Command {
  return command.option('--reference <json>', 'pass-through reference, one JSON value, kept and echoed');
}

export const referenceOf = (text: string | undefined) => (text === undefined ? undefined : jsonText('--reference', text));

/** `--deadline`: when a transfer must be decided by, or a reservation expires. */
export function withDeadline(command: Command, meaning: string): Command {
  return command.option('--deadline <time>', `${meaning} (ms since the epoch, or ISO-8601)`);
}

export const deadlineOf = (text: string | undefined) => (text === undefined ? undefined : Number(timeMs('--deadline', text)));

export const timeoutOf = (flags: { timeoutMs?: string | undefined }): number =>
  integer('--timeout-ms', flags.timeoutMs ?? String(waitTimeoutDefaultMs), 1, waitTimeoutMaxMs);

/** Sends a command and prints its reply, or with `--wait` the decided operation. */
export async function submit(ctx: Context, path: string, body: unknown, flags: SubmitFlags): Promise<CommandReply> {
  const reply = await send(ctx, path, body, flags);
  if (flags.wait === true && !isDecided(reply.state)) printOperation(ctx, await decision(ctx, reply.operation_reference, timeoutOf(flags)));
  else printReply(ctx, reply);
  return reply;
}

export function send(ctx: Context, path: string, body: unknown, flags: SubmitFlags): Promise<CommandReply> {
  return ctx.client().command(path, body, { clientKey: flags.clientKey, onBehalfOf: flags.onBehalfOf });
}

/** Waits for a decision, with a spinner on stderr when stderr is a terminal. */
export async function decision(ctx: Context, reference: string, timeoutMs: number): Promise<OperationView> {
  const stderr = ctx.io.stderr;
  // A terminal of no width (a bare pty) would get one character per line: no spinner there either.
  if (!isTerminal(stderr) || !((stderr.columns ?? 0) > 0)) return waitForDecision(ctx.client(), reference, timeoutMs);
  const [{ render }, { createElement }, { Waiting }] = await Promise.all([import('ink'), import('react'), import('./views/waiting.js')]);
  const spinner = render(createElement(Waiting, { reference, state: 'Received' }), { stdout: stderr as NodeJS.WriteStream, stdin: ctx.io.stdin as NodeJS.ReadStream, patchConsole: false });
  try {
    return await waitForDecision(ctx.client(), reference, timeoutMs, (view) => spinner.rerender(createElement(Waiting, { reference, state: view.state })));
  } finally {
    spinner.clear();
    spinner.unmount();
  }
}

export function printReply(ctx: Context, reply: CommandReply): void {
  ctx.out.result(reply, () =>
    details({
      operation: reply.operation_reference,
      state: reply.state ?? '-',
      terminal: String(reply.terminal),
      'client key': `${reply.client_key}${reply.client_key_derived ? ' (derived)' : ''}`,
      ...resultLines(reply.result),
      'api key': reply.api_key ?? undefined,
    }),
  );
}

/** Prints an operation view; a rejected or expired one then fails the process (exit 1). */
export function printOperation(ctx: Context, view: OperationView): void {
  ctx.out.result(view, () =>
    details({
      operation: view.operation_reference,
      command: view.command,
      state: view.state,
      terminal: String(view.terminal),
      submitted: time(view.submitted_at),
      decided: time(view.decided_at),
      'client key': view.client_key,
      reference: view.reference === undefined ? undefined : show(view.reference),
      ...resultLines(view.result),
      error: view.error === undefined ? undefined : `${view.error.error}: ${view.error.description}`,
    }),
  );
  const failure = failureOf(view);
  if (failure !== null) throw failure;
}

function resultLines(result: CommandReply['result']): Record<string, string> {
  const lines: Record<string, string> = {};
  for (const [key, value] of Object.entries(result ?? {})) if (value !== null && value !== undefined) lines[key] = show(value);
  return lines;
}
