import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { accountOf } from '../../names.js';
import { integer, jsonFile } from '../../parse.js';

export interface LiabilitiesOptions {
  checkpoint: string;
  asset: string;
  out?: string;
}

export function buildLiabilities(parent: Command, make: MakeContext): Command {
  return parent
    .command('liabilities')
    .description("the account's proof that its balance at a final checkpoint is counted in the asset's published liabilities (owner or operator; GET /v1/accounts/{account}/liabilities)")
    .argument('<account>', 'did:ledger:acct:<id>, a saved name or a ledger alias')
    .requiredOption('--checkpoint <number>', 'a final checkpoint of version 2')
    .requiredOption('--asset <symbol>', 'the asset')
    .option('--out <file>', 'write the proof to this file instead of printing it')
    .action(action(make, runLiabilities));
}

const fetchProof = (ctx: Context, account: string, checkpoint: number, asset: string) =>
  ctx.client().get<unknown>(`/v1/accounts/${encodeURIComponent(account)}/liabilities`, { checkpoint, asset });

export async function runLiabilities(ctx: Context, name: string, options: LiabilitiesOptions): Promise<void> {
  const checkpoint = integer('--checkpoint', options.checkpoint, 1, Number.MAX_SAFE_INTEGER);
  const account = await accountOf(ctx, 'account', name);
  const reply = await fetchProof(ctx, account, checkpoint, options.asset);
  if (options.out !== undefined) {
    writeFileSync(options.out, `${JSON.stringify(reply, null, 1)}\n`);
    return ctx.out.result({ file: options.out }, () => `written: ${options.out}`);
  }
  ctx.out.result(reply, () => JSON.stringify(reply, null, 1));
}

export interface VerifyLiabilitiesOptions extends LiabilitiesOptions {
  checkpoints: string;
  proof?: string;
}

export function buildVerifyLiabilities(parent: Command, make: MakeContext): Command {
  return parent
    .command('verify-liabilities')
    .description("check an account's liabilities proof against checkpoint N of a checkpoints file (checkpoints export); with --proof, no service at all; exits 1 unless every check holds")
    .argument('<account>', 'did:ledger:acct:<id> (a name or alias needs the service)')
    .requiredOption('--checkpoint <number>', 'the checkpoint, N')
    .requiredOption('--asset <symbol>', 'the asset')
    .requiredOption('--checkpoints <file>', 'a file written by ledgerctl checkpoints export (its chain is checked)')
    .option('--proof <file>', 'the proof (accounts liabilities --out), - for stdin; without it, fetched from the service')
    .action(action(make, runVerifyLiabilities));
}

export async function runVerifyLiabilities(ctx: Context, name: string, options: VerifyLiabilitiesOptions): Promise<void> {
  const checkpoint = integer('--checkpoint', options.checkpoint, 1, Number.MAX_SAFE_INTEGER);
  // Loaded by this verb only: the other verbs of `accounts` start without the proof checker (docs/performance.md).
  const [{ liabilitiesChecks, reportOf }, { readCheckpointsFile, showChecks }] = await Promise.all([import('../../../src/checkpoints/verify-proofs.js'), import('../../verifiable.js')]);
  const file = await readCheckpointsFile(options.checkpoints);
  const anchored = file.checkpoints[checkpoint - 1];
  if (anchored === undefined) throw new UsageError(`--checkpoints ${options.checkpoints} does not hold checkpoint ${checkpoint}`);
  const account = await accountOf(ctx, 'account', name);
  const proof = options.proof !== undefined ? jsonFile('--proof', options.proof) : await fetchProof(ctx, account, checkpoint, options.asset);
  const checks = liabilitiesChecks(proof, { account, asset: options.asset, instance: file.instance, anchored });
  showChecks(ctx, reportOf([['file', () => null], ...checks]), 'the liabilities proof did not verify');
}
