/**
 * CLI start-up benchmark: the wall time of whole `ledgerctl` processes, as a runbook calls them
 * (spawned one after the other, each to its exit), against a real `ledgerd` on a fresh book on
 * loopback. Prints p50 and p90 (ms) of `--runs` calls of each command, with the p50 of their CPU
 * time (user + system, read by each process at its exit), and of a bare `node -e 0` for the floor
 * on this machine. Nothing is asserted.
 *
 *   npm run build && node dist/bench/cli-start.js [--runs 30] [--ledgerctl PATH [--ledgerctl PATH]]
 *
 * `--ledgerctl PATH` times another checkout's `bin/ledgerctl` (built) against the same ledgerd.
 * Given twice (before and after), the two are called in turn, call by call, so a machine whose
 * load changes (other builds and tests) weighs on both alike.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { arch, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startServer, stopServer } from './http-load.js';
import { percentile } from './percentile.js';

const repoRoot = resolve(import.meta.dirname, '../..');
const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '30' }, ledgerctl: { type: 'string', multiple: true } } });
const runs = Number(args.runs);
const ledgerctls = (args.ledgerctl ?? [join(repoRoot, 'bin/ledgerctl')]).map((path) => resolve(path));

interface Figures {
  p50Ms: number;
  p90Ms: number;
  cpuP50Ms: number;
}

/**
 * For each of `argvs` (one per ledgerctl), p50 and p90 of `runs` spawns (wall time) and the p50 of
 * their CPU time; the argvs take turns, call by call. Each call must exit 0 (a failing command
 * would time its error path). `cpuHook` makes each process print its CPU time as it exits.
 */
function timeRuns(argvs: readonly (readonly string[])[], env: NodeJS.ProcessEnv, cpuHook: string): Figures[] {
  const wall = argvs.map((): number[] => []);
  const cpu = argvs.map((): number[] => []);
  for (let i = 0; i < runs; i++) {
    argvs.forEach((argv, k) => {
      const startedAt = performance.now();
      const result = spawnSync(process.execPath, [`--import=${cpuHook}`, ...argv], { env, encoding: 'utf8' });
      wall[k]!.push(performance.now() - startedAt);
      if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}: ${result.stderr}`);
      cpu[k]!.push(Number(/^cpu-us (\d+)$/m.exec(result.stderr)![1]) / 1000);
    });
  }
  return argvs.map((_, k) => {
    const w = wall[k]!.sort((a, b) => a - b);
    const c = cpu[k]!.sort((a, b) => a - b);
    return { p50Ms: percentile(w, 50), p90Ms: percentile(w, 90), cpuP50Ms: percentile(c, 50) };
  });
}

const shown = (f: Figures) => `p50 ${f.p50Ms.toFixed(0).padStart(4)} ms  p90 ${f.p90Ms.toFixed(0).padStart(4)} ms  CPU p50 ${f.cpuP50Ms.toFixed(0).padStart(4)} ms`;

const root = mkdtempSync(join(tmpdir(), 'ledger-cli-start-'));
const dataDir = join(root, 'book');
const { url, child } = await startServer([join(repoRoot, 'bin/ledgerd'), 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--log-level', 'warn']);
try {
  // A profile-less call, as a runbook's: the address and token from the environment.
  const env = { ...process.env, LEDGER_URL: url, LEDGER_TOKEN: readFileSync(join(dataDir, 'operator.key'), 'utf8').trim(), LEDGERCTL_CONFIG_DIR: join(root, 'config') };
  const cpuHook = join(root, 'cpu.mjs');
  writeFileSync(cpuHook, "process.on('exit', () => { const u = process.cpuUsage(); process._rawDebug(`cpu-us ${u.user + u.system}`); });\n");
  const commands: [string, string[]][] = [
    ['ledgerctl --version', ['--version']],
    ['ledgerctl assets list', ['assets', 'list']],
    ['ledgerctl accounts balance treasury:USD', ['accounts', 'balance', 'treasury:USD']],
    ['ledgerctl --help', ['--help']],
  ];
  console.log(`node ${process.version} ${arch()}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}, load ${loadavg()[0]!.toFixed(1)}, ${runs} runs each, ${new Date().toISOString()}`);
  ledgerctls.forEach((path, k) => console.log(`[${k + 1}] ${path}`));
  console.log(`${'node -e 0 (the floor)'.padEnd(46)} ${shown(timeRuns([['-e', '0']], env, cpuHook)[0]!)}`);
  for (const [name, argv] of commands) {
    const figures = timeRuns(ledgerctls.map((path) => [path, ...argv]), env, cpuHook);
    figures.forEach((f, k) => console.log(`${`${name}${ledgerctls.length > 1 ? ` [${k + 1}]` : ''}`.padEnd(46)} ${shown(f)}`));
  }
  console.log(`load ${loadavg()[0]!.toFixed(1)} at the end`);
} finally {
  await stopServer(child);
  rmSync(root, { recursive: true, force: true });
}
