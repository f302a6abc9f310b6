/**
 * Issue 25 item 12: the README's test command on a fresh machine. Its first lines name what to
 * install, `npm test` checks for it first (test/prerequisites.mjs) and names what is missing, and
 * .ci/run installs the same packages, so the three cannot drift.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './cli/support/daemon.js';

const checker = join(repoRoot, 'test/prerequisites.mjs');
const packages = execFileSync(process.execPath, [checker, '--packages'], { encoding: 'utf8' }).trim().split(' ');

describe('what the test suite needs beside Node.js', () => {
  it("is named by the README's first lines, right after the two commands it opens with", () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const lines = readme.split('\n');
    // The title, a blank line, then the two commands a newcomer types.
    expect(lines.slice(2, 6).map((l) => l.replace(/\s+#.*/, ''))).toEqual(['```sh', 'npm ci && npm start', 'npm ci && npm test', '```']);
    expect(lines.slice(6, 11).join('\n')).toContain(`apt-get install ${packages.join(' ')}\``);
  });

  it('is checked first by npm test', () => {
    const scripts = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.test).toMatch(/^node test\/prerequisites\.mjs && /);
  });

  it('is what .ci/run installs', () => {
    const ci = readFileSync(join(repoRoot, '.ci/run'), 'utf8');
    expect([...ci.matchAll(/need_apt\+=\(([a-z-]+)\)/g)].map((m) => m[1])).toEqual(packages);
  });

  it('stops the run at once on a machine without it, naming each package and the command that installs them', () => {
    const r = spawnSync(process.execPath, [checker], { env: { PATH: '/nonexistent', PG_BIN_DIR: '/nonexistent' }, encoding: 'utf8' });
    expect(r.status).toBe(1);
    for (const pkg of packages) expect(r.stderr).toMatch(new RegExp(`^  ${pkg}: .*\\(not found: `, 'm'));
    expect(r.stderr).toContain(`install it first (Debian): apt-get install ${packages.join(' ')}\n`);
  });

  it('passes on this machine, which has it (as CI does)', () => {
    const r = spawnSync(process.execPath, [checker], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
