/**
 * GET /v1/ops/backup (operator only): the whole book, streamed from one store snapshot
 * in the backup format (daemon/backup-format.ts), while the daemon goes on deciding.
 * Pulled a page at a time as the client reads: a slow client holds the reads back, and
 * memory stays at one page. One backup at a time.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { refuse } from '../../src/errors.js';
import { type CarriedFile, type CarriedFiles, backupLines, carriedFiles } from '../backup-format.js';
import { daemonKeys } from '../book.js';
import { callerOf, requireOperator } from '../http/auth.js';
import { recordAct } from '../http/direct-command.js';
import { noQuery, responses } from '../http/schemas.js';
import type { RouteContext } from './context.js';

/** Backups streaming at once: each holds a snapshot (LevelDB keeps what it sees) and a reader. */
const backupsConcurrentMax = 1;

async function readCarriedFiles(dataDir: string): Promise<CarriedFiles> {
  const files: Partial<Record<CarriedFile, string>> = {};
  for (const name of carriedFiles) {
    const path = join(dataDir, name);
    if (name === 'daemon.key' || existsSync(path)) files[name] = await readFile(path, 'utf8');
  }
  return files as CarriedFiles;
}

export function backupRoutes(app: FastifyInstance, { kernel, config, clock }: RouteContext): void {
  let running = 0;
  app.get(
    '/v1/ops/backup',
    {
      schema: {
        operationId: 'backupBook',
        summary: 'Operator: a consistent backup of the book, streamed from one snapshot (ledgerctl ops backup)',
        querystring: noQuery,
        response: responses({
          200: {
            description: 'lines of JSON: a header (format, version, book, createdAtMs, head, files), one [key, value] per store entry, a trailer {end, entries, sha256}',
            content: { 'application/x-ndjson': { schema: { type: 'string' } } },
          },
        }),
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'a backup of the book');
      // The member's act is on the trail before the snapshot is taken, so the backup carries it (CONTRACT 13).
      await recordAct(kernel, { type: 'record_act', credential: callerOf(request).credential, act: 'backup', operation: null, justification: null, writes: [] });
      if (running >= backupsConcurrentMax) refuse('ERR-DecisionUnavailable', 'a backup is being taken already; retry when it ends');
      running++;
      let files: CarriedFiles;
      let book: string;
      try {
        files = await readCarriedFiles(config.dataDir);
        book = Buffer.from((await daemonKeys(config.dataDir)).book).toString('hex');
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
      };
      async function* lines() {
        started = true;
        try {
          yield* backupLines(taken, book, files, clock());
        } finally {
          await release();
        }
      }
      const body = Readable.from(lines(), { objectMode: false });
      // A client gone before the first read: the generator never starts, so its finally never runs.
      body.once('close', () => {
        if (!started) void release();
      });
      return reply.code(200).type('application/x-ndjson').send(body);
    },
  );
}
