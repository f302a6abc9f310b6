/**
 * The long soak: `ledgerd` SIGKILLed under mixed HTTP load at random instants, restarted
 * on the same data dir, and checked after each restart (see bench/soak/checks.ts).
 * Prints kills, commands acknowledged, lost, doubled and restart-to-readiness p50/p99;
 * exits 1 when anything was lost, doubled or otherwise wrong.
 *
 *   npm run soak -- [--kills 1000] [--clients 12] [--kill-after-max-ms 600] [--seed N]
 */
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { defaultSoakOptions, describeReport, runSoak } from './soak/soak.js';

const { values: args } = parseArgs({
  options: {
    kills: { type: 'string', default: '1000' },
    clients: { type: 'string', default: String(defaultSoakOptions.clients) },
    'kill-after-min-ms': { type: 'string', default: String(defaultSoakOptions.killAfterMinMs) },
    'kill-after-max-ms': { type: 'string', default: String(defaultSoakOptions.killAfterMaxMs) },
    seed: { type: 'string', default: String(Date.now() % 2 ** 31) },
  },
});

const options = {
  ...defaultSoakOptions,
  kills: Number(args.kills),
  clients: Number(args.clients),
  killAfterMinMs: Number(args['kill-after-min-ms']),
  killAfterMaxMs: Number(args['kill-after-max-ms']),
  seed: Number(args.seed),
  log: (line: string) => console.error(line),
};
console.log(`soak: ${options.kills} kills, ${options.clients} clients, kill ${options.killAfterMinMs}-${options.killAfterMaxMs} ms into the load, seed ${options.seed}, ${cpus().length} cores, Node ${process.version}`);
const report = await runSoak(options);
for (const line of describeReport(report)) console.log(line);
const clean = report.lost === 0 && report.doubled === 0 && report.otherProblems === 0 && report.finalExitCode === 0;
process.exitCode = clean ? 0 : 1;
