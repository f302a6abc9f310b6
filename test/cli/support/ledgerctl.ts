/** Running the built `ledgerctl` as a process, as operators and runbooks do. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { repoRoot } from './daemon.js';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  json<T = any>(): T;
}

const runTimeoutMs = 30_000;

/** stderr without the line naming the client key ledgerctl made for a submission (CONTRACT 11). */
export const withoutClientKey = (stderr: string): string => stderr.replace(/^client key [0-9a-f]{32}\n/gm, '');

const madeDirs = new Set<string>();
// Removed when the test file ends, however its tests ended: registered at import, the hook is the
// importing file's. (An 'exit' handler did not do: vitest ends its forks by a signal, and /tmp
// kept every directory, ~3,900 in a day.)
afterAll(() => {
  for (const dir of madeDirs) rmSync(dir, { recursive: true, force: true });
  madeDirs.clear();
});

/** A fresh profile directory, so no test reads or writes the user's own profiles. */
export function configDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerctl-config-'));
  madeDirs.add(dir);
  return dir;
}

export function ledgerctl(args: readonly string[], env: Record<string, string | undefined> = {}, stdin?: string): Promise<Run> {
  const child = spawn(process.execPath, ['bin/ledgerctl', ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(stdin ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), runTimeoutMs);
  return new Promise((done) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, json: () => JSON.parse(stdout) });
    }),
  );
}
