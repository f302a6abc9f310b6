/**
 * GET /v1/ops/backup[?recipient=age1…] (operator only): the whole book, streamed from one
 * store snapshot in the backup format (daemon/backup-format.ts), signed by the book's
 * backup key and encrypted to the age X25519 recipient (CONTRACT 13; plaintext only when
 * the config sets `backup.allowPlaintext`), while the daemon goes on deciding. Pulled a
 * page at a time as the client reads: a slow client holds the reads back, and memory
 * stays at one page. One backup at a time, in one of the operator's read slots
 * (daemon/snapshot-slots.ts) for as long as it streams; a client that reads nothing for
 * `backup.stallTimeoutMs` is cut off, so it cannot hold the slot and its snapshot.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { refuse } from '../../src/errors.js';
import { type CarriedFile, type CarriedFiles, backupLines, carriedFiles, encryptedOnlyFiles } from '../backup-format.js';
import { loadBackupKey } from '../backup-key.js';
import { daemonKeys } from '../book.js';
import { callerOf, requireOperator } from '../http/auth.js';
import type { Held } from '../snapshot-slots.js';
import { recordAct } from '../http/direct-command.js';
import { gateApproval } from '../http/approvals.js';
import { object, responses, str } from '../http/schemas.js';
import type { RouteContext } from './context.js';

/** Backups streaming at once: each holds a snapshot (LevelDB keeps what it sees) and a reader. */
const backupsConcurrentMax = 1;

/** An age X25519 recipient: `age1` and 58 bech32 characters (the 32-byte key and its checksum). */
const recipientPattern = '^age1[02-9ac-hj-np-z]{58}$';

/** The files the backup carries; `encrypted`: it goes out encrypted, so it may carry what a plain one may not. */
async function readCarriedFiles(dataDir: string, encrypted: boolean): Promise<CarriedFiles> {
  const files: Partial<Record<CarriedFile, string>> = {};
  for (const name of carriedFiles) {
    if (!encrypted && encryptedOnlyFiles.includes(name)) continue;
    const path = join(dataDir, name);
    if (name === 'daemon.key' || existsSync(path)) files[name] = await readFile(path, 'utf8');
  }
  return files as CarriedFiles;
}

/** The lines, each yield timed: suspended at one (the client reads nothing) past `stallMs`, `onStall` runs. */
async function* watched(lines: AsyncIterable<string>, stallMs: number, onStall: () => void): AsyncGenerator<string> {
  for await (const line of lines) {
    const timer = setTimeout(onStall, stallMs);
    try {
      yield line;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Encrypts `plain` to `recipient` as it is pulled (age's STREAM: 64 KiB chunks, each authenticated). */
async function encryptedTo(recipient: string, plain: Readable): Promise<Readable> {
  // Loaded at the first encrypted backup, not at every start (age and its ciphers are ~50 modules).
  const { Encrypter } = await import('age-encryption');
  const encrypter = new Encrypter();
  encrypter.addRecipient(recipient);
  return Readable.fromWeb((await encrypter.encrypt(Readable.toWeb(plain) as ReadableStream<Uint8Array>)) as import('node:stream/web').ReadableStream<Uint8Array>);
}

export function backupRoutes(app: FastifyInstance, { kernel, config, clock }: RouteContext): void {
  let running = 0;
  // A backup still streaming when the daemon stops is cut off (its client sees no trailer and keeps no file): shutdown waits for no reader.
  const streaming = new Set<Readable>();
  app.addHook('preClose', async () => {
    for (const stream of streaming) stream.destroy();
  });
  app.get(
    '/v1/ops/backup',
    {
      schema: {
        operationId: 'backupBook',
        summary: 'Operator: a consistent backup of the book, streamed from one snapshot, signed by the backup key and encrypted to an age recipient (ledgerctl ops backup)',
        querystring: object({ recipient: str('an age X25519 recipient (age1…): the backup is encrypted to it; absent, refused unless the config sets backup.allowPlaintext', { pattern: recipientPattern }) }),
        response: responses({
          200: {
            description:
              'the backup (lines of JSON: a header (format, version, book, createdAtMs, head, files, signedBy), one [key, value] per store entry, a trailer {end, entries, sha256, signature}), as an age file encrypted to `recipient`, or plain when none is given and the config allows it',
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } }, 'application/x-ndjson': { schema: { type: 'string' } } },
          },
        }),
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'a backup of the book');
      const { recipient } = request.query as { recipient?: string };
      if (recipient === undefined && !config.backup.allowPlaintext) {
        refuse('ERR-MalformedCommand', 'a backup carries the book\'s secrets: name an age X25519 recipient (?recipient=age1…; ledgerctl ops backup --recipient), or set backup.allowPlaintext in the daemon\'s config');
      }
      // The backup rule (CONTRACT 13): while another admin could approve it, a backup goes by no direct request.
      const { unapproved } = await gateApproval(request, null);
      // The member's act is on the trail before the snapshot is taken, so the backup carries it (CONTRACT 13).
      await recordAct(kernel, { type: 'record_act', credential: callerOf(request).credential, act: 'backup', operation: null, justification: null, writes: [], ...(unapproved ? { unapproved } : {}) });
      if (running >= backupsConcurrentMax) refuse('ERR-DecisionUnavailable', 'a backup is being taken already; retry when it ends');
      running++;
      let files: CarriedFiles;
      let book: string;
      let signer: Awaited<ReturnType<typeof loadBackupKey>>;
      try {
        files = await readCarriedFiles(config.dataDir, recipient !== undefined);
        book = Buffer.from((await daemonKeys(config.dataDir)).book).toString('hex');
        signer = await loadBackupKey(config.dataDir);
      } catch (error) {
        running--;
        throw error;
      }
      let slot: Held;
      try {
        slot = await request.server.snapshots.acquire(request.server.snapshots.principal(callerOf(request).principal));
      } catch (error) {
        running--;
        throw error;
      }
      const taken = kernel.storeForChecks.snapshot();
      let started = false;
      let released = false;
      const release = async () => {
        if (released) return;
        released = true;
        running--;
        await taken.close().catch(() => {});
        slot.release();
      };
      const stalled = () => {
        request.log.warn({ stallTimeoutMs: config.backup.stallTimeoutMs }, 'a backup client read nothing for backup.stallTimeoutMs: cut off');
        reply.raw.destroy();
      };
      async function* lines() {
        started = true;
        try {
          yield* watched(backupLines(taken, book, files, clock(), signer), config.backup.stallTimeoutMs, stalled);
        } finally {
          await release();
        }
      }
      const plain = Readable.from(lines(), { objectMode: false });
      streaming.add(plain);
      plain.once('close', () => streaming.delete(plain));
      // A client gone before the first read: the generator never starts, so its finally never runs.
      plain.once('close', () => {
        if (!started) void release();
      });
      if (recipient === undefined) return reply.code(200).type('application/x-ndjson').send(plain);
      return reply.code(200).type('application/octet-stream').send(await encryptedTo(recipient, plain));
    },
  );
}
