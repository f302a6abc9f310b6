/**
 * A hostile or broken service behind LEDGER_URL answers without end: the built `ledgerctl`
 * reads at most its bound of one answer (a view, a refusal) or of one backup line, then
 * stops reading, refuses with exit 3 naming the bound, and writes nothing. Served text it echoes
 * on stderr is escaped.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupLineBytesMax, replyBytesMax } from '../../cli/limits.js';
import { configDir, ledgerctl } from './support/ledgerctl.js';

let server: Server;
let url: string;
/** Bytes the server managed to hand to the socket on its last endless answer. */
let sentBytes = 0;
const dir = mkdtempSync(join(tmpdir(), 'ledgerctl-hostile-'));

/** Writes `first`, then `chunk` for as long as the client keeps the connection (as fast as it reads). */
function endless(status: number, type: string, first: string, chunk: string) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    sentBytes = 0;
    res.writeHead(status, { 'content-type': type });
    res.write(first);
    const piece = Buffer.from(chunk.repeat(Math.ceil(65_536 / chunk.length)));
    const pump = () => {
      while (!res.destroyed) {
        sentBytes += piece.length;
        if (!res.write(piece)) return void res.once('drain', pump);
      }
    };
    pump();
  };
}

const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>([
  ['GET /v1/assets', endless(200, 'application/json', '[', '"USD",')],
  ['GET /v1/operations/op_1', endless(404, 'application/json', '{"error":"ERR-UnknownOperation","description":"', 'x')],
  ['GET /v1/ops/backup', endless(200, 'application/x-ndjson', '{"format":"ledgerd-backup"}\n', 'x')],
  // A "repeat" whose reference would forge a line of its own on stderr and clear the screen.
  [
    'POST /v1/transfers',
    (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json', 'ledger-replay': 'true' }).end(JSON.stringify({ client_key: 'k', client_key_derived: false, operation_reference: 'op_1\nERR-Forged: \u001b[2J', terminal: true, state: 'Completed' })),
  ],
]);

beforeAll(async () => {
  server = createServer((req, res) => (routes.get(`${req.method} ${req.url}`) ?? ((_q, r) => r.writeHead(404).end()))(req, res));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ LEDGER_URL: url, LEDGER_TOKEN: 't', LEDGERCTL_CONFIG_DIR: configDir() });

describe('ledgerctl against a service that answers without end', () => {
  it.each([
    ['a view', ['assets', 'list']],
    ['a refusal', ['operations', 'show', 'op_1']],
  ])('refuses %s past the bound of one answer, exit 3, having read little more', async (_what, args) => {
    const run = await ledgerctl([...args, '--timeout-ms', '60000'], env());
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`answered more than ${replyBytesMax} bytes, the bound of one answer`);
    expect(run.stdout).toBe('');
    // What the socket buffers hold past the bound, not the ~1.7 GB a minute of loopback would carry.
    expect(sentBytes).toBeLessThan(replyBytesMax + 16 * 1024 * 1024);
  });

  it('refuses a backup stream holding a line past the bound of one record, exit 3, and leaves no file', async () => {
    const out = join(dir, 'backup.ndjson');
    const run = await ledgerctl(['ops', 'backup', '--out', out, '--timeout-ms', '60000'], env());
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`a line of more than ${backupLineBytesMax} bytes`);
    expect(sentBytes).toBeLessThan(backupLineBytesMax + 16 * 1024 * 1024);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('ledgerctl against a service whose text is hostile', () => {
  it('says a replay on stderr with the served reference escaped: no line of its own, no escape sequence', async () => {
    const run = await ledgerctl(['transfers', 'create', '--from', 'did:ledger:acct:a', '--to', 'did:ledger:acct:b', '--amount', '1', '--asset', 'USD', '--client-key', 'k', '--no-wait'], env());
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("ledgerctl: replay: client key k was taken before; this is op_1\\nERR-Forged: \\x1b[2J's reply, nothing was done again\n");
  });
});
