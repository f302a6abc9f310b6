/**
 * Commands taken in turn (docs/daemon.md, "Floods"): a principal's commands beyond its
 * admitted bound wait in its own queue, so another principal's command, sent after a
 * flood of thousands, is taken into the next round and decided ahead of most of the
 * flood; a flood command that waits its whole turn is refused 503
 * ERR-DecisionUnavailable with Retry-After, never left to time out.
 */
import { describe, expect, it } from 'vitest';
import { admittedPerPrincipalMax } from '../../src/constants.js';
import { type FloodReport, p99, startFlood } from '../support/flood.js';
import { type Client, type Reply, decided, repoRoot, useDaemon } from './support.js';

/** The request timeout: a command waits for its turn at most half of it (5 s at most). */
const requestTimeoutMs = 10_000;
const shared = useDaemon({ flood: 1_000_000_000n, quiet: 1_000_000n, payee: 0n }, { requestTimeoutMs });
const leg = (from: string) => ({ legs: [{ amount: '1', asset: 'USD', from: `did:ledger:acct:${from}`, to: 'did:ledger:acct:payee' }] });
const batchOf = (tag: string) => ({ commands: Array.from({ length: 1000 }, (_, i) => ({ command: 'transfer', body: leg('flood'), client_key: `${tag}-${i}` })) });
/** Six batches of a thousand: within the flood's backlog share (6,250), far past its admitted bound (1,024). */
const batches = 6;

/** The decided views of `refs`, read a few at a time. */
async function decidedViews(who: Client, refs: readonly string[]): Promise<any[]> {
  const out: any[] = [];
  for (let i = 0; i < refs.length; i += 20) out.push(...(await Promise.all(refs.slice(i, i + 20).map(async (ref) => (await decided(who, ref)).body))));
  return out;
}

