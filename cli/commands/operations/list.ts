import type { Command } from 'commander';
import type { OperationView } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import type { AmountText } from '../../money.js';
import { time } from '../../output.js';
import { listOps, withPageFlags } from '../../ops-listings.js';
import type { PageOptions } from '../../pages.js';
import { timeMs } from '../../parse.js';

interface ListOptions extends PageOptions {
  state?: string;
  command?: string;
  principal?: string;
  from?: string;
  to?: string;
}

export function buildOperationList(parent: Command, make: MakeContext): Command {
  return withPageFlags(
    parent
      .command('list')
      .description('every operation, newest first (operator; GET /v1/ops/operations)')
      .option('--state <state>', 'Received, Reserved, Completed, Rejected, Expired, Captured, Released, ...')
      .option('--command <type>', 'command type: transfer, reserve, open_account, ...')
      .option('--principal <identity>', 'submitted by this principal, did:ledger:id:<id>')
      .option('--from <time>', 'submitted at or after (ms since the epoch, or ISO-8601)')
      .option('--to <time>', 'submitted before'),
    'operation',
  ).action(action(make, runList));
}

/** What an operation moves, in one cell: its first move, and how many more. */
function movesCell(op: OperationView, amount: AmountText): string {
  const [first, ...rest] = op.moves ?? [];
  if (first === undefined) return '-';
  const to = first.to === null ? '(held)' : first.to;
  return `${amount(first.amount, first.asset)} ${first.from} -> ${to}${rest.length > 0 ? ` (+${rest.length})` : ''}`;
}

async function runList(ctx: Context, options: ListOptions): Promise<void> {
  const filters = {
    state: options.state,
    command: options.command,
    principal: options.principal,
    from: options.from === undefined ? undefined : timeMs('--from', options.from),
    to: options.to === undefined ? undefined : timeMs('--to', options.to),
  };
  await listOps<OperationView>(ctx, options, 'operations', filters, (amount) => [
    { header: 'SUBMITTED', value: (o) => time(o.submitted_at) },
    { header: 'OPERATION', value: (o) => o.operation_reference },
    { header: 'COMMAND', value: (o) => o.command },
    { header: 'STATE', value: (o) => o.state },
    { header: 'PRINCIPAL', value: (o) => o.principal ?? '-' },
    { header: 'MOVES', value: (o) => movesCell(o, amount) },
  ]);
}
