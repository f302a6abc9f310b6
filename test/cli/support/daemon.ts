/**
 * A real `ledgerd` for process tests: one per test file, on a fresh data dir and a free port,
 * stopped with SIGTERM (and its data dir removed) when the file is done.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const repoRoot = resolve(import.meta.dirname, '../../..');
// As the daemon tests wait (test/daemon/support.ts): a start-up on a loaded 2-core machine took over 20 s once.
const readyTimeoutMs = 55_000;
const stopTimeoutMs = 10_000;

export interface Daemon {
  url: string;
  dataDir: string;
  operatorKey: string;
  identitiesKey: string;
  process: ChildProcess;
  /** Stops it (SIGTERM) and waits for the exit. */
  stop(): Promise<void>;
  /** Stops it and serves the same data dir again on the same port, running `whileDown` in between. */
  restart(whileDown?: () => Promise<void>): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** Customers in the book from the start (genesis), beside the embedded defaults. */
export const genesisIdentities = ['did:ledger:id:alice', 'did:ledger:id:bob'];

export async function startDaemon(options: { genesis?: object } = {}): Promise<Daemon> {
  const root = mkdtempSync(join(tmpdir(), 'ledgerctl-test-'));
  const dataDir = join(root, 'data');
  if (options.genesis !== undefined) {
    const file = join(root, 'genesis.json');
    writeFileSync(file, JSON.stringify(options.genesis));
    await runToEnd(['init', '--data-dir', dataDir, '--genesis', file]);
  }
  const port = await freePort();
  let child = await serve(dataDir, port);
  const stopChild = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    stopping.add(child);
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
    await exited;
    clearTimeout(timer);
  };
  const daemon: Daemon = {
    url: `http://127.0.0.1:${port}`,
    dataDir,
    operatorKey: readFileSync(join(dataDir, 'operator.key'), 'utf8').trim(),
    identitiesKey: readFileSync(join(dataDir, 'identities.key'), 'utf8').trim(),
    get process() {
      return child;
    },
    async stop() {
      await stopChild();
      rmSync(root, { recursive: true, force: true });
    },
    async restart(whileDown) {
      await stopChild();
      await whileDown?.();
      child = await serve(dataDir, port);
    },
  };
  return daemon;
}

const stopping = new WeakSet<ChildProcess>();

function serve(dataDir: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['bin/ledgerd', 'serve', '--data-dir', dataDir, '--listen', `127.0.0.1:${port}`, '--log-level', 'warn'], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((done, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`ledgerd not ready in ${readyTimeoutMs} ms:\n${out}`)), readyTimeoutMs);
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      if (/ledgerd listening on http:\/\/\S+/.test(out)) {
        clearTimeout(timer);
        done(child);
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`ledgerd exited ${code ?? signal} before it was ready:\n${out}`));
      // A daemon that dies under a test is the first thing to know when later requests cannot connect.
      if (!stopping.has(child)) process.stderr.write(`ledgerd on port ${port} exited ${code ?? signal}:\n${out.slice(-4000)}\n`);
    });
  });
}

function runToEnd(args: string[]): Promise<void> {
  const child = spawn(process.execPath, ['bin/ledgerd', ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((done, fail) => child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`ledgerd ${args.join(' ')} exited ${code}:\n${out}`)))));
}
