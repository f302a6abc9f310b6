import { createHash } from 'node:crypto';
import { access, link, open, rename, rm } from 'node:fs/promises';
import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import type { Context } from '../../context.js';
import { isUnreachable } from '../../client.js';
import { CliError, UnreachableError, UsageError, exitCodes } from '../../errors.js';
import { isTerminal } from '../../io.js';
import { backupLineBytesMax } from '../../limits.js';

/** How often the progress line on a terminal is redrawn. */
const progressEveryMs = 250;

export function buildBackup(parent: Command, make: MakeContext): Command {
  return parent
    .command('backup')
    .description('a consistent backup of the whole book from one snapshot, while it serves (operator; GET /v1/ops/backup); restore it with ledgerd restore')
    .requiredOption('--out <file>', 'the file to write (mode 0600); written beside it and renamed in once whole (and, in plain, verified)')
    .option('--force', 'replace --out if it exists (without it, an existing file is refused before the backup starts, exit 2)')
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

/** A size for people: bytes in binary units (`512 B`, `1.5 KiB`, `12.3 MiB`). */
function sizeOf(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

const refusedOverwrite = (out: string) => new UsageError(`${out} exists: give --force to replace it, or another --out`);

export async function runBackup(ctx: Context, options: { out: string; recipient?: string; force?: boolean }): Promise<void> {
  const { recipient } = options;
  const force = options.force === true;
  // Refused before the daemon is asked for anything (and again, race-free, when the file is put in place).
  if (!force && (await access(options.out).then(() => true, () => false))) throw refusedOverwrite(options.out);
  const body =
    recipient === undefined
      ? await ctx.client().download('/v1/ops/backup', 'application/x-ndjson')
      : await ctx.client().download('/v1/ops/backup', 'application/octet-stream', { recipient });
  const temp = `${options.out}.partial`;
  const file = await open(temp, 'w', 0o600);
  const verifier = recipient === undefined ? new BackupVerifier() : new ByteCounter();
  const onTerminal = isTerminal(ctx.io.stderr);
  const startedAtMs = Date.now();
  let drawnAtMs = 0;
  let drawn = false;
  let summary;
  try {
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        verifier.push(chunk);
        await file.write(chunk);
        if (onTerminal && Date.now() - drawnAtMs >= progressEveryMs) {
          drawnAtMs = Date.now();
          const perSecond = verifier.bytes / Math.max((drawnAtMs - startedAtMs) / 1000, 0.001);
          ctx.io.stderr.write(`\r\x1b[Kbackup: ${sizeOf(verifier.bytes)}, ${sizeOf(Math.round(perSecond))}/s`);
          drawn = true;
        }
      }
    } catch (error) {
      if (isUnreachable(error)) throw new UnreachableError(`the backup stream broke off: ${(error as Error).message}; nothing was written, try again`);
      throw error;
    } finally {
      // The progress line is erased, not left on the screen above the result.
      if (drawn) ctx.io.stderr.write('\r\x1b[K');
    }
    summary = verifier instanceof BackupVerifier ? verifier.end() : null;
    await file.sync();
    await file.close();
    if (force) await rename(temp, options.out);
    else await putInPlace(temp, options.out);
  } catch (error) {
    await file.close().catch(() => {});
    await rm(temp, { force: true });
    throw error;
  }
  const size = `${sizeOf(verifier.bytes)} (${verifier.bytes.toLocaleString('en-US')} bytes)`;
  if (summary === null) {
    const result = { file: options.out, bytes: verifier.bytes, recipient };
    ctx.out.result(result, () => `backup written to ${result.file}: ${size}, encrypted to ${recipient}`);
    return;
  }
  const result = { file: options.out, bytes: verifier.bytes, entries: summary.entries, sha256: summary.sha256 };
  ctx.out.result(result, () => `backup written to ${result.file}: ${result.entries.toLocaleString('en-US')} entries, ${size}, sha256 ${result.sha256}`);
}

/** Puts the written file in place only if nothing is there (a link fails on an existing name, where a rename would replace it). */
async function putInPlace(temp: string, out: string): Promise<void> {
  try {
    await link(temp, out);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw refusedOverwrite(out);
    throw error;
  }
  await rm(temp);
}
