/**
 * Floods that cost only their sender (docs/daemon.md, "Floods"): one principal keeps 200
 * connections sending transfers from an address of its own and sends again at once
 * whenever it is refused, ignoring Retry-After. Another principal sending one transfer at
 * a time is still acknowledged (at least 9 times in 10), and the flood's refusals are 503
 * ERR-DecisionUnavailable with Retry-After (CONTRACT 6). Latencies are printed, not
 * asserted (this machine is shared).
 */
import { describe, expect, it } from 'vitest';
import { type FloodReport, p99, startFlood } from '../support/flood.js';
import { type Client, type Reply, repoRoot, useDaemon } from './support.js';

// A small backlog, so that the flood meets its share (1/8: 8 commands) at once and is refused from then on.
const shared = useDaemon({ flood: 1_000_000_000n, quiet: 1_000_000n, payee: 0n }, { backlogMax: 64 });
let keyCounter = 0;
const leg = (from: string) => ({ legs: [{ amount: '1', asset: 'USD', from: `did:ledger:acct:${from}`, to: 'did:ledger:acct:payee' }] });
/** Transfers timed per run, quiet and under the flood. */
const samples = 40;

/** `samples` transfers one at a time, one every 50 ms at most; each reply and its time. */
async function transfersOneAtATime(who: Client): Promise<{ replies: Reply[]; ms: number[] }> {
  const replies: Reply[] = [];
  const ms: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t = performance.now();
    replies.push(await who.post('/v1/transfers', leg('quiet'), undefined, { 'client-key': `quiet-${++keyCounter}` }));
    const took = performance.now() - t;
    ms.push(took);
    if (took < 50) await new Promise((r) => setTimeout(r, 50 - took));
  }
  return { replies, ms };
}

describe('a flood that ignores Retry-After', () => {
  it("keeps acknowledging another principal's transfers while one principal floods with 200 connections", async () => {
    const quiet = shared.as('quiet');
    const alone = await transfersOneAtATime(quiet);
    const flood = startFlood(
      { url: shared.daemon.url, token: shared.keys.customers.flood!, method: 'POST', path: '/v1/transfers', body: leg('flood'), connections: 200, durationMaxMs: 60_000, localAddress: '127.0.0.2' },
      repoRoot,
    );
    let loaded: Awaited<ReturnType<typeof transfersOneAtATime>>;
    let report: FloodReport;
    try {
      await flood.ready;
      loaded = await transfersOneAtATime(quiet);
    } finally {
      report = await flood.stop();
    }
    const acknowledged = loaded.replies.filter((r) => r.status === 202).length;
    console.log(
      `transfers one at a time under a 200-connection flood: ${acknowledged}/${samples} acknowledged, p99 ${p99(loaded.ms).toFixed(1)} ms (quiet ${p99(alone.ms).toFixed(1)} ms); ` +
        `flood answered ${JSON.stringify(report.statuses)} (${report.tooSoon} refused at the edge as too soon), ${report.failures} without a reply`,
    );
    expect(alone.replies.map((r) => r.status)).toEqual(Array(samples).fill(202));
    expect(acknowledged).toBeGreaterThanOrEqual(Math.ceil(samples * 0.9));
    // The flood's refusals are 503 ERR-DecisionUnavailable with an integer Retry-After, and it was refused.
    expect(report.badRefusals).toBe(0);
    expect(report.statuses['503'] ?? 0).toBeGreaterThan(0);
    // Once it is seen resending through its refusals, it is refused at the edge, before the body, as too soon (each
    // such refusal held for its Retry-After: edge-limits.test.ts times that).
    expect(report.tooSoon).toBeGreaterThan(0);
    expect(Object.keys(report.statuses).every((s) => s === '202' || s === '503')).toBe(true);
  }, 120_000);
});
