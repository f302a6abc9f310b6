/**
 * The bounded soak (bench/soak/): a real `ledgerd` SIGKILLed under mixed HTTP load at
 * random instants and restarted on the same data dir, checked through the API after each
 * restart: every acknowledged command is there and decided once, a repeat under its
 * client key has no second effect, every balance equals the sum of its movements, and
 * the trial balance is zero. `npm run soak -- --kills 1000` is the long run.
 */
import { describe, expect, it } from 'vitest';
import { defaultSoakOptions, describeReport, runSoak } from '../../bench/soak/soak.js';

// 15 kills keep the whole suite inside its 10 minutes on 2 cores; test/kernel/crash.test.ts kills the kernel 25 times more.
const kills = 15;
const soakTimeoutMs = 300_000;

describe('soak: SIGKILL under load', () => {
  it(`loses and doubles nothing acknowledged over ${kills} kills`, { timeout: soakTimeoutMs }, async () => {
    const seed = Date.now() % 2 ** 31;
    const report = await runSoak({ ...defaultSoakOptions, kills, seed });
    const lines = describeReport(report);
    console.log(`soak test, seed ${seed}:\n${lines.join('\n')}`);
    expect(report.problems, lines.join('\n')).toEqual([]);
    expect({ lost: report.lost, doubled: report.doubled, other: report.otherProblems, exit: report.finalExitCode }).toEqual({ lost: 0, doubled: 0, other: 0, exit: 0 });
    expect(report.restartMs).toHaveLength(kills);
    // The load must have been what the checks claim to cover: kills that took replies of
    // commands the book had taken, rejections for insufficient funds, reservations finished both ways.
    expect(report.tally.unknownFound).toBeGreaterThan(0);
    expect(report.tally.unknownAbsent).toBeGreaterThan(0);
    expect(report.acknowledged).toBeGreaterThan(kills * 10);
    for (const decided of ['transfer Completed', 'transfer Rejected ERR-InsufficientAvailable', 'capture Completed', 'release Completed']) {
      expect(report.tally.decided.get(decided) ?? 0, decided).toBeGreaterThan(0);
    }
  });
});
