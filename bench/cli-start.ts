/**
 * CLI start-up benchmark: the wall time of whole `ledgerctl` processes, as a runbook calls
 * them (spawned one after the other, each to its exit), against a real `ledgerd` on a fresh
 * book on loopback. Prints p50 and p90 (ms) of `--runs` calls of each command, with the p50 of
 * their CPU time, and of a bare `node -e 0` for the floor on this machine. Nothing is asserted.
 *
 *   npm run build && node dist/bench/cli-start.js [--runs 30] [--ledgerctl PATH]
 *
 * `--ledgerctl PATH` times another checkout's `bin/ledgerctl` (built) against the same
 * ledgerd: run it once with the old tree and once with the new for a before and after.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { arch, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startServer, stopServer } from './http-load.js';
import { percentile } from './percentile.js';

const repoRoot = resolve(import.meta.dirname, '../..');
const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '30' }, ledgerctl: { type: 'string', default: join(repoRoot, 'bin/ledgerctl') } } });
const runs = Number(args.runs);
const ledgerctl = resolve(args.ledgerctl);

/**
 * p50 and p90 of `runs` spawns of `argv` (wall time), and the p50 of their CPU time (user + system,
 * from /usr/bin/time: what other processes on a loaded machine change least), each checked to exit 0
 * (a failing command would time its error path).
 */
function timeRuns(argv: readonly string[], env: NodeJS.ProcessEnv): { p50Ms: number; p90Ms: number; cpuP50Ms: number } {
  const samples: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const startedAt = performance.now();
    const result = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, ...argv], { env, encoding: 'utf8' });
    samples.push(performance.now() - startedAt);
    if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}: ${result.stderr}`);
    const [userS, systemS] = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(result.stderr)!.slice(1).map(Number) as [number, number];
    cpu.push((userS + systemS) * 1000);
  }
  samples.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return { p50Ms: percentile(samples, 50), p90Ms: percentile(samples, 90), cpuP50Ms: percentile(cpu, 50) };
}

const root = mkdtempSync(join(tmpdir(), 'ledger-cli-start-'));
const dataDir = join(root, 'book');
const { url, child } = await startServer([join(repoRoot, 'bin/ledgerd'), 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--log-level', 'warn']);
try {
  // A profile-less call, as a runbook's: the address and token from the environment.
  const env = { ...process.env, LEDGER_URL: url, LEDGER_TOKEN: readFileSync(join(dataDir, 'operator.key'), 'utf8').trim(), LEDGERCTL_CONFIG_DIR: join(root, 'config') };
  const commands: [string, string[]][] = [
    ['node -e 0 (the floor)', ['-e', '0']],
    ['ledgerctl --version', [ledgerctl, '--version']],
    ['ledgerctl assets list', [ledgerctl, 'assets', 'list']],
    ['ledgerctl accounts balance treasury:USD', [ledgerctl, 'accounts', 'balance', 'treasury:USD']],
    ['ledgerctl --help', [ledgerctl, '--help']],
  ];
  console.log(`${ledgerctl}, node ${process.version} ${arch()}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}, load ${loadavg()[0]!.toFixed(1)}, ${runs} runs each`);
  for (const [name, argv] of commands) {
    const { p50Ms, p90Ms, cpuP50Ms } = timeRuns(argv, env);
    console.log(`${name.padEnd(42)} p50 ${p50Ms.toFixed(0).padStart(4)} ms  p90 ${p90Ms.toFixed(0).padStart(4)} ms  CPU p50 ${cpuP50Ms.toFixed(0).padStart(4)} ms`);
  }
} finally {
  await stopServer(child);
  rmSync(root, { recursive: true, force: true });
}
