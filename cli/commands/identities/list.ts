import type { Command } from 'commander';
import type { OpsIdentity } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { time } from '../../output.js';
import { listOps, withPageFlags } from '../../ops-listings.js';
import type { PageOptions } from '../../pages.js';

interface ListOptions extends PageOptions {
  status?: string;
}

export function buildIdentityList(parent: Command, make: MakeContext): Command {
  return withPageFlags(
    parent
      .command('list')
      .description('every identity in identifier order (operator; GET /v1/ops/identities)')
      .option('--status <status>', 'active or restricted'),
    'identity',
    'identities',
  ).action(action(make, runList));
}

async function runList(ctx: Context, options: ListOptions): Promise<void> {
  await listOps<OpsIdentity>(ctx, options, 'identities', { status: options.status }, [
    { header: 'IDENTITY', value: (i) => i.identity },
    { header: 'STATUS', value: (i) => i.status },
    { header: 'ACCOUNTS', value: (i) => String(i.accounts), alignRight: true },
    { header: 'CREATED', value: (i) => time(i.created_at) },
  ]);
}
