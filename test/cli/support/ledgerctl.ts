/** Running the built `ledgerctl` as a process, as operators and runbooks do. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
// Removed when the test process ends, whichever test made them and however it ended.
process.once('exit', () => {
  for (const dir of madeDirs) rmSync(dir, { recursive: true, force: true });
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
