/**
 * `ledgerctl settlement layer …`: the embedded settlement layer's controls (CONTRACT 9, the
 * operator's alone; a daemon on another layer refuses them): make blocks, place a deposit in the
 * inbox, stop or resume serving, declare what a location is. For drills and tests: what a real
 * layer does by itself.
 */
import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { Money } from '../../money.js';
import { details } from '../../output.js';
import { integer } from '../../parse.js';
import { referenceOf, withReference } from '../../submit.js';
import { resultText } from '../../settlement-print.js';
import { settlementResult, withClientKey } from './settlement.js';

/** The layer's head after a control. */
interface Head {
  height: number;
  final_height: number;
  serving: boolean;
}

/** `layerBlocksPerRequestMax` of the daemon (src/constants.ts): more in one request is refused. */
const blocksPerRequestMax = 1000;

const hex32 = (flag: string, text: string): string => {
  if (!/^[0-9a-f]{64}$/.test(text)) throw new UsageError(`${flag} must be 32 bytes as 64 lowercase hex digits`);
  return text;
};

const headText = (head: Head) => details({ height: String(head.height), 'final height': String(head.final_height), serving: head.serving ? 'yes' : 'no' });

export function buildLayer(parent: Command, make: MakeContext): Command {
  const layer = parent.command('layer').description('the embedded settlement layer: blocks, deposits, serving, locations (operator; drills and tests)');
  layer
    .command('blocks')
    .description('make blocks on the embedded layer now, taken in before the reply (POST /v1/ops/layer/blocks)')
    .option('--count <n>', `how many (1-${blocksPerRequestMax})`, '1')
    .action(action(make, runBlocks));
  withReference(
    withClientKey(
      layer
        .command('deposit')
        .description("place a deposit in the embedded layer's inbox for the account --account-ref names; the book credits it from a final block (POST /v1/ops/layer/deposits)")
        .requiredOption('--asset <symbol>', 'a bound asset')
        .requiredOption('--amount <minor>', 'minor units, a decimal integer')
        .requiredOption('--account-ref <hex>', "the account's deposit reference, 32 bytes hex (accounts show: deposit_ref)"),
    ),
  ).action(action(make, runDeposit));
  for (const [verb, serving, description] of [
    ['stop', false, 'stop serving: blocks still advance the height but carry nothing, settlement commands are refused (503)'],
    ['resume', true, 'resume serving'],
  ] as const) {
    layer
      .command(verb)
      .description(`${description} (POST /v1/ops/layer/status)`)
      .action(action(make, (ctx: Context) => runServing(ctx, serving)));
  }
  layer
    .command('location')
    .description('declare what a location is: the symbol, decimals and status the layer attests of it (POST /v1/ops/layer/locations)')
    .argument('<location>', '32 bytes hex')
    .requiredOption('--symbol <symbol>', 'the symbol the layer attests')
    .requiredOption('--decimals <n>', 'the decimals the layer attests')
    .option('--status <status>', 'active or retired', 'active')
    .action(action(make, runLocation));
  return layer;
}

export async function runBlocks(ctx: Context, options: { count?: string }): Promise<void> {
  const head = await ctx.client().post<Head>('/v1/ops/layer/blocks', { count: integer('--count', options.count ?? '1', 1, blocksPerRequestMax) });
  ctx.out.result(head, () => headText(head));
}

export async function runDeposit(ctx: Context, options: { asset: string; amount: string; accountRef: string; reference?: string; clientKey?: string }): Promise<void> {
  const body = { asset: options.asset, amount: options.amount, account_ref: hex32('--account-ref', options.accountRef), reference: referenceOf(options.reference) };
  const settlement = await settlementResult<{ coordinate: { seq: number; digest: string; instance: number } }>(ctx, '/v1/ops/layer/deposits', body, options.clientKey);
  const amount = await Money.forPeople(ctx.out.machine, ctx.client());
  ctx.out.result(settlement, () => resultText({ amount: options.amount, asset: options.asset, ...settlement }, amount));
}

export async function runServing(ctx: Context, serving: boolean): Promise<void> {
  const head = await ctx.client().post<Head>('/v1/ops/layer/status', { serving });
  ctx.out.result(head, () => headText(head));
}

export async function runLocation(ctx: Context, location: string, options: { symbol: string; decimals: string; status?: string }): Promise<void> {
  const status = options.status ?? 'active';
  if (status !== 'active' && status !== 'retired') throw new UsageError(`--status must be active or retired, not ${status}`);
  const body = { location: hex32('location', location), symbol: options.symbol, decimals: integer('--decimals', options.decimals, 0, 255), status };
  const reply = await ctx.client().post<{ location: string }>('/v1/ops/layer/locations', body);
  ctx.out.result(reply, () => details({ location: reply.location, symbol: options.symbol, decimals: String(body.decimals), status }));
}
