/**
 * Submitting commands: the flags every submitting verb takes (`--client-key` so a runbook can retry
 * safely, `--on-behalf-of`, `--no-wait`), waiting for the decision (CONTRACT 11) and printing it,
 * or the acknowledgement.
 */
import type { Command } from 'commander';
import type { CommandReply, OperationView } from './api.js';
import type { Context } from './context.js';
import { UnreachableError, UsageError } from './errors.js';
import { isTerminal } from './io.js';
import { submitAttemptsMax, submitRetryDelayMs } from './limits.js';
import { safe } from './safe.js';
import { startSpinner } from './spinner.js';
import { type AmountText, Money, minorUnitsText } from './money.js';
import { details, show, time } from './output.js';
import { jsonText, timeMs } from './parse.js';
import { type WaitUntil, failureOf, waitForDecision } from './wait.js';

export interface SubmitFlags {
  clientKey?: string;
  onBehalfOf?: string;
  /** False with `--no-wait`; `--wait` (the default) is kept for scripts that pass it. */
  wait?: boolean;
  /** `--propose`: send the command as a proposal for another member to approve (CONTRACT 13). */
  propose?: boolean;
  justification?: string;
}

export function withSubmitFlags(command: Command): Command {
  command
    .option('--client-key <key>', 'idempotency key (at most 256 characters): a retry with it never has a second effect (default: a random one, shown on stderr)')
    .option('--on-behalf-of <identity>', 'the identity you act for, where different from the signed-in one')
    .option('--wait', 'wait for the decision (the default; kept for scripts)')
    .option('--no-wait', 'print the acknowledgement instead of waiting for the decision')
    .option('--propose', 'operator members: propose this command for another member to approve (with --justification), and print the proposal');
  // A verb with a justification of its own gives the proposal that one.
  if (!command.options.some((o) => o.long === '--justification')) command.option('--justification <text>', 'with --propose: why, kept with the proposal');
  return command;
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

/**
 * Sends a command, waits for its decision and prints the decided operation (a refused one fails
 * the process, exit 1) and returns it; with `--no-wait`, prints the acknowledgement (null).
 */
export async function submit(ctx: Context, path: string, body: unknown, flags: SubmitFlags): Promise<OperationView | null> {
  if (flags.propose === true) return submit(ctx, '/v1/ops/proposals', proposalOf(path, body, flags), { ...flags, propose: false, onBehalfOf: undefined });
  const reply = await send(ctx, path, body, flags);
  if (flags.wait === false) {
    printReply(ctx, reply);
    return null;
  }
  const view = await decisionOf(ctx, reply, flags);
  await printOperation(ctx, view);
  return view;
}

/** `--propose`: the command as a proposal's request (CONTRACT 13); its decision prints `proposal`, the id to approve. */
function proposalOf(path: string, body: unknown, flags: SubmitFlags): unknown {
  if (flags.justification === undefined || flags.justification.trim() === '') throw new UsageError('--propose needs --justification: why, kept with the proposal');
  // The request names its path as the route spells it (ids unescaped: the service takes no escapes there).
  return { request: { method: 'POST', path: decodeURIComponent(path), body, ...(flags.onBehalfOf === undefined ? {} : { on_behalf_of: flags.onBehalfOf }) }, justification: flags.justification };
}

/** The decision of an acknowledged command; a connection lost while waiting says how to go on safely. */
export async function decisionOf(ctx: Context, reply: CommandReply, flags: SubmitFlags, until: WaitUntil = 'decided'): Promise<OperationView> {
  try {
    return await decision(ctx, reply.operation_reference, until);
  } catch (error) {
    if (!(error instanceof UnreachableError)) throw error;
    const key = ctx.clientKey(flags.clientKey);
    throw new UnreachableError(`${error.message}; ${reply.operation_reference} was acknowledged: ledgerctl operations wait ${reply.operation_reference}, or run the command again with --client-key ${key} (safe: no second effect)`);
  }
}

/**
 * Sends a command under this invocation's client key. A connection lost before the reply is retried
 * with the same key (the service gives the first attempt's reply, never a second effect); when the
 * attempts run out, stderr says that running the command again with that key is safe. A reply to a
 * repeat of an earlier command is said on stderr, unless `ownRepeat` (this invocation repeats its own).
 */
export async function send(ctx: Context, path: string, body: unknown, flags: SubmitFlags, ownRepeat = false): Promise<CommandReply> {
  const clientKey = ctx.clientKey(flags.clientKey);
  for (let attempt = 1; ; attempt++) {
    try {
      const { reply, replayed } = await ctx.client().commandTaken(path, body, { clientKey, onBehalfOf: flags.onBehalfOf });
      // A repeat did nothing again: what follows is an earlier command's reply, and the person reading should know.
      // Not when the repeat is this invocation's own (a retry whose first attempt got through; `ownRepeat`, asked for).
      if (replayed && attempt === 1 && !ownRepeat) ctx.out.note(`ledgerctl: replay: client key ${clientKey} was taken before; this is ${safe(reply.operation_reference)}'s reply, nothing was done again`);
      return reply;
    } catch (error) {
      if (!(error instanceof UnreachableError)) throw error;
      const pauseMs = submitRetryDelayMs * 2 ** (attempt - 1);
      // A retry that could not be answered within --timeout-ms is not made: the bound is the whole command's.
      if (attempt >= submitAttemptsMax || ctx.client().remainingMs() <= pauseMs) {
        throw new UnreachableError(`${error.message} (after ${attempt} attempt${attempt === 1 ? '' : 's'}); whether it was received is unknown: running it again with --client-key ${clientKey} is safe`);
      }
      // Loaded only for a retry: a call that never retries starts without it.
      const { setTimeout: delay } = await import('node:timers/promises');
      await delay(pauseMs);
    }
  }
}

/** Waits (at most `--timeout-ms`) for a decision, with a spinner line on stderr when stderr is a terminal. */
export async function decision(ctx: Context, reference: string, until: WaitUntil = 'decided'): Promise<OperationView> {
  const timeoutMs = ctx.timeoutMs;
  const stderr = ctx.io.stderr;
  // A terminal of no width (a bare pty) would get one character per line: no spinner there either.
  if (!isTerminal(stderr) || !((stderr.columns ?? 0) > 0)) return waitForDecision(ctx.client(), reference, timeoutMs, undefined, until);
  const spinner = startSpinner(stderr, reference, 'Received');
  try {
    return await waitForDecision(ctx.client(), reference, timeoutMs, (view) => spinner.state(view.state), until);
  } finally {
    spinner.stop();
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

/**
 * Prints an operation view: who did what (principal, credential, command, amounts in major units,
 * from and to) and the decision; a rejected or expired one then fails the process (exit 1).
 */
export async function printOperation(ctx: Context, view: OperationView): Promise<void> {
  const amount = ctx.out.machine || ctx.out.picksField || (view.moves ?? []).length === 0 ? minorUnitsText : await amountsOf(ctx);
  ctx.out.result(view, () => details(operationLines(view, amount)));
  const failure = failureOf(view);
  if (failure !== null) throw failure;
}

/** Amounts in major units; a caller the registry does not answer still gets its operation, in minor units saying so. */
const amountsOf = async (ctx: Context): Promise<AmountText> => (await Money.readOrNone(ctx.client())).show;

/** Where a move with no credited account goes: a reservation holds it on the payer, a withdrawal sends it to the layer. */
const noCreditText = (command: string) => (command === 'withdraw' ? '(the settlement layer)' : '(held on the payer)');

function operationLines(view: OperationView, amount: AmountText): Record<string, string | undefined> {
  const moves = view.moves ?? [];
  const moveLines: Record<string, string> =
    moves.length === 1
      ? { amount: amount(moves[0]!.amount, moves[0]!.asset), from: moves[0]!.from, to: moves[0]!.to ?? noCreditText(view.command) }
      : Object.fromEntries(moves.map((m, i) => [`leg ${i}`, `${amount(m.amount, m.asset)}  ${m.from} -> ${m.to ?? noCreditText(view.command)}`]));
  const lines = {
    operation: view.operation_reference,
    command: view.command,
    principal: view.principal,
    credential: view.credential,
    'on behalf of': view.on_behalf_of,
    ...moveLines,
    state: view.state,
    error: view.error === undefined ? undefined : `${view.error.error}: ${view.error.description}`,
    terminal: String(view.terminal),
    submitted: time(view.submitted_at),
    decided: time(view.decided_at),
    'client key': view.client_key,
    reference: view.reference === undefined ? undefined : show(view.reference),
  };
  // A result named like a line above (a registration's new `credential`) is said to be the result's.
  const results = Object.entries(resultLines(view.result)).map(([key, value]) => [Object.hasOwn(lines, key) ? `result ${key}` : key, value]);
  return { ...lines, ...Object.fromEntries(results) };
}

function resultLines(result: CommandReply['result']): Record<string, string> {
  const lines: Record<string, string> = {};
  for (const [key, value] of Object.entries(result ?? {})) {
    if (value === null || value === undefined) continue;
    if (key === 'postings' && Array.isArray(value)) lines.postings = `${value.length} (journal seq ${value.join(', ')})`;
    else if (key === 'effective_at' && typeof value === 'number') lines['effective at'] = time(value);
    else lines[key] = show(value);
  }
  return lines;
}
