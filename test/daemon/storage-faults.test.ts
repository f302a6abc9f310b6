/**
 * Storage faults in a real ledgerd: its data dir is a small tmpfs that the test fills
 * to the last byte (a genuinely full disk: every LevelDB write fails with ENOSPC) and
 * then frees, several times. During a fault commands, direct decisions and reads get
 * 503 ERR-DecisionUnavailable with an integer Retry-After, never a 500; once the
 * space is back the daemon resumes by itself; every acknowledged command is decided
 * exactly once, also after a restart; the trial balance stays zero.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Client, type Reply, client, decided, removeDir, startDaemon, tempDir, writeBook } from './support.js';

const faults = 3;
const faultMs = 1_200;
const dir = tempDir('ledgerd-faults-');
execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', dir]);
afterAll(async () => {
  execFileSync('umount', [dir]);
  await removeDir(dir);
});

const filler = join(dir, 'filler');
/** Fills the filesystem to its last byte. */
function fillDisk(): void {
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const alice = 'did:ledger:acct:alice';
const bob = 'did:ledger:acct:bob';

/** Every reply is an answer or a retriable refusal: never a 500. */
function expectAnswerOr503(r: Reply, ok: number[]): void {
  if (r.status === 503) {
    expect(r.body.error).toBe('ERR-DecisionUnavailable');
    expect(String(r.headers['retry-after'])).toMatch(/^[1-9][0-9]*$/);
  } else expect(ok).toContain(r.status);
}

describe('storage faults', () => {
  it('answers 503 + Retry-After during a full disk, loses nothing acknowledged, decides nothing twice, and recovers by itself', async () => {
    const keys = await writeBook(dir, { alice: 1_000_000n, bob: 0n });
    let daemon = await startDaemon({ dataDir: dir });
    const asAlice = client(() => daemon.url, keys.customers.alice!);
    const asOperator = client(() => daemon.url, keys.operator);
    const anonymous = client(() => daemon.url, '');
    /** Operation reference by client key, for every command acknowledged. */
    const acked = new Map<string, string>();
    const turnedAway = new Set<string>();
    let sent = 0;
    const send = async (clientKey = `ck-${++sent}`): Promise<Reply> => {
      const r = await asAlice.post('/v1/transfers', { legs: [{ amount: '1', asset: 'USD', from: alice, to: bob }] }, undefined, { 'client-key': clientKey });
      expectAnswerOr503(r, [200, 202]);
      if (r.status === 503) turnedAway.add(clientKey);
      else {
        expect(acked.get(clientKey) ?? r.body.operation_reference).toBe(r.body.operation_reference);
        acked.set(clientKey, r.body.operation_reference);
        turnedAway.delete(clientKey);
      }
      return r;
    };
    const figures = { faults, acknowledged: 0, turnedAway: 0, lost: 0, doubled: 0, recoveryMs: [] as number[], readsDuringFault: { ok: 0, unavailable: 0 }, challengesDuringFault: { ok: 0, unavailable: 0 } };

    try {
      for (let i = 0; i < 20; i++) expect((await send()).status).toBe(202);
      for (let fault = 0; fault < faults; fault++) {
        fillDisk();
        const refusedBefore = turnedAway.size;
        const until = Date.now() + faultMs;
        while (Date.now() < until) {
          await Promise.all(Array.from({ length: 4 }, () => send()));
          // Direct decisions and reads during the fault.
          const challenge = await anonymous.post('/v1/auth/challenge', { purpose: 'authenticate', identity: null }, null);
          expectAnswerOr503(challenge, [200]);
          figures.challengesDuringFault[challenge.status === 200 ? 'ok' : 'unavailable']++;
          const read = await asOperator.get(`/v1/operations/${[...acked.values()][0]}`);
          expectAnswerOr503(read, [200]);
          figures.readsDuringFault[read.status === 200 ? 'ok' : 'unavailable']++;
          await sleep(50);
        }
        // The fault was real: commands were turned away.
        expect(turnedAway.size).toBeGreaterThan(refusedBefore);
        rmSync(filler);
        const freedAt = Date.now();
        while ((await send()).status === 503) await sleep(20);
        figures.recoveryMs.push(Date.now() - freedAt);
      }
      figures.turnedAway = turnedAway.size;
      // Each fault is logged at error level, and each recovery.
      const logged = daemon.stderr.map((line) => JSON.parse(line) as { level: number; msg: string });
      const failures = logged.filter((l) => l.level === 50 && l.msg.startsWith('the store failed')).length;
      expect(failures).toBeGreaterThanOrEqual(faults);
      expect(logged.filter((l) => l.msg.startsWith('the store recovered'))).toHaveLength(failures);
      // Retried under the same client key, each command turned away has one effect.
      for (const clientKey of [...turnedAway]) expect([200, 202]).toContain((await send(clientKey)).status);
      expect(turnedAway.size).toBe(0);
      figures.acknowledged = acked.size;

      const check = async (api: Client) => {
        for (const ref of acked.values()) {
          const r = await decided(api, ref);
          if (r.status !== 200) figures.lost++;
          else expect(r.body.state).toBe('Completed');
        }
        // Each command moves 1 minor unit to bob: his balance counts the decisions taken.
        const statement = await api.get(`/v1/statements?account=${bob}&asset=USD&from=0&to=${Date.now() + 1}`);
        expect(statement.status).toBe(200);
        figures.doubled = Number(statement.body.closing.available) - acked.size;
        const tb = await api.get('/v1/trial-balance');
        expect(tb.body.unbalanced).toEqual([]);
      };
      await check(asOperator);
      expect(figures.lost).toBe(0);
      expect(figures.doubled).toBe(0);

      // Nothing acknowledged is lost on restart either (LevelDB replays its log).
      expect(await daemon.stop()).toBe(0);
      daemon = await startDaemon({ dataDir: dir });
      await check(asOperator);
      expect(figures.lost).toBe(0);
      expect(figures.doubled).toBe(0);
      console.log(`storage faults: ${JSON.stringify(figures)}`);
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  }, 120_000);
});
