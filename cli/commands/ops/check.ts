/**
 * `ops check`: the online check of the served book (POST /v1/ops/check, then GET until it
 * ends), the same checks as `ledgerd check` on one snapshot while ledgerd serves. Progress
 * on a terminal (stderr); the problems, one line each and escaped, and a summary at the
 * end. Exits 1 unless the book is consistent (damaged, or the check did not finish).
 */
import type { Command } from 'commander';
import type { BookCheck } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { CliError, exitCodes } from '../../errors.js';
import { isTerminal } from '../../io.js';
import { oneLine } from '../../../src/one-line.js';

/** How often a running check is read back. */
const pollEveryMs = 500;

export function buildCheck(parent: Command, make: MakeContext): Command {
  return parent
    .command('check')
    .description("check the served book as ledgerd check does (trial balance, totals, every balance against its journal entries, checkpoints, records), on one snapshot while it serves (operator; POST /v1/ops/check); exits 1 when it finds damage or does not finish")
    .option('--follow', 'start none: follow the running check (or show the latest one) (auditor and up; GET /v1/ops/check)')
    .action(action(make, runCheck));
}

const counted = (c: BookCheck) => `${c.accounts ?? 0} accounts, ${c.balances ?? 0} balances, ${c.postings ?? 0} journal entries`;

export async function runCheck(ctx: Context, options: { follow?: boolean }): Promise<void> {
  // The check outlasts the command's own deadline on a large book: the daemon bounds it (checkTimeMaxMs), each request is still bounded.
  const client = ctx.client().withoutDeadline();
  let check = options.follow === true ? await client.get<BookCheck>('/v1/ops/check') : await client.post<BookCheck>('/v1/ops/check', {});
  const onTerminal = isTerminal(ctx.io.stderr);
  while (check.state === 'running') {
    if (onTerminal) ctx.io.stderr.write(`\r\x1b[Kchecking: ${counted(check)}`);
    await new Promise((resolve) => setTimeout(resolve, pollEveryMs));
    check = await client.get<BookCheck>('/v1/ops/check');
  }
  if (onTerminal) ctx.io.stderr.write('\r\x1b[K');
  ctx.out.result(check, () => summary(check));
  if (check.state !== 'consistent') throw new CliError(`the check ${check.state === 'none' ? 'has not run since the daemon started' : `ended ${check.state}`}`, exitCodes.refused);
}

/** The problems as ledgerd check prints them, then one line; whatever the book holds stays on its line. */
function summary(c: BookCheck): string {
  const lines = (c.problems ?? []).map(oneLine);
  if (c.state === 'none') return 'no check since the daemon started';
  const took = c.finished_at !== undefined && c.started_at !== undefined ? ` in ${((c.finished_at - c.started_at) / 1000).toFixed(1)} s` : '';
  const head = `${counted(c)}${c.view === undefined ? '' : `, journal position ${c.view}`}${c.checkpoints === undefined ? '' : `, ${c.checkpoints} checkpoints`}`;
  if (c.state === 'consistent') lines.push(`check: ${head}: consistent${took}`);
  else if (c.state === 'damaged' && c.problem_count !== undefined) {
    const unlisted = c.problem_count - (c.problems?.length ?? 0);
    lines.push(`check: ${head}: ${c.problem_count} problems${unlisted > 0 ? ` (${unlisted} not listed)` : ''}${took}`);
  } else lines.push(`check: ${head}: ${c.state}${c.reason === undefined ? '' : `: ${oneLine(c.reason)}`}${took}`);
  return lines.join('\n');
}
