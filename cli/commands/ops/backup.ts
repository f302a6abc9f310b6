import { createHash } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { isUnreachable } from '../../client.js';
import { CliError, UnreachableError, exitCodes } from '../../errors.js';
import { isTerminal } from '../../io.js';
import { backupLineBytesMax } from '../../limits.js';

/** How often the progress line on a terminal is redrawn. */
const progressEveryMs = 250;

export function buildBackup(parent: Command, make: MakeContext): Command {
  return parent
    .command('backup')
    .description('a consistent backup of the whole book from one snapshot, while it serves (operator; GET /v1/ops/backup); restore it with ledgerd restore')
    .requiredOption('--out <file>', 'the file to write (mode 0600); written beside it and renamed in once whole (and, in plain, verified)')
    .option('--recipient <age1…>', 'encrypt the backup to this age X25519 recipient (the daemon refuses a plain one unless its config sets backup.allowPlaintext); restore with ledgerd restore --identity')
    .action(action(make, runBackup));
}

/**
 * The backup's checksum covers every byte before its last line (the trailer): bytes
 * are hashed once the line after them has begun, so the trailer alone is held back.
 */
class BackupVerifier {
  private readonly hash = createHash('sha256');
  /** Bytes not hashed yet: the line being read, in the chunks it came in (never joined until the end). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  bytes = 0;

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.bytes += chunk.length;
    const last = this.pending.at(-1);
    // A line after the pending bytes has begun when a break comes before this chunk's last byte, or ended them.
    const lastBreak = chunk.lastIndexOf(0x0a, chunk.length - 2);
    if (lastBreak >= 0 || last?.[last.length - 1] === 0x0a) {
      for (const piece of this.pending) this.hash.update(piece);
      this.hash.update(chunk.subarray(0, lastBreak + 1));
      this.pending = [];
      this.pendingBytes = 0;
      chunk = chunk.subarray(lastBreak + 1);
    }
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes > backupLineBytesMax) throw new UnreachableError(`a line of more than ${backupLineBytesMax} bytes, longer than any record`);
  }

  /** The trailer's entry count, once its checksum matches; a damaged or truncated stream is an error. */
  end(): { entries: number; sha256: string } {
    const sha256 = this.hash.digest('hex');
    type Trailer = { end?: unknown; entries?: unknown; sha256?: unknown } | null;
    let trailer: Trailer;
    try {
      trailer = JSON.parse(Buffer.concat(this.pending).toString('utf8')) as Trailer;
    } catch {
      trailer = null;
    }
    if (trailer?.end !== true || typeof trailer.entries !== 'number' || trailer.sha256 !== sha256) {
      throw new CliError('the backup stream ended without a matching trailer (truncated or damaged); nothing was written, try again', exitCodes.refused);
    }
    return { entries: trailer.entries, sha256 };
  }
}

/** An encrypted backup is checked by age when it is restored (each 64 KiB chunk and the last one authenticated): here it is only counted. */
class ByteCounter {
  bytes = 0;
  push(chunk: Buffer): void {
    this.bytes += chunk.length;
  }
}

export async function runBackup(ctx: Context, options: { out: string; recipient?: string }): Promise<void> {
  const { recipient } = options;
  const body =
    recipient === undefined
      ? await ctx.client().download('/v1/ops/backup', 'application/x-ndjson')
      : await ctx.client().download('/v1/ops/backup', 'application/octet-stream', { recipient });
  const temp = `${options.out}.partial`;
  const file = await open(temp, 'w', 0o600);
  const verifier = recipient === undefined ? new BackupVerifier() : new ByteCounter();
  const onTerminal = isTerminal(ctx.io.stderr);
  let drawnAtMs = 0;
  let summary;
  try {
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        verifier.push(chunk);
        await file.write(chunk);
        if (onTerminal && Date.now() - drawnAtMs >= progressEveryMs) {
          drawnAtMs = Date.now();
          ctx.io.stderr.write(`\rbackup: ${(verifier.bytes / 1024 / 1024).toFixed(1)} MiB`);
        }
      }
    } catch (error) {
      if (isUnreachable(error)) throw new UnreachableError(`the backup stream broke off: ${(error as Error).message}; nothing was written, try again`);
      throw error;
    }
    if (onTerminal) ctx.io.stderr.write('\n');
    summary = verifier instanceof BackupVerifier ? verifier.end() : null;
    await file.sync();
    await file.close();
    await rename(temp, options.out);
  } catch (error) {
    await file.close().catch(() => {});
    await rm(temp, { force: true });
    throw error;
  }
  if (summary === null) {
    const result = { file: options.out, bytes: verifier.bytes, recipient };
    ctx.out.result(result, () => `backup written to ${result.file}: ${result.bytes} bytes, encrypted to ${recipient}`);
    return;
  }
  const result = { file: options.out, bytes: verifier.bytes, entries: summary.entries, sha256: summary.sha256 };
  ctx.out.result(result, () => `backup written to ${result.file}: ${result.entries} entries, ${result.bytes} bytes, sha256 ${result.sha256}`);
}
