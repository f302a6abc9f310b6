/**
 * Fairness under backpressure: one principal flooding ledgerd takes at most its share
 * of the decision backlog (1/8 of `backlogMax`) and is turned away past it with 503
 * ERR-DecisionUnavailable and an integer Retry-After; another principal's commands
 * are still acknowledged meanwhile.
 */
import { describe, expect, it } from 'vitest';
import { type Reply, decided, useDaemon } from './support.js';

const shared = useDaemon({ flood: 10_000_000n, quiet: 1_000n, payee: 0n }, { backlogMax: 32 });
let keyCounter = 0;
const fresh = () => ({ 'client-key': `fair-${++keyCounter}` });
const leg = (from: string) => ({ legs: [{ amount: '1', asset: 'USD', from: `did:ledger:acct:${from}`, to: 'did:ledger:acct:payee' }] });

describe('fairness under backpressure', () => {
  it('keeps serving a quiet principal while another floods past its share', async () => {
    const flooder = shared.as('flood');
    const quiet = shared.as('quiet');
    const floodReplies: Reply[] = [];
    const untilMs = Date.now() + 2_000;
    let quietDone = false;
    // 64 connections of the flooder, each sending back to back, against a backlog of 32 (a share of 4).
    const flooding = Promise.all(
      Array.from({ length: 64 }, async () => {
        while (!quietDone && Date.now() < untilMs) floodReplies.push(await flooder.post('/v1/transfers', leg('flood'), undefined, fresh()));
      }),
    );
    const quietReplies: Reply[] = [];
    try {
      // Let the flood build up first.
      await new Promise((r) => setTimeout(r, 200));
      for (let i = 0; i < 20; i++) quietReplies.push(await quiet.post('/v1/transfers', leg('quiet'), undefined, fresh()));
    } finally {
      quietDone = true;
      await flooding;
    }
    expect(quietReplies.map((r) => r.status)).toEqual(Array(20).fill(202));
    const turnedAway = floodReplies.filter((r) => r.status === 503);
    expect(turnedAway.length).toBeGreaterThan(0);
    for (const r of turnedAway) {
      expect(r.body.error).toBe('ERR-DecisionUnavailable');
      expect(String(r.headers['retry-after'])).toMatch(/^[1-9][0-9]*$/);
    }
    expect(floodReplies.every((r) => r.status === 202 || r.status === 503)).toBe(true);
    for (const r of quietReplies) expect((await decided(quiet, r.body.operation_reference)).body.state).toBe('Completed');
  });
});
