/**
 * The verifiable book as the CLI sees it: checkpoints (CONTRACT 9), the clerk, and the
 * checkpoints file `checkpoints export` writes and `disclosures verify --offline` trusts.
 */
import { readFile } from 'node:fs/promises';
import { chainProblem } from '../src/disclosures/verify.js';
import type { Context } from './context.js';
import { CliError, UsageError, exitCodes } from './errors.js';
import { checkpointPagesMax } from './limits.js';
import { inputFile } from './parse.js';

export interface CheckpointView {
  number: number;
  status: 'pending' | 'submitted' | 'final';
  entry_sequence: number;
  kernel_root: string;
  commitment: string;
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
