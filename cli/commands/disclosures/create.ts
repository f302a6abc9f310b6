import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { accountOf } from '../../names.js';
import { details } from '../../output.js';
import { integer, jsonText } from '../../parse.js';
import { send, submit } from '../../submit.js';
import { inlineOrFile } from '../../verifiable.js';

export interface CreateOptions {
  subject: string;
  assertion: string;
  checkpoint?: string;
  legalObligation?: string;
  recipientIdentity?: string;
  recipientReference?: string;
  clientKey?: string;
  withLiabilities?: boolean;
  out?: string;
  propose?: boolean;
  justification?: string;
}

export function buildCreate(parent: Command, make: MakeContext): Command {
  return parent
    .command('create')
    .description("a signed assertion about an account, resting on a final checkpoint: by its owner, or by the operator under a legal obligation (POST /v1/disclosures)")
    .requiredOption('--subject <account>', 'the account it is about: did:ledger:acct:<id>, a saved name or a ledger alias')
    .requiredOption('--assertion <json>', 'the assertion, JSON or @file: {"shape":"holds_at_least","amount":"100","asset":"USD","kind":"available"}, operation_occurred, operation_moved, flows_bound (docs/disclosures.md)')
    .option('--checkpoint <number>', 'the checkpoint to rest on (default: the latest final one)')
    .option('--legal-obligation <text>', "the operator's justification, for an account it does not own")
    .option('--recipient-identity <identity>', 'the recipient, an identity of the book')
    .option('--recipient-reference <hex>', 'the recipient, an opaque 32-byte hex reference (never personal data)')
    .option('--client-key <key>', 'idempotency key: a retry with it gets the same disclosure (default: a random one, shown on stderr)')
    .option('--with-liabilities', "a v2 disclosure carrying the subject's liabilities proof, so the balance is exact (holds_at_least, a version-2 checkpoint)")
    .option('--out <file>', 'also write the disclosure (hex) to this file')
    .option('--propose', 'operator members, with --legal-obligation: propose it for another member to approve (with --justification), and print the proposal; the disclosure is on the approval')
    .option('--justification <text>', 'with --propose: why, kept with the proposal')
    .action(action(make, runCreate));
}

export async function runCreate(ctx: Context, options: CreateOptions): Promise<void> {
  if ((options.recipientIdentity === undefined) === (options.recipientReference === undefined)) throw new UsageError('give exactly one of --recipient-identity and --recipient-reference');
  const body = {
    subject: await accountOf(ctx, '--subject', options.subject),
    assertion: jsonText('--assertion', await inlineOrFile('--assertion', options.assertion)),
    checkpoint: options.checkpoint === undefined ? undefined : integer('--checkpoint', options.checkpoint, 1, Number.MAX_SAFE_INTEGER),
    legal_obligation: options.legalObligation,
    recipient_identity: options.recipientIdentity,
    recipient_reference: options.recipientReference,
    with_liabilities: options.withLiabilities === true ? true : undefined,
  };
  // A legal disclosure is covered by default (CONTRACT 13): proposed, it is decided when approved.
  if (options.propose === true) {
    if (options.out !== undefined) throw new UsageError('--out: a proposed disclosure is made when it is approved (ledgerctl ops proposals approve prints it)');
    await submit(ctx, '/v1/disclosures', body, { propose: true, justification: options.justification, clientKey: options.clientKey });
    return;
  }
  if (options.justification !== undefined) throw new UsageError('--justification goes with --propose (a legal disclosure\'s own is --legal-obligation)');
  const reply = await send(ctx, '/v1/disclosures', body, { clientKey: options.clientKey });
  const hex = (reply.result as { disclosure?: string } | undefined)?.disclosure ?? '';
  if (options.out !== undefined) await writeFile(options.out, `${hex}\n`);
  ctx.out.result(reply, () => details({ operation: reply.operation_reference, subject: body.subject, bytes: String(hex.length / 2), written: options.out, disclosure: options.out === undefined ? hex : undefined }));
}
