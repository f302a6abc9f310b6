import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { details, show, time } from '../../output.js';
import { inlineOrFile } from '../../verifiable.js';

export function buildShow(parent: Command, make: MakeContext): Command {
  return parent
    .command('show')
    .description('decode a disclosure and show what it asserts and rests on (offline: nothing is checked; use verify)')
    .argument('<disclosure>', 'the disclosure, hex or @file')
    .action(action(make, runShow));
}

export async function runShow(ctx: Context, text: string): Promise<void> {
  const hex = await inlineOrFile('<disclosure>', text);
  let d: Record<string, any>;
  try {
    if (!/^([0-9a-f]{2})+$/.test(hex)) throw new Error('not lowercase hex');
    d = JSON.parse(Buffer.from(hex, 'hex').toString('utf8')) as Record<string, any>;
    if (typeof d !== 'object' || d === null || !Array.isArray(d.evidence)) throw new Error('not a disclosure');
  } catch (error) {
    throw new UsageError(`<disclosure> does not decode: ${(error as Error).message}`);
  }
  ctx.out.result(d, () =>
    details({
      subject: show(d.subject),
      assertion: show(d.assertion),
      checkpoint: show(d.checkpoint?.number),
      entry_sequence: show(d.checkpoint?.entry_sequence),
      recipient: show(d.recipient),
      issued_at: typeof d.issued_at === 'number' ? time(d.issued_at) : show(d.issued_at),
      instance: show(d.instance),
      clerk: show(d.clerk),
      evidence: (d.evidence as { leaf?: { seq?: unknown } }[]).map((e) => show(e?.leaf?.seq)).join(', ') || '-',
    }),
  );
}
