/**
 * Issue 20 item 11: `--timeout-ms` bounds the whole ledgerctl command, its own retries and its wait
 * for a decision included. The built CLI is timed (wall clock, process start to exit) against a
 * closed port and against a listener that accepts and never answers; a usage error run the same
 * way gives what starting the process costs on this machine, which is taken off.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/daemon.js';
import { configDir, ledgerctl } from './support/ledgerctl.js';

const timeoutMs = 200;
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

async function timed(args: readonly string[], url: string): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = performance.now();
  const run = await ledgerctl(args, { LEDGER_URL: url, LEDGER_TOKEN: 'ledger_ak_x', LEDGERCTL_CONFIG_DIR: configDir() });
  return { code: run.code, stderr: run.stderr, ms: performance.now() - started };
}

const transfer = ['transfers', 'create', '--from', 'did:ledger:acct:alice', '--to', 'did:ledger:acct:bob', '--amount', '1', '--asset', 'USD', '--timeout-ms', String(timeoutMs)];
const read = ['operations', 'show', 'op_0000000000000001', '--timeout-ms', String(timeoutMs)];

describe('--timeout-ms', () => {
  for (const [what, target] of [
    ['a closed port', () => `http://127.0.0.1:${closedPort}`],
    ['a listener that never answers', () => `http://127.0.0.1:${(blackhole.address() as { port: number }).port}`],
  ] as const) {
    it(`bounds a whole submission and a read against ${what}`, async () => {
      // Starting node and ledgerctl, as this machine does it now: a usage error reaches no service.
      const start = await timed(['transfers', 'create', '--timeout-ms', String(timeoutMs)], target());
      expect(start.code).toBe(2);
      for (const args of [transfer, read]) {
        const run = await timed(args, target());
        expect(run.code, run.stderr).toBe(3);
        expect(run.ms - start.ms, `${args[0]} ${args[1]}: ${Math.round(run.ms)} ms, starting ${Math.round(start.ms)} ms\n${run.stderr}`).toBeLessThan(timeoutMs + slackMs);
      }
    });
  }
});
