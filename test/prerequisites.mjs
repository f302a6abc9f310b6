#!/usr/bin/env node
/**
 * What the test suite drives beside Node.js, checked by `npm test` before it builds or runs
 * anything: on a machine without them it stops at once and says what to install (README's first
 * lines), instead of failing a few tests ten minutes in. The packages are Debian's; .ci/run
 * installs the same list (test/prerequisites.test.ts holds the three together).
 *
 *   node test/prerequisites.mjs              check (exit 1 naming what is missing)
 *   node test/prerequisites.mjs --packages   print the Debian packages, one line
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const executable = (path) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** A program named by its path, or found on PATH as a shell would. */
const found = (program) => (program.startsWith('/') ? executable(program) : (process.env.PATH ?? '').split(delimiter).some((dir) => executable(join(dir, program))));

const postgresBinDir = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';

/** Each package, the programs of it the tests run, and which tests. */
const needs = [
  { pkg: 'tmux', programs: ['tmux'], why: 'the dashboard and reclaim tests drive ledgerctl in tmux' },
  { pkg: 'zsh', programs: ['zsh'], why: 'the completion test runs the zsh script' },
  { pkg: 'fish', programs: ['fish'], why: 'the completion test runs the fish script' },
  { pkg: 'man-db', programs: ['man', 'groff'], why: 'the man page tests render both pages' },
  { pkg: 'age', programs: ['age', 'age-keygen'], why: 'the backup tests decrypt with the reference age' },
  { pkg: 'systemd', programs: ['systemd-analyze'], why: 'the install test verifies the systemd unit' },
  { pkg: 'postgresql', programs: [join(postgresBinDir, 'initdb'), join(postgresBinDir, 'postgres')], why: 'the PostgreSQL store tests start private clusters (or set PG_BIN_DIR)' },
];

if (process.argv.includes('--packages')) {
  process.stdout.write(`${needs.map((n) => n.pkg).join(' ')}\n`);
} else {
  const missing = needs.filter((n) => !n.programs.every(found));
  const problems = missing.map((n) => `  ${n.pkg}: ${n.why} (not found: ${n.programs.filter((p) => !found(p)).join(', ')})`);
  // The storage-fault test fills a small tmpfs it mounts, which only root may do.
  if (process.getuid?.() !== 0) problems.push('  root: the storage-fault test mounts a small tmpfs; run the suite as root (as .ci/run does, in a container or VM)');
  if (problems.length > 0) {
    process.stderr.write(
      `npm test: the suite needs what this machine lacks:\n${problems.join('\n')}\n` +
        (missing.length > 0 ? `install it first (Debian): apt-get install ${missing.map((n) => n.pkg).join(' ')}\n` : ''),
    );
    process.exit(1);
  }
}
