/**
 * Consistency proofs through a real ledgerd and the built ledgerctl (CONTRACT 12.1,
 * 12.8): the route and its refusals in order; every proof checked by the independent
 * verifier; `checkpoints consistency` and `checkpoints verify`, offline from an exported
 * file and online; a changed byte of a proof or of a checkpoint fails; a journal entry
 * rewritten after a checkpoint makes the next proof fail.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LevelStore } from '../../src/store/level.js';
import { journalChunkEntries } from '../../src/model/codec.js';
import { parseSeqHex } from '../../src/model/keys.js';
import { ledgerctl } from '../cli/support/ledgerctl.js';
import { checkChain, verifyConsistencyReply } from '../support/independent-audit.js';
import { type Client, type Daemon, client, decided, refused, startDaemon, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();
let daemon: Daemon;
let dir: string;
let op: Client;
let alice: Client;
let keys: Awaited<ReturnType<typeof writeBook>>;
const env = () => ({ LEDGER_URL: daemon.url, LEDGER_TOKEN: keys.operator, LEDGERCTL_CONFIG_DIR: dir });

beforeAll(async () => {
  dir = newDir();
  keys = await writeBook(dir, { alice: 1_000n, bob: 0n });
  writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0, finalityDepth: 2, instance: 7 } }));
  daemon = await startDaemon({ dataDir: dir });
  op = client(() => daemon.url, keys.operator);
  alice = client(() => daemon.url, keys.customers.alice!);
});
afterAll(async () => {
  await daemon.stop();
});

async function transfer(amount: string): Promise<void> {
  const r = await alice.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount }] });
  expect((await decided(alice, r.body.operation_reference)).body.state).toBe('Completed');
}

/** Takes a checkpoint and makes it final; its number. */
let checkpointKeys = 0;
async function finalCheckpoint(): Promise<number> {
  const taken = await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': `cp-${++checkpointKeys}` });
  expect(taken.status).toBe(200);
  await op.post('/v1/ops/layer/blocks', { count: 3 });
  return taken.body.result.anchoring.checkpoint.number;
}

async function chain(): Promise<any[]> {
  return checkChain(7, ((await op.get('/v1/checkpoints?limit=1000')).body.items as any[]).reverse()) as any[];
}

