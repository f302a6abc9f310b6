/**
 * `ops members list|add|role|remove` and `ops audit` (CONTRACT 13): the operator's members, their
 * roles, and the trail of their acts. Names, justifications and everything else served are escaped
 * on a terminal (tables do it).
 */
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { AuditPage, Json, MembersListing } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { type EnrolFlags, enrol, passkeyMaterial, withEnrolFlags } from '../../enrol.js';
import { UsageError } from '../../errors.js';
import { auditPagesMax } from '../../limits.js';
import { details, table, time } from '../../output.js';
import { jsonFile } from '../../parse.js';
import { type PageOptions, listPages } from '../../pages.js';
import { type SubmitFlags, submit, withSubmitFlags } from '../../submit.js';

const roles = ['auditor', 'operator', 'admin'] as const;
/** The operator's identity: a member's register challenge serves only its set. */
const operatorIdentity = 'did:ledger:id:operator';

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
  const add = withEnrolFlags(
    members
      .command('add')
      .description("add a member (admin; POST /v1/ops/members): with --credential-file, the member's own credential (the only way with --propose); else one made here, an api-key member's key printed once")
      .argument('<name>', 'the member\'s name, 1-64 of a-z 0-9 . _ -')
      .requiredOption('--role <role>', 'auditor, operator or admin')
      .option('--credential-file <file>', 'the public part of a credential the member made (ops members prepare --out), - for stdin; its secret never leaves the member'),
    'keep its secret in this profile (default: the one in use)',
  );
  add.action(
    action(make, async (ctx: Context, name: string, options: EnrolFlags & { role: string; credentialFile?: string }) => {
      const role = roleOf(options.role);
      if (options.credentialFile !== undefined) {
        if (add.getOptionValueSource('scheme') !== 'default' || options.saveAs !== undefined) throw new UsageError('--credential-file carries the scheme, and its secret stays with the member: no --scheme, no --save-as');
        await submit(ctx, '/v1/ops/members', { name, role, ...ownCredential(jsonFile('--credential-file', options.credentialFile)) }, options);
        return;
      }
      // A secret made here would be the proposer's to keep: one person holding two members is no dual control.
      if (options.propose === true) throw new UsageError("a member added by a proposal brings its own credential: the member runs ledgerctl ops members prepare --out FILE, and you pass --credential-file FILE");
      // The shared default, key, makes a credential that signs reclaim proofs only: a member who could never sign in.
      if (add.getOptionValueSource('scheme') === 'default') throw new UsageError('ops members add: say how the member signs in: --scheme webauthn-es256 (a passkey kept in --save-as) or --scheme api-key (printed once), or --credential-file FILE');
      await enrol(ctx, { path: '/v1/ops/members', challengeIdentity: undefined, body: (fields) => ({ name, role, ...fields }) }, options);
    }),
  );
  members
    .command('prepare')
    .description("make your own passkey for an admin to add you as a member (ops members add --credential-file): the passkey stays in this profile, only its public part is printed; it must be added (and a proposal of it approved) before the service's register challenge expires, in minutes")
    .option('--out <file>', 'write the public part to this file instead of printing it')
    .option('--save-as <profile>', 'keep the passkey in this profile (default: the one in use)')
    .action(action(make, runPrepare));
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

/** The credential fields of a file from `ops members prepare` (or any `{scheme, verifier}` / `{scheme, passkey}`), and nothing else of it. */
function ownCredential(file: Json): Record<string, unknown> {
  const f = (typeof file === 'object' && file !== null && !Array.isArray(file) ? file : {}) as Record<string, Json>;
  if (f.scheme === 'webauthn-es256') return { scheme: f.scheme, passkey: f.passkey };
  if (f.scheme === 'key') return { scheme: f.scheme, verifier: f.verifier };
  throw new UsageError('--credential-file: not a credential made by its holder ({"scheme": "webauthn-es256", "passkey": …} or {"scheme": "key", "verifier": …}); an api-key has no public part to hand over');
}

/** The member's side of being added by others: a passkey of its own, kept here, and its registration printed. */
export async function runPrepare(ctx: Context, options: { out?: string; saveAs?: string }): Promise<void> {
  const saveAs = options.saveAs ?? (await ctx.profileName());
  const profiles = await ctx.profiles();
  const held = profiles.secretsOf(saveAs).passkey;
  if (held !== undefined && held.credential !== null) throw new UsageError(`profile ${saveAs} holds the registered passkey ${held.credential}: prepare in another profile (--save-as)`);
  const { fields, secret, registerByMs } = await passkeyMaterial(ctx, operatorIdentity);
  if (profiles.get(saveAs) === undefined) profiles.put(saveAs, await ctx.profile());
  profiles.updateSecrets(saveAs, (s) => ({ ...s, passkey: { ...secret, credential: null } }));
  const text = `${JSON.stringify(fields, null, 1)}\n`;
  if (options.out !== undefined) await writeFile(options.out, text);
  ctx.out.note(`the passkey is kept in profile ${saveAs}; add it by ${time(registerByMs)}, then: ledgerctl --profile ${saveAs} auth login --credential CREDENTIAL`);
  if (options.out === undefined) ctx.out.result(fields, () => text.trimEnd());
  else ctx.out.result({ file: options.out, profile: saveAs, register_by: registerByMs }, () => details({ file: options.out, profile: saveAs, 'register by': time(registerByMs) }));
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
