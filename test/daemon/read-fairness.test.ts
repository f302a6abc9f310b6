/**
 * Reads under load on LevelDB (docs/daemon.md, "Reads under load"): a principal's reads
 * past its share of the read slots wait their turn instead of failing, and a principal
 * flooding reads delays only itself: another principal's reads and the operator's are
 * still answered, the flood's excess is refused 503 ERR-DecisionUnavailable with
 * Retry-After, never left to time out. Latencies are printed, not asserted (bench/ gives
 * figures; this machine is shared).
 */
import { describe, expect, it } from 'vitest';
import { type FloodReport, p99, startFlood } from '../support/flood.js';
import { type Client, type Reply, repoRoot, useDaemon } from './support.js';

const shared = useDaemon({ flood: 1_000n, quiet: 1_000n });
/** Reads timed per reader, quiet and under the flood: bounded, as each may wait a flood's round. */
const samples = 30;
const movementsOf = (name: string) => `/v1/movements?account=did:ledger:acct:${name}&limit=10`;

/** `count` reads one after another; each reply and how long it took. */
async function timedReads(who: Client, path: string, count: number): Promise<{ replies: Reply[]; ms: number[] }> {
  const replies: Reply[] = [];
  const ms: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    replies.push(await who.get(path));
    ms.push(performance.now() - t);
  }
  return { replies, ms };
}

describe('reads on LevelDB under load', () => {
  it("answers one principal's 32 concurrent reads all 200", async () => {
    const quiet = shared.as('quiet');
    const replies = await Promise.all(Array.from({ length: 32 }, () => quiet.get(movementsOf('quiet'))));
    expect(replies.map((r) => r.status)).toEqual(Array(32).fill(200));
  });

  it("serves another principal's reads and the operator's while one principal keeps 1,000 reads in flight; the flood's excess is refused 503 with Retry-After", async () => {
    const [quiet, op] = [shared.as('quiet'), shared.as('operator')];
    // Quiet figures, the two read side by side as under the flood (each on a connection kept alive for it then).
    const [quietAlone, opAlone] = await Promise.all([timedReads(quiet, movementsOf('quiet'), samples), timedReads(op, movementsOf('quiet'), samples)]);

    // 1,000 reads in flight from a process of their own, each sent again as soon as it is answered.
    const flood = startFlood({ url: shared.daemon.url, token: shared.keys.customers.flood!, method: 'GET', path: movementsOf('flood'), connections: 1_000, durationMaxMs: 60_000 }, repoRoot);
    let report: FloodReport;
    let quietLoaded: Awaited<ReturnType<typeof timedReads>>;
    let opLoaded: Awaited<ReturnType<typeof timedReads>>;
    try {
      await flood.ready;
      [quietLoaded, opLoaded] = await Promise.all([timedReads(quiet, movementsOf('quiet'), samples), timedReads(op, movementsOf('quiet'), samples)]);
    } finally {
      report = await flood.stop();
    }
    console.log(
      `reads under a 1,000-read flood: another principal p99 ${p99(quietLoaded.ms).toFixed(1)} ms (quiet ${p99(quietAlone.ms).toFixed(1)} ms), ` +
        `the operator p99 ${p99(opLoaded.ms).toFixed(1)} ms (quiet ${p99(opAlone.ms).toFixed(1)} ms); flood answered ${JSON.stringify(report.statuses)}`,
    );
    expect([...quietLoaded.replies, ...opLoaded.replies].map((r) => r.status)).toEqual(Array(2 * samples).fill(200));
    // The flood's excess is refused 503 ERR-DecisionUnavailable with Retry-After; nothing else, and nothing left unanswered.
    expect(Object.keys(report.statuses).sort()).toEqual(['200', '503']);
    expect(report.statuses['503']).toBeGreaterThan(1_000);
    expect({ badRefusals: report.badRefusals, failures: report.failures, samples: report.failureSamples }).toEqual({ badRefusals: 0, failures: 0, samples: [] });
  }, 120_000);
});
