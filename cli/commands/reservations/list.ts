import type { Command } from 'commander';
import type { OpsReservation } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { time } from '../../output.js';
import { listOps, withPageFlags } from '../../ops-listings.js';
import type { PageOptions } from '../../pages.js';

export function buildReservationList(parent: Command, make: MakeContext): Command {
  return withPageFlags(parent.command('list').description('every live hold, soonest deadline first (operator; GET /v1/ops/reservations)'), 'reservation').action(action(make, runList));
}

async function runList(ctx: Context, options: PageOptions): Promise<void> {
  await listOps<OpsReservation>(ctx, options, 'reservations', {}, (amount) => [
    { header: 'OPERATION', value: (r) => r.operation_reference },
    { header: 'PAYER', value: (r) => r.payer },
    { header: 'AMOUNT', value: (r) => amount(r.amount, r.asset), alignRight: true },
    { header: 'DEADLINE', value: (r) => time(r.deadline) },
    { header: 'HOLDER', value: (r) => r.holder },
  ]);
}