describe('commands under a flood', () => {
  it("decides another principal's command ahead of most of a flood sent before it; the flood's refusals are 503 with Retry-After", async () => {
    const flood = shared.as('flood');
    const quiet = shared.as('quiet');
    const floods: Promise<Reply>[] = Array.from({ length: batches }, (_, i) => flood.post('/v1/batches', batchOf(`flood-${i}`)));
    // Sent once the flood is in: under first come, first served it would be decided after all of it.
    await new Promise((r) => setTimeout(r, 300));
    const sent = await quiet.post('/v1/transfers', leg('quiet'), undefined, { 'client-key': 'quiet-after-flood' });
    expect(sent.status).toBe(202);
    const quietView = (await decided(quiet, sent.body.operation_reference)).body;
    expect(quietView.state).toBe('Completed');

    const items: any[] = (await Promise.all(floods)).flatMap((r) => {
      expect([200, 202]).toContain(r.status);
      return r.body.items;
    });
    const refused = items.filter((item) => item.error !== undefined);
    for (const item of refused) expect(item.error).toBe('ERR-DecisionUnavailable');
    const accepted = items.filter((item) => item.operation_reference !== undefined).map((item) => item.operation_reference as string);
    // Every tenth accepted flood command, decided. Those decided before the quiet command was even
    // sent (as many as the kernel's speed allows in the wait above) say nothing of its turn; of the
    // rest, under first come, first served none would be decided after it, and here all but those
    // taken in ahead of it (at most the flood's admitted bound, and those decided meanwhile) are.
    const sample = await decidedViews(flood, accepted.filter((_, i) => i % 10 === 0));
    const pending = sample.filter((v) => v.decided_at > quietView.submitted_at);
    const later = pending.filter((v) => v.decided_at > quietView.decided_at).length;
    const aheadMax = Math.ceil((2 * admittedPerPrincipalMax) / 10);
    console.log(`flood of ${batches * 1000} in batches: ${accepted.length} accepted, ${refused.length} refused 503; of ${sample.length} sampled, ${pending.length} undecided when the quiet principal's command was sent, ${later} decided after it`);
    expect(accepted.length).toBeGreaterThan(admittedPerPrincipalMax);
    expect(pending.length).toBeGreaterThan(aheadMax);
    expect(later).toBeGreaterThanOrEqual(pending.length - aheadMax);
  });

  it("refuses the flood's commands past its share or its turn 503 ERR-DecisionUnavailable with Retry-After, within the request's time", async () => {
    const flood = shared.as('flood');
    const started = performance.now();
    // Seven thousand at once: past the flood's backlog share (6,250) as well as its admitted bound.
    const replies = await Promise.all(
      Array.from({ length: 7 }, async (_, i) => {
        const reply = await flood.post('/v1/batches', batchOf(`wait-${i}`));
        return { reply, tookMs: performance.now() - started };
      }),
    );
    let refused = 0;
    for (const { reply, tookMs } of replies) {
      expect([200, 202]).toContain(reply.status);
      const items = reply.body.items.filter((item: { error?: string }) => item.error !== undefined);
      for (const item of items) expect(item.error).toBe('ERR-DecisionUnavailable');
      if (items.length > 0) expect(reply.headers['retry-after']).toMatch(/^\d+$/);
      // Answered, accepted or refused, before the request could time out.
      expect(tookMs).toBeLessThan(requestTimeoutMs);
      refused += items.length;
    }
    console.log(`7 000 flood commands at once: ${refused} refused 503 with Retry-After, the last reply after ${Math.max(...replies.map((r) => r.tookMs)).toFixed(0)} ms`);
    expect(refused).toBeGreaterThanOrEqual(7000 - 6250);
  });

  it("decides another principal's commands and answers its reads while one principal keeps 1,000 transfers in flight; the flood is answered 202 or 503 with Retry-After, never left unanswered", async () => {
    const quiet = shared.as('quiet');
    const alone = await quietRun(quiet, 'alone');
    const flood = startFlood({ url: shared.daemon.url, token: shared.keys.customers.flood!, method: 'POST', path: '/v1/transfers', body: leg('flood'), connections: 1_000, durationMaxMs: 90_000, localAddress: '127.0.0.3' }, repoRoot);
    let loaded: Awaited<ReturnType<typeof quietRun>>;
    let report: FloodReport;
    try {
      await flood.ready;
      loaded = await quietRun(quiet, 'loaded');
    } finally {
      report = await flood.stop();
    }
    console.log(
      `under a 1,000-transfer flood: another principal's transfer decided p99 ${p99(loaded.decideMs).toFixed(0)} ms (quiet ${p99(alone.decideMs).toFixed(0)} ms), ` +
        `its read p99 ${p99(loaded.readMs).toFixed(0)} ms (quiet ${p99(alone.readMs).toFixed(0)} ms); flood answered ${JSON.stringify(report.statuses)}, ${report.failures} without a reply`,
    );
    expect(loaded.states).toEqual(Array(quietSamples).fill('Completed'));
    expect(loaded.readStatuses).toEqual(Array(quietSamples).fill(200));
    expect(Object.keys(report.statuses).every((s) => s === '202' || s === '503')).toBe(true);
    expect({ badRefusals: report.badRefusals, failures: report.failures, samples: report.failureSamples }).toEqual({ badRefusals: 0, failures: 0, samples: [] });
  }, 180_000);
});

const quietSamples = 20;

/** `quietSamples` transfers one at a time, each timed from its sending to its decision, and as many reads. */
async function quietRun(quiet: Client, tag: string): Promise<{ decideMs: number[]; readMs: number[]; states: string[]; readStatuses: number[] }> {
  const out = { decideMs: [] as number[], readMs: [] as number[], states: [] as string[], readStatuses: [] as number[] };
  for (let i = 0; i < quietSamples; i++) {
    let started = performance.now();
    const sent = await quiet.post('/v1/transfers', leg('quiet'), undefined, { 'client-key': `quiet-${tag}-${i}` });
    out.states.push(sent.status === 202 ? (await decided(quiet, sent.body.operation_reference)).body.state : `refused ${sent.status}`);
    out.decideMs.push(performance.now() - started);
    started = performance.now();
    out.readStatuses.push((await quiet.get('/v1/movements?account=did:ledger:acct:quiet&limit=10')).status);
    out.readMs.push(performance.now() - started);
  }
  return out;
}
