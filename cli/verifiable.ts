/**
 * The verifiable book as the CLI sees it: checkpoints (CONTRACT 9), the clerk, and the
 * checkpoints file `checkpoints export` writes and `disclosures verify --offline` trusts.
 */
import { readFile } from 'node:fs/promises';
import { type CheckpointObject, chainProblem } from '../src/checkpoints/verify-proofs.js';
import type { Context } from './context.js';
import { CliError, UsageError, exitCodes } from './errors.js';
import { checkpointPagesMax } from './limits.js';
import { inputFile } from './parse.js';

/** A checkpoint as served: version 1, or version 2 with `version`, `previous` and `liabilities` (CONTRACT 12.3). */
export interface CheckpointView extends CheckpointObject {
  status: 'pending' | 'submitted' | 'final';
  created_at: number;
}

export interface CheckpointPage {
  items: CheckpointView[];
  next?: number;
}

export interface ClerkView {
  public_key: string;
  algorithm: 'ed25519';
  instance: number;
}

/** The checkpoints file: this deployment's instance, its clerk key, and its checkpoints oldest first. */
export interface CheckpointsFile {
  format: 'ledger-checkpoints:v1';
  instance: number;
  clerk: string;
  checkpoints: CheckpointView[];
}

/** Every checkpoint, oldest first, following `next` (bounded by checkpointPagesMax pages). */
export async function allCheckpoints(ctx: Context): Promise<CheckpointView[]> {
  const newestFirst: CheckpointView[] = [];
  let before: number | undefined;
  for (let pages = 0; pages < checkpointPagesMax; pages++) {
    const page = await ctx.client().get<CheckpointPage>('/v1/checkpoints', { limit: 1000, before });
    newestFirst.push(...page.items);
    if (page.next === undefined) return newestFirst.reverse();
    before = page.next;
  }
  throw new CliError(`stopped after ${checkpointPagesMax} pages of checkpoints`, exitCodes.refused);
}

/** Reads a checkpoints file and checks its commitment chain; a file that does not hold is a usage error. */
export async function readCheckpointsFile(path: string): Promise<CheckpointsFile> {
  let file: CheckpointsFile;
  try {
    file = JSON.parse(await readFile(path, 'utf8')) as CheckpointsFile;
  } catch (error) {
    throw new UsageError(`--checkpoints ${path}: ${(error as Error).message}`);
  }
  const wellFormed = file?.format === 'ledger-checkpoints:v1' && Number.isSafeInteger(file.instance) && typeof file.clerk === 'string' && Array.isArray(file.checkpoints);
  if (!wellFormed) throw new UsageError(`--checkpoints ${path} is not a file written by ledgerctl checkpoints export`);
  const problem = chainProblem(file.instance, file.checkpoints);
  if (problem !== null) throw new UsageError(`--checkpoints ${path}: ${problem}`);
  return file;
}

/** A value given inline or as `@file` (its text, trimmed). */
export async function inlineOrFile(flag: string, text: string): Promise<string> {
  return text.startsWith('@') ? inputFile(flag, text.slice(1)).trim() : text.trim();
}

/** Prints a report of checks (CONTRACT 12.8: one line each, `--json` `{passed, report}`); exit 1 unless it passed. */
export function showChecks(ctx: Context, verification: { passed: boolean; report: string }, failure: string): void {
  ctx.out.result(verification, () => `${verification.report}\n${verification.passed ? 'passed' : 'FAILED'}`);
  if (!verification.passed) throw new CliError(failure, exitCodes.refused);
}