describe('consistency proofs', () => {
  it('prove every pair of final checkpoints to the independent verifier, and refuse in CONTRACT 12.1 order', async () => {
    for (let i = 1; i <= 5; i++) {
      for (let t = 0; t < i; t++) await transfer(String(i + t));
      await finalCheckpoint();
    }
    // One with nothing added since: equal sizes.
    await finalCheckpoint();
    const held = await chain();
    expect(held).toHaveLength(6);
    expect(held[5].entry_sequence).toBe(held[4].entry_sequence);
    for (let n = 1; n <= 6; n++) {
      for (let m = n; m <= 6; m++) {
        const r = await alice.get(`/v1/checkpoints/${m}/consistency?from=${n}`);
        expect(r.status, `${n} → ${m}`).toBe(200);
        expect(r.body.from).toEqual(held[n - 1]);
        expect(r.body.to).toEqual(held[m - 1]);
        if (held[n - 1].entry_sequence === held[m - 1].entry_sequence) expect(r.body.proof).toEqual([]);
        verifyConsistencyReply(7, held, n, m, r.body);
      }
    }
    const pending = (await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-pending' })).body.result.anchoring.checkpoint.number;
    expect(pending).toBe(7);
    const cases: [string, number, string][] = [
      ['/v1/checkpoints/x/consistency?from=1', 400, 'ERR-MalformedCommand'],
      ['/v1/checkpoints/3/consistency?from=a', 400, 'ERR-MalformedCommand'],
      ['/v1/checkpoints/3/consistency?from=0', 400, 'ERR-MalformedCommand'],
      ['/v1/checkpoints/3/consistency?from=1&to=2', 400, 'ERR-MalformedCommand'],
      ['/v1/checkpoints/3/consistency?x=1', 400, 'ERR-MalformedCommand'],
      ['/v1/checkpoints/3/consistency?from=-1', 400, 'ERR-MalformedCommand'],
      ['/v1/checkpoints/3/consistency', 400, 'ERR-QueryUnbounded'],
      ['/v1/checkpoints/3/consistency?from=4', 400, 'ERR-QueryUnbounded'],
      ['/v1/checkpoints/99/consistency?from=4', 409, 'ERR-AnchorNotFinal'],
      ['/v1/checkpoints/7/consistency?from=1', 409, 'ERR-AnchorNotFinal'],
    ];
    for (const [path, status, error] of cases) expect(await refused(alice.get(path)), path).toEqual({ status, error });
    expect((await client(() => daemon.url, 'no-such-key'.padEnd(40, 'x')).get('/v1/checkpoints/3/consistency?from=1')).status).toBe(401);
    await op.post('/v1/ops/layer/blocks', { count: 3 });
  });

  it('are printed and checked by ledgerctl, offline from an exported file and online; a changed byte fails', async () => {
    const file = join(dir, 'checkpoints.json');
    const proofFile = join(dir, 'proof.json');
    expect((await ledgerctl(['checkpoints', 'export', '--out', file], env())).code).toBe(0);
    const printed = await ledgerctl(['checkpoints', 'consistency', '5', '--from', '2', '--out', proofFile], env());
    expect(printed.code, printed.stderr).toBe(0);
    const proof = JSON.parse(readFileSync(proofFile, 'utf8'));
    expect(proof.proof.length).toBeGreaterThan(0);
    const offline = ['checkpoints', 'verify', '--from', '2', '--to', '5', '--checkpoints', file, '--proof', proofFile, '-o', 'table'];
    const passed = await ledgerctl(offline, {});
    expect(passed.code, passed.stderr).toBe(0);
    expect(passed.stdout).toBe('file: ok\ncheckpoints: ok\nproof: ok\npassed\n');
    const online = await ledgerctl(['checkpoints', 'verify', '--from', '2', '--to', '5', '--checkpoints', file], env());
    expect(online.code, online.stderr).toBe(0);
    expect(online.json()).toEqual({ passed: true, report: 'file: ok\ncheckpoints: ok\nproof: ok' });
    expect((await ledgerctl(['checkpoints', 'verify', '--from', '2', '--to', '5', '--checkpoints', file, '--proof', '-'], {}, JSON.stringify(proof))).code).toBe(0);

    // One changed byte of the proof: both verifiers fail.
    const changed = structuredClone(proof);
    changed.proof[0] = (changed.proof[0][0] === '0' ? '1' : '0') + changed.proof[0].slice(1);
    writeFileSync(join(dir, 'changed.json'), JSON.stringify(changed));
    const failed = await ledgerctl([...offline.slice(0, 8), '--proof', join(dir, 'changed.json')], {});
    expect(failed.code).toBe(1);
    expect(failed.json()).toEqual({ passed: false, report: expect.stringMatching(/^file: ok\ncheckpoints: ok\nproof: failed: /) });
    const held = JSON.parse(readFileSync(file, 'utf8')).checkpoints;
    expect(() => verifyConsistencyReply(7, held, 2, 5, changed)).toThrow();
    // A proof of another pair, and a served checkpoint that is not the one held.
    const other = (await alice.get('/v1/checkpoints/5/consistency?from=1')).body;
    writeFileSync(join(dir, 'other.json'), JSON.stringify(other));
    expect((await ledgerctl([...offline.slice(0, 8), '--proof', join(dir, 'other.json')], {})).json().report).toMatch(/checkpoints: failed/);
    const forgedTo = structuredClone(proof);
    forgedTo.to.kernel_root = 'ee'.repeat(32);
    writeFileSync(join(dir, 'forged-to.json'), JSON.stringify(forgedTo));
    expect((await ledgerctl([...offline.slice(0, 8), '--proof', join(dir, 'forged-to.json')], {})).code).toBe(1);
    expect(() => verifyConsistencyReply(7, held, 2, 5, forgedTo)).toThrow();
    // One changed byte of a checkpoint in the file: its chain does not hold (exit 2), nor for the independent verifier.
    const forgedFile = JSON.parse(readFileSync(file, 'utf8'));
    forgedFile.checkpoints[2].kernel_root = (forgedFile.checkpoints[2].kernel_root[0] === 'a' ? 'b' : 'a') + forgedFile.checkpoints[2].kernel_root.slice(1);
    writeFileSync(join(dir, 'forged.json'), JSON.stringify(forgedFile));
    const badFile = await ledgerctl(['checkpoints', 'verify', '--from', '2', '--to', '5', '--checkpoints', join(dir, 'forged.json'), '--proof', proofFile], {});
    expect(badFile.code).toBe(2);
    expect(() => checkChain(7, forgedFile.checkpoints)).toThrow();
    // Usage: a checkpoint the file does not hold, a missing file.
    expect((await ledgerctl(['checkpoints', 'verify', '--from', '2', '--to', '50', '--checkpoints', file, '--proof', proofFile], {})).code).toBe(2);
    expect((await ledgerctl(['checkpoints', 'verify', '--from', '2', '--to', '5', '--checkpoints', join(dir, 'none.json'), '--proof', proofFile], {})).code).toBe(2);
    // The service refuses: exit 1.
    expect((await ledgerctl(['checkpoints', 'consistency', '50', '--from', '2'], env())).code).toBe(1);
  });

  it('fail once a journal entry covered by a checkpoint was rewritten, through the route and ledgerctl', async () => {
    const file = join(dir, 'before.json');
    expect((await ledgerctl(['checkpoints', 'export', '--out', file], env())).code).toBe(0);
    const last = (await chain()).length;
    expect(await daemon.stop()).toBe(0);
    // Entry 2's amount rewritten in its journal chunk, as a hand on the store would.
    const store = await LevelStore.open(join(dir, 'book'), { createIfMissing: false });
    try {
      for await (const [key, chunk] of store.entries({ gte: 'j/', lt: 'j0', limit: 1_000_000 })) {
        const first = parseSeqHex(key.slice('j/'.length));
        if (first + journalChunkEntries(chunk) <= 2) continue;
        // The entry's line (after the chunk's mark): `<account>/<asset>/[at, …]`, its time made a millisecond later.
        const lines = chunk.split('\n');
        const line = lines[2 - first + 1]!;
        const cut = line.indexOf('/', line.indexOf('/') + 1) + 1;
        const entry = JSON.parse(line.slice(cut));
        entry[0] += 1;
        lines[2 - first + 1] = line.slice(0, cut) + JSON.stringify(entry);
        await store.write([{ type: 'put', key, value: lines.join('\n') }], true);
        break;
      }
    } finally {
      await store.close();
    }
    daemon = await startDaemon({ dataDir: dir });
    await transfer('1');
    const next = await finalCheckpoint();
    expect(next).toBe(last + 1);
    // From a checkpoint whose size is not a power of two, the proof carries the subtrees of its tree (RFC 9162 leaves a power of two's root to the verifier).
    const held = JSON.parse(readFileSync(file, 'utf8')).checkpoints as any[];
    const from = held.find((c) => (c.entry_sequence & (c.entry_sequence - 1)) !== 0).number;
    const r = await alice.get(`/v1/checkpoints/${next}/consistency?from=${from}`);
    expect(r.status).toBe(200);
    expect(() => verifyConsistencyReply(7, [...held, r.body.to], from, next, r.body)).toThrow(/root does not match/);
    const after = join(dir, 'after.json');
    expect((await ledgerctl(['checkpoints', 'export', '--out', after], env())).code).toBe(0);
    const verify = await ledgerctl(['checkpoints', 'verify', '--from', String(from), '--to', String(next), '--checkpoints', after], env());
    expect(verify.code).toBe(1);
    expect(verify.json().report).toMatch(/proof: failed/);
  });
});
