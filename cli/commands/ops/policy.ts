/**
 * `ops policy show|set` (CONTRACT 13): the approval policy in force, and its change, which goes by
 * an approved proposal (`--propose`) while another admin is live. `set` changes what it is given
 * and keeps the rest as it is in force (the service would reset an absent member to its default).
 */
import type { Command } from 'commander';
import type { ApprovalPolicy } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { details, show } from '../../output.js';
import { integer, list, pairs } from '../../parse.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';

const path = '/v1/ops/approvals/policy';

export function buildPolicy(parent: Command, make: MakeContext): Command {
  const policy = parent.command('policy').description('the approval policy: which acts need a second member (docs/governance.md)');
  policy
    .command('show')
    .description('the policy in force (auditor and up; GET /v1/ops/approvals/policy)')
    .action(action(make, runPolicyShow));
  withSubmitFlags(
    policy
      .command('set')
      .description('replace the policy (admin; POST /v1/ops/approvals/policy): by a proposal (--propose) while another admin is live; what is not given stays as in force')
      .requiredOption('--rules <acts>', 'the covered acts, comma-separated or repeated (issuance_grants, issuance_above, freeze, close, restrict, legal_disclosure, assets, members, backup, policy); "" for none', list)
      .option('--issuance-above <symbol=minor>', 'an asset\'s issuance_above threshold in minor units (repeated; replaces every threshold)', pairs)
      .option('--ttl-ms <ms>', 'how long a proposal stays open'),
  ).action(action(make, runPolicySet));
  return policy;
}

export async function runPolicyShow(ctx: Context): Promise<void> {
  const policy = await ctx.client().get<ApprovalPolicy>(path);
  ctx.out.result(policy, () => details({ rules: policy.rules.join(', ') || '(none)', 'issuance above': show(policy.issuanceAboveMinor), 'ttl ms': String(policy.ttlMs) }));
}

export async function runPolicySet(ctx: Context, options: SubmitFlags & { rules: string[]; issuanceAbove?: Record<string, string>; ttlMs?: string }): Promise<void> {
  const current = await ctx.client().get<ApprovalPolicy>(path);
  const body = {
    rules: options.rules,
    issuanceAboveMinor: options.issuanceAbove ?? current.issuanceAboveMinor,
    ttlMs: options.ttlMs === undefined ? current.ttlMs : integer('--ttl-ms', options.ttlMs, 1, Number.MAX_SAFE_INTEGER),
  };
  await submit(ctx, path, body, options);
}
