/**
 * `ops members list|add|role|remove` and `ops audit` (CONTRACT 13): the operator's members, their
 * roles, and the trail of their acts. Names, justifications and everything else served are escaped
 * on a terminal (tables do it).
 */
import type { Command } from 'commander';
import type { AuditPage, MembersListing } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { type EnrolFlags, enrol, withEnrolFlags } from '../../enrol.js';
import { UsageError } from '../../errors.js';
import { auditPagesMax } from '../../limits.js';
import { table, time } from '../../output.js';
import { type PageOptions, listPages } from '../../pages.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';

const roles = ['auditor', 'operator', 'admin'] as const;

function roleOf(text: string): string {
  if (!(roles as readonly string[]).includes(text)) throw new UsageError(`--role must be one of ${roles.join(', ')}: ${text}`);
  return text;
}

type Member = MembersListing['items'][number];

export function buildMembers(parent: Command, make: MakeContext): Command {
  const members = parent.command('members').description("the operator's members: named credentials with a role (auditor, operator, admin)");
  members
    .command('list')
    .description('every member, removed ones too, in name order (GET /v1/ops/members)')
    .action(action(make, runMembersList));
  withEnrolFlags(
    members
      .command('add')
      .description('add a member (admin; POST /v1/ops/members); an api-key member\'s key is printed once')
      .argument('<name>', 'the member\'s name, 1-64 of a-z 0-9 . _ -')
      .requiredOption('--role <role>', 'auditor, operator or admin'),
    'keep its secret in this profile (default: the one in use)',
  ).action(
    action(make, async (ctx: Context, name: string, options: EnrolFlags & { role: string }) => {
      const role = roleOf(options.role);
      await enrol(ctx, { path: '/v1/ops/members', challengeIdentity: undefined, body: (fields) => ({ name, role, ...fields }) }, options);
    }),
  );
  withSubmitFlags(
    members
      .command('role')
      .description("change a member's role (admin; POST /v1/ops/members/{credential}/role); the last admin keeps its role")
      .argument('<credential>', 'the member\'s credential, did:ledger:cred:<id>')
      .requiredOption('--role <role>', 'auditor, operator or admin'),
  ).action(
    action(make, async (ctx: Context, credential: string, options: SubmitFlags & { role: string }) => {
      await submit(ctx, `/v1/ops/members/${encodeURIComponent(credential)}/role`, { role: roleOf(options.role) }, options);
    }),
  );
  withSubmitFlags(
    members
      .command('remove')
      .description('remove a member: its key and sessions stop working at once (admin; POST /v1/ops/members/{credential}/remove)')
      .argument('<credential>', 'the member\'s credential, did:ledger:cred:<id>'),
  ).action(
    action(make, async (ctx: Context, credential: string, options: SubmitFlags) => {
      await submit(ctx, `/v1/ops/members/${encodeURIComponent(credential)}/remove`, {}, options);
    }),
  );
  return members;
}

export async function runMembersList(ctx: Context): Promise<void> {
  const listing = await ctx.client().get<MembersListing>('/v1/ops/members');
  ctx.out.result(listing, () =>
    table(
      [
        { header: 'NAME', value: (m: Member) => m.name },
        { header: 'ROLE', value: (m) => m.role },
        { header: 'CREDENTIAL', value: (m) => m.credential },
        { header: 'SCHEME', value: (m) => m.scheme },
        { header: 'ADDED', value: (m) => time(m.added_at) },
        { header: 'BY', value: (m) => m.added_by ?? '-' },
        { header: 'REMOVED', value: (m) => time(m.removed_at) },
      ],
      listing.items,
    ),
  );
}

type AuditItem = AuditPage['items'][number];

export function buildAudit(parent: Command, make: MakeContext): Command {
  return parent
    .command('audit')
    .description("the operator's audit trail, oldest first: one line per act of a member (auditor and up; GET /v1/ops/audit)")
    .option('--member <name>', 'only this member\'s acts')
    .option('--limit <n>', "items per page, 1..1000 (the service's 100 when not given)")
    .option('--cursor <hex>', "continue from a page's next")
    .option('--all', 'follow next to the end (with --json: one item per line)')
    .action(action(make, runAudit));
}

export async function runAudit(ctx: Context, options: PageOptions & { member?: string }): Promise<void> {
  await listPages(ctx, options, {
    read: (cursor) => ctx.client().get<AuditPage>('/v1/ops/audit', { limit: options.limit, cursor, member: options.member }),
    items: (page) => page.items,
    show: async (page, header) =>
      ctx.out.result(page, () =>
        table(
          [
            { header: 'SEQ', value: (i: AuditItem) => String(i.seq), alignRight: true },
            { header: 'AT', value: (i) => time(i.at) },
            { header: 'MEMBER', value: (i) => i.member },
            { header: 'ACT', value: (i) => i.act },
            { header: 'OPERATION', value: (i) => i.operation_reference ?? '-' },
            { header: 'JUSTIFICATION', value: (i) => i.justification ?? '-' },
          ],
          page.items,
          header,
        ),
      ),
    pagesMax: auditPagesMax,
  });
}
