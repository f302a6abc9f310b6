/** `ledgerctl settlement …`: the book against the settlement layer (operator; docs/settlement.md). */
import type { Command } from 'commander';
import type { Json } from '../../api.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { details, show, table, time } from '../../output.js';
import { integer } from '../../parse.js';
import { type SubmitFlags, send, withSubmitFlags } from '../../submit.js';
import { Money, minorUnitsText } from '../../money.js';
import { resultText, submitSettlement } from '../../settlement-print.js';

export interface SettlementStatus {
  declared_at: number;
  fresh_until: number;
  serving: boolean;
  height: number;
  final_height: number;
  taken_in: number;
  cut: number;
  pending_instructions: number;
  /** Per asset, what the book made of the layer's latest attestation of its location. */
  attestations: Attestation[];
}

interface Attestation {
  asset: string;
  verdict: string;
  mismatch: string | null;
  height: number;
  operation_reference: string;
}

interface Row {
  asset: string;
  book: string;
  layer: string;
  difference: string;
  liabilities: string | null;
  liabilities_checkpoint: number | null;
  solvent: boolean | null;
}

export interface Comparison {
  anchors: number[];
  at: number;
  cut: number;
  differs: boolean;
  height: number;
  rows: Row[];
}

export function buildSettlementStatus(parent: Command, make: MakeContext): Command {
  return parent.command('status').description('the adapter status, the layer head and how far the book took it in (GET /v1/ops/settlement/status)').action(action(make, runStatus));
}

export async function runStatus(ctx: Context): Promise<void> {
  const status = await ctx.client().get<SettlementStatus>('/v1/ops/settlement/status');
  ctx.out.result(status, () =>
    details({
      serving: String(status.serving),
      declared: time(status.declared_at),
      'fresh until': time(status.fresh_until),
      height: String(status.height),
      'final height': String(status.final_height),
      'taken in': String(status.taken_in),
      cut: String(status.cut),
      'pending instructions': String(status.pending_instructions),
    }) +
      '\n\nattestations (the latest of each asset, in a final block)\n' +
      table(
        [
          { header: 'ASSET', value: (a: Attestation) => a.asset },
          { header: 'VERDICT', value: (a) => a.verdict },
          { header: 'MISMATCH', value: (a) => show(a.mismatch) },
          { header: 'HEIGHT', value: (a) => String(a.height), alignRight: true },
          { header: 'OPERATION', value: (a) => a.operation_reference },
        ],
        status.attestations,
      ),
  );
}

export function buildSync(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(parent.command('sync').description('take in the layer up to its head now; lists the operations it moved (POST /v1/ops/settlement/sync)')).action(action(make, runSync));
}

export async function runSync(ctx: Context, options: SubmitFlags): Promise<void> {
  await submitSettlement(ctx, '/v1/ops/settlement/sync', {}, options);
}

/** `--client-key` of a command the service decides at once: a retry with it gets the first reply again. */
export const withClientKey = (command: Command) => command.option('--client-key <key>', 'idempotency key (at most 256 characters): a retry with it gets the first reply again (default: a random one, shown on stderr)');

/** The `result.settlement` of a command the service decides at once (its reply is terminal). */
export async function settlementResult<T>(ctx: Context, path: string, body: unknown, clientKey: string | undefined): Promise<T> {
  const reply = await send(ctx, path, body, { clientKey });
  return (reply.result as { settlement: T }).settlement;
}

export function buildCompare(parent: Command, make: MakeContext): Command {
  return withClientKey(parent.command('compare').description('per bound asset, the book against the layer at the last final block taken in (POST /v1/ops/settlement/comparisons)')).action(action(make, runCompare));
}

export async function runCompare(ctx: Context, options: { clientKey?: string } = {}): Promise<void> {
  const settlement = await settlementResult<{ comparison: Comparison }>(ctx, '/v1/ops/settlement/comparisons', {}, options.clientKey);
  const c = settlement.comparison;
  const amount = await Money.forPeople(ctx.out.machine || ctx.out.picksField, ctx.client());
  ctx.out.result(c as unknown as Json, () =>
    [
      details({ height: String(c.height), cut: String(c.cut), differs: String(c.differs), at: time(c.at) }),
      table(
        [
          { header: 'ASSET', value: (r: Row) => r.asset },
          { header: 'BOOK', value: (r) => amount(r.book, r.asset), alignRight: true },
          { header: 'LAYER', value: (r) => amount(r.layer, r.asset), alignRight: true },
          { header: 'DIFFERENCE', value: (r) => amount(r.difference, r.asset), alignRight: true },
          { header: 'LIABILITIES', value: (r) => (r.liabilities === null ? '-' : amount(r.liabilities, r.asset)), alignRight: true },
          { header: 'CHECKPOINT', value: (r) => (r.liabilities_checkpoint === null ? '-' : String(r.liabilities_checkpoint)), alignRight: true },
          { header: 'SOLVENT', value: (r) => (r.solvent === null ? '-' : r.solvent ? 'yes' : 'NO') },
        ],
        c.rows,
      ),
    ].join('\n'),
  );
}

const seqOf = (value: string, flag: string): number => integer(flag, value, 1, Number.MAX_SAFE_INTEGER);
const instanceMax = 0xffff_ffff;

export function buildRescan(parent: Command, make: MakeContext): Command {
  return withClientKey(
    parent
      .command('rescan')
      .description('inbox positions from..to the book never took in, holds unassociated, or holds and the layer no longer shows (POST /v1/ops/settlement/rescans)')
      .requiredOption('--from <seq>', 'first inbox position')
      .requiredOption('--to <seq>', 'last inbox position (at most 1000 positions)'),
  ).action(action(make, runRescan));
}

export async function runRescan(ctx: Context, options: { from: string; to: string; clientKey?: string }): Promise<void> {
  const body = { from: seqOf(options.from, '--from'), to: seqOf(options.to, '--to') };
  const settlement = await settlementResult<{ rescan: { missing: Json[]; unassociated: number; unknown: Json[] } }>(ctx, '/v1/ops/settlement/rescans', body, options.clientKey);
  const r = settlement.rescan;
  ctx.out.result(r as unknown as Json, () => resultText(r as unknown as { [key: string]: Json }, minorUnitsText));
}

export function buildObserve(parent: Command, make: MakeContext): Command {
  return withSubmitFlags(
    parent
      .command('observe')
      .description('take in one inbox record by its coordinate: applied, recorded, duplicate or unassociated (POST /v1/ops/settlement/observations)')
      .requiredOption('--seq <seq>', 'its inbox position')
      .requiredOption('--digest <hex>', 'its digest, 32 bytes hex')
      .requiredOption('--instance <n>', 'the instance whose inbox holds it'),
  ).action(action(make, runObserve));
}

export async function runObserve(ctx: Context, options: SubmitFlags & { seq: string; digest: string; instance: string }): Promise<void> {
  const coordinate = { seq: seqOf(options.seq, '--seq'), digest: options.digest, instance: integer('--instance', options.instance, 0, instanceMax) };
  await submitSettlement(ctx, '/v1/ops/settlement/observations', { coordinate }, options);
}
