import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { consistencyChecks, reportOf } from '../../../src/checkpoints/verify-proofs.js';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { integer, jsonFile } from '../../parse.js';
import { readCheckpointsFile, showChecks } from '../../verifiable.js';

export interface ConsistencyOptions {
  from: string;
  out?: string;
}

export function buildConsistency(parent: Command, make: MakeContext): Command {
  return parent
    .command('consistency')
    .description('the RFC 9162 proof that checkpoint M extends checkpoint N, both final (GET /v1/checkpoints/{M}/consistency?from=N)')
    .argument('<number>', 'the later checkpoint, M')
    .requiredOption('--from <number>', 'the earlier checkpoint, N (1..M)')
    .option('--out <file>', 'write the proof to this file instead of printing it')
    .action(action(make, runConsistency));
}

const fetchProof = (ctx: Context, from: number, to: number) => ctx.client().get<unknown>(`/v1/checkpoints/${to}/consistency`, { from });

export async function runConsistency(ctx: Context, number: string, options: ConsistencyOptions): Promise<void> {
  const to = integer('<number>', number, 1, Number.MAX_SAFE_INTEGER);
  const from = integer('--from', options.from, 1, to);
  const reply = await fetchProof(ctx, from, to);
  if (options.out !== undefined) {
    await writeFile(options.out, `${JSON.stringify(reply, null, 1)}\n`);
    return ctx.out.result({ file: options.out }, () => `written: ${options.out}`);
  }
  ctx.out.result(reply, () => JSON.stringify(reply, null, 1));
}

export interface VerifyOptions {
  from: string;
  to: string;
  checkpoints: string;
  proof?: string;
}

export function buildVerify(parent: Command, make: MakeContext): Command {
  return parent
    .command('verify')
    .description('check that checkpoint --to extends checkpoint --from, both taken from a checkpoints file (checkpoints export); offline with --proof; exits 1 unless every check holds')
    .requiredOption('--from <number>', 'the earlier checkpoint, N')
    .requiredOption('--to <number>', 'the later checkpoint, M')
    .requiredOption('--checkpoints <file>', 'a file written by ledgerctl checkpoints export (its chain is checked)')
    .option('--proof <file>', 'the proof (checkpoints consistency --out), - for stdin; without it, fetched from the service')
    .action(action(make, runVerify));
}

export async function runVerify(ctx: Context, options: VerifyOptions): Promise<void> {
  const to = integer('--to', options.to, 1, Number.MAX_SAFE_INTEGER);
  const from = integer('--from', options.from, 1, to);
  const file = await readCheckpointsFile(options.checkpoints);
  if (file.checkpoints[from - 1] === undefined || file.checkpoints[to - 1] === undefined) throw new UsageError(`--checkpoints ${options.checkpoints} does not hold checkpoints ${from} and ${to}`);
  const proof = options.proof !== undefined ? jsonFile('--proof', options.proof) : await fetchProof(ctx, from, to);
  showChecks(ctx, reportOf([['file', () => null], ...consistencyChecks(file.checkpoints, from, to, proof)]), 'the checkpoints are not consistent');
}
