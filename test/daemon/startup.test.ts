/**
 * Start-up failures of `ledgerd` (issue 9): each is one line on stderr naming the problem
 * and what to do, with its documented exit code (docs/daemon.md, man/ledgerd.8), and no
 * stack trace. A pre-existing data dir is made 0700.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { exitCodes } from '../../daemon/failures.js';
import { ledgerd, repoRoot, startDaemon, useTempDirs, writeBook } from './support.js';

const run = promisify(execFile);
const newDir = useTempDirs();

async function ledgerdFails(args: string[]): Promise<{ code: number; line: string }> {
  const outcome = await run(process.execPath, [ledgerd, ...args], { env: { ...process.env, LEDGERD_LOG_LEVEL: 'warn' }, timeout: 20_000 }).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  );
  const lines = outcome.stderr.split('\n').filter((l) => l.length > 0);
  // One line, ours, and no stack trace.
  expect(lines, outcome.stderr).toHaveLength(1);
  // Once serve's log exists, a failure is a fatal line of it (JSON off a terminal), not a plain line among JSON ones.
  const logged = lines[0]!.startsWith('{') ? (JSON.parse(lines[0]!) as { level: number; msg: string; exitCode: number }) : null;
  if (logged !== null) expect(logged).toMatchObject({ level: 60, exitCode: outcome.code });
  const line = logged === null ? lines[0]! : `ledgerd: ${logged.msg}`;
  expect(line).toMatch(/^ledgerd: /);
  expect(outcome.stderr).not.toMatch(/\n\s+at /);
  return { code: outcome.code, line };
}

describe('ledgerd start-up failures', () => {
  it('a listen address in use: exit 5, naming the address and what to do', async () => {
    const dir = newDir();
    await writeBook(dir, {});
    const first = await startDaemon({ dataDir: dir });
    try {
      const other = newDir();
      await writeBook(other, {});
      const { code, line } = await ledgerdFails(['serve', '--data-dir', other, '--listen', `127.0.0.1:${first.port}`]);
      expect(code).toBe(exitCodes.listen);
      expect(line).toContain(`127.0.0.1:${first.port}`);
      expect(line).toMatch(/in use.*--listen/);
    } finally {
      expect(await first.stop()).toBe(0);
    }
  });

  it('a data dir another ledgerd holds: exit 4, naming the data dir', async () => {
    const dir = newDir();
    await writeBook(dir, {});
    const first = await startDaemon({ dataDir: dir });
    try {
      const { code, line } = await ledgerdFails(['serve', '--data-dir', dir, '--listen', '127.0.0.1:0']);
      expect(code).toBe(exitCodes.dataDir);
      expect(line).toContain(dir);
      expect(line).toMatch(/another ledgerd.*--data-dir/);
    } finally {
      expect(await first.stop()).toBe(0);
    }
  });

  it('a data dir that cannot be made: exit 4', async () => {
    const { code, line } = await ledgerdFails(['serve', '--data-dir', '/dev/null/ledgerd', '--listen', '127.0.0.1:0']);
    expect(code).toBe(exitCodes.dataDir);
    expect(line).toContain('/dev/null/ledgerd');
  });

  it('an unreadable, a malformed, or an unknown setting in the config file: exit 3, naming the file', async () => {
    const dir = newDir();
    const unreadable = join(dir, 'is-a-directory.json');
    mkdirSync(unreadable);
    const malformed = join(dir, 'malformed.json');
    writeFileSync(malformed, '{"backlogMax": ');
    const unknown = join(dir, 'unknown.json');
    writeFileSync(unknown, '{"backlogMaximum": 5}');
    for (const [file, what] of [
      [unreadable, /cannot read config file .*is-a-directory\.json/],
      [malformed, /malformed\.json is not JSON/],
      [unknown, /unknown\.json: unknown setting backlogMaximum/],
    ] as const) {
      const { code, line } = await ledgerdFails(['serve', '--data-dir', join(dir, 'data'), '--config', file]);
      expect(code).toBe(exitCodes.config);
      expect(line).toMatch(what);
      expect(line).toMatch(/fix the configuration/);
    }
    const outOfBounds = join(dir, 'bounds.json');
    writeFileSync(outOfBounds, '{"backlogMax": 0}');
    expect((await ledgerdFails(['serve', '--data-dir', join(dir, 'data'), '--config', outOfBounds])).code).toBe(exitCodes.config);
  });

  it('an unreadable genesis file: exit 3; a second init: exit 4', async () => {
    const dir = newDir();
    const missing = await ledgerdFails(['init', '--data-dir', join(dir, 'a'), '--genesis', join(dir, 'nowhere.json')]);
    expect(missing.code).toBe(exitCodes.config);
    expect(missing.line).toContain('nowhere.json');
    await writeBook(join(dir, 'b'), {});
    const again = await ledgerdFails(['init', '--data-dir', join(dir, 'b')]);
    expect(again.code).toBe(exitCodes.dataDir);
  });

  it('makes a pre-existing data dir 0700', async () => {
    const dir = newDir();
    await writeBook(dir, {});
    chmodSync(dir, 0o755);
    const daemon = await startDaemon({ dataDir: dir });
    try {
      expect(statSync(dir).mode & 0o777).toBe(0o700);
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  });

  it('documents every exit code in docs/daemon.md and man/ledgerd.8', () => {
    const docs = readFileSync(join(repoRoot, 'docs/daemon.md'), 'utf8');
    const man = readFileSync(join(repoRoot, 'man/ledgerd.8'), 'utf8');
    for (const code of Object.values(exitCodes)) {
      expect(docs, `docs/daemon.md: exit ${code}`).toMatch(new RegExp(`\\| ${code} \\|`));
      expect(man, `man/ledgerd.8: exit ${code}`).toMatch(new RegExp(`\\.TP\\n${code}\\n`));
    }
  });
});
