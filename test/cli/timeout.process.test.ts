/**
 * Issue 20 item 11: `--timeout-ms` bounds the whole ledgerctl command, its own retries and its wait
 * for a decision included. The built CLI is timed (wall clock, process start to exit) against a
 * closed port and against a listener that accepts and never answers; the same command given a
 * URL it refuses before connecting (exit 2) gives what starting it costs on this machine now,
 * which is taken off.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/daemon.js';
import { configDir, ledgerctl } from './support/ledgerctl.js';

const timeoutMs = 100;
/** Above the bound: scheduling on a loaded machine, and the last attempt's own connect. */
const slackMs = 400;

const sockets = new Set<Socket>();
// Accepts connections and reads what comes, never answering: a daemon that hangs, or a black hole.
const blackhole: Server = createServer((socket) => {
  sockets.add(socket);
  socket.on('error', () => {});
  socket.resume();
});
let closedPort: number;

beforeAll(async () => {
  closedPort = await freePort();
  await new Promise<void>((ready) => blackhole.listen(0, '127.0.0.1', ready));
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((done) => blackhole.close(() => done()));
});

/** The quicker of two runs (what the machine's load adds is noise, not the command's time); both must exit with `code`. */
async function timed(args: readonly string[], url: string, code: number): Promise<{ stderr: string; ms: number }> {
  let best = { stderr: '', ms: Infinity };
  for (let i = 0; i < 2; i++) {
    const started = performance.now();
    const run = await ledgerctl(args, { LEDGER_URL: url, LEDGER_TOKEN: 'ledger_ak_x', LEDGERCTL_CONFIG_DIR: configDir() });
    const ms = performance.now() - started;
    expect(run.code, run.stderr).toBe(code);
    if (ms < best.ms) best = { stderr: run.stderr, ms };
  }
  return best;
}

const transfer = ['transfers', 'create', '--from', 'did:ledger:acct:alice', '--to', 'did:ledger:acct:bob', '--amount', '1', '--asset', 'USD', '--timeout-ms', String(timeoutMs)];
const read = ['operations', 'show', 'op_0000000000000001', '--timeout-ms', String(timeoutMs)];

describe('--timeout-ms', () => {
  for (const [what, target] of [
    ['a closed port', () => `http://127.0.0.1:${closedPort}`],
    ['a listener that never answers', () => `http://127.0.0.1:${(blackhole.address() as { port: number }).port}`],
  ] as const) {
    it(`bounds a whole submission and a read against ${what}`, async () => {
      for (const args of [transfer, read]) {
        // Starting node and this command, as this machine does it now: a URL of another scheme is refused before any connection.
        const start = await timed(args, 'ftp://127.0.0.1/', 2);
        const run = await timed(args, target(), 3);
        expect(run.ms - start.ms, `${args[0]} ${args[1]}: ${Math.round(run.ms)} ms, starting ${Math.round(start.ms)} ms\n${run.stderr}`).toBeLessThan(timeoutMs + slackMs);
      }
    });
  }
});
