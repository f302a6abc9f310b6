/**
 * `ops proposals list|show|approve|reject` (CONTRACT 13): proposals of covered acts, and their
 * decisions. Approving shows the proposed request first (every served text escaped, as all CLI
 * output) and asks on a terminal; `--yes` says it for scripts, never implied.
 */
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import type { CommandReply, ProposalView, ProposalsPage } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { isTerminal } from '../../io.js';
import { proposalPagesMax } from '../../limits.js';
import { details, show, table, time } from '../../output.js';
import { type PageOptions, listPages } from '../../pages.js';
import { safeLines } from '../../safe.js';
import { type SubmitFlags, decisionOf, printOperation, printReply, send, withSubmitFlags } from '../../submit.js';

const states = ['open', 'approved', 'rejected', 'expired'];
const idPattern = /^did:ledger:proposal:[A-Za-z0-9]{1,64}$/;

/** A proposal's id, whole or as the dashboard shows it (without `did:ledger:proposal:`). */
function proposalId(text: string): string {
  const whole = /^[A-Za-z0-9]{1,64}$/.test(text) ? `did:ledger:proposal:${text}` : text;
  if (!idPattern.test(whole)) throw new UsageError(`a proposal is did:ledger:proposal:<id> (or its <id>): ${text}`);
  return whole;
}

export function buildProposals(parent: Command, make: MakeContext): Command {
  const proposals = parent.command('proposals').description('proposals of acts for a second member to approve (dual control)');
  proposals
    .command('list')
    .description('proposals, newest first (auditor and up; GET /v1/ops/proposals)')
    .option('--state <state>', `only those ${states.join(', ')}`)
    .option('--limit <n>', "proposals per page, 1..200 (the service's 50 when not given)")
    .option('--cursor <hex>', "continue from a page's next")
    .option('--all', 'follow next to the end (with --json: one item per line)')
    .action(action(make, runProposalsList));
  proposals
    .command('show')
    .description('one proposal: its request, justification and decision (GET /v1/ops/proposals/{proposal})')
    .argument('<proposal>', 'did:ledger:proposal:<id>')
    .action(action(make, async (ctx: Context, id: string) => showProposal(ctx, await ctx.client().get<ProposalView>(`/v1/ops/proposals/${encodeURIComponent(proposalId(id))}`))));
  withSubmitFlags(
    proposals
      .command('approve')
      .description("approve another member's proposal: its act is submitted as proposed, under client key proposal:<id> (shown and asked first on a terminal)")
      .argument('<proposal>', 'did:ledger:proposal:<id>')
      .option('--yes', 'approve without asking (scripts)'),
  ).action(action(make, runApprove));
  withSubmitFlags(
    proposals
      .command('reject')
      .description('reject a proposal you could approve, or withdraw your own (POST /v1/ops/proposals/{proposal}/reject)')
      .argument('<proposal>', 'did:ledger:proposal:<id>')
      .requiredOption('--reason <text>', 'why, kept with the proposal'),
  ).action(
    action(make, async (ctx: Context, id: string, options: SubmitFlags & { reason: string }) => {
      const reply = await send(ctx, `/v1/ops/proposals/${encodeURIComponent(proposalId(id))}/reject`, { reason: options.reason }, options);
      if (options.wait === false) return printReply(ctx, reply);
      printOperation(ctx, await decisionOf(ctx, reply, options));
    }),
  );
  return proposals;
}

function showProposal(ctx: Context, p: ProposalView): void {
  ctx.out.result(p, () =>
    details({
      proposal: p.proposal,
      state: p.state,
      proposer: p.proposer,
      proposed: time(p.proposed_at),
      request: `${p.request.method} ${p.request.path}`,
      'on behalf of': p.request.on_behalf_of,
      body: show(p.request.body),
      justification: p.justification,
      'decided by': p.decided_by,
      decided: p.decided_at === undefined ? undefined : time(p.decided_at),
      reason: p.reason,
      operation: p.operation_reference,
    }),
  );
}

export async function runProposalsList(ctx: Context, options: PageOptions & { state?: string }): Promise<void> {
  if (options.state !== undefined && !states.includes(options.state)) throw new UsageError(`--state must be one of ${states.join(', ')}: ${options.state}`);
  await listPages(ctx, options, {
    read: (cursor) => ctx.client().get<ProposalsPage>('/v1/ops/proposals', { limit: options.limit, cursor, state: options.state }),
    items: (page) => page.items,
    show: async (page, header) =>
      ctx.out.result(page, () =>
        table(
          [
            { header: 'PROPOSAL', value: (p: ProposalView) => p.proposal },
            { header: 'STATE', value: (p) => p.state },
            { header: 'PROPOSER', value: (p) => p.proposer },
            { header: 'PROPOSED', value: (p) => time(p.proposed_at) },
            { header: 'REQUEST', value: (p) => `${p.request.method} ${p.request.path}` },
            { header: 'JUSTIFICATION', value: (p) => p.justification },
          ],
          page.items,
          header,
        ),
      ),
    pagesMax: proposalPagesMax,
  });
}

async function runApprove(ctx: Context, id: string, options: SubmitFlags & { yes?: boolean }): Promise<void> {
  const path = `/v1/ops/proposals/${encodeURIComponent(proposalId(id))}`;
  if (options.yes !== true) {
    if (!isTerminal(ctx.io.stdin) || !isTerminal(ctx.io.stderr)) throw new UsageError('approving takes the proposed act: pass --yes (after reading it with ledgerctl ops proposals show), or run it on a terminal');
    const p = await ctx.client().get<ProposalView>(path);
    // Everything served reaches the terminal escaped: a justification cannot recolour or hide what is approved.
    const body = JSON.stringify(p.request.body, null, 2);
    ctx.io.stderr.write(safeLines(`Proposal ${p.proposal} by ${p.proposer} (${p.state}):\n  ${p.request.method} ${p.request.path}${p.request.on_behalf_of ? ` on behalf of ${p.request.on_behalf_of}` : ''}\n  body: ${body.replaceAll('\n', '\n  ')}\n  justification: ${JSON.stringify(p.justification)}\n`));
    const rl = createInterface({ input: ctx.io.stdin, output: ctx.io.stderr });
    try {
      const answer = await rl.question('Approve it? [y/N] ');
      if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError('not approved: nothing was sent');
    } finally {
      rl.close();
    }
  }
  const reply: CommandReply = await send(ctx, `${path}/approve`, {}, options);
  // An act decided at once (a legal disclosure) is no operation of the book to wait for: its reply is all there is.
  const decidedAtOnce = reply.terminal && reply.operation_reference.startsWith('direct-');
  if (options.wait === false || decidedAtOnce) return printReply(ctx, reply);
  printOperation(ctx, await decisionOf(ctx, reply, options));
}
