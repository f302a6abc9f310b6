/**
 * Crash test: a child process deciding a stream of commands is killed with SIGKILL
 * at random instants, many times. After each reopen: nothing acknowledged is lost,
 * nothing is applied twice, derived state matches the journal, and the trial balance
 * is zero. Some commands go by approved proposals (CONTRACT 13): an approval and its act
 * are one submission, so a kill never leaves one without the other.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeBalance, decodeLeaf, journalChunkLeaves } from '../../src/model/codec.js';
import { decidedOfEntries } from '../../src/queries/operation-records.js';
import { parseGenesis, importGenesis } from '../../src/book/genesis.js';
import { sequentialIds } from '../../src/model/ids.js';
import { Kernel } from '../../src/book/kernel.js';
import { PgStore } from '../../src/store/postgres.js';
import type { Store } from '../../src/store/port.js';
import { verifyTotals } from '../../src/book/totals.js';
import { approverCredential, crashCustomers, isApproval, openCrashStore } from '../support/crash-child.js';
import { memberWrite, rootMember } from '../../src/auth/members.js';
import { decodeProposal } from '../../src/auth/proposals.js';
import { useStores } from '../support/stores.js';
import { approvalPolicyKey, keys, parseSeqHex, prefixEnd, proposalPrefix } from '../../src/model/keys.js';
import { defaultPolicy } from '../../src/auth/approvals.js';

const child = join(process.cwd(), 'dist/test/support/crash-child.js');
const perRun = 2_000;
const dir = mkdtempSync(join(tmpdir(), 'ledger-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const stores = useStores();

function genesis() {
  const customers = Array.from({ length: crashCustomers }, (_, i) => i);
  return parseGenesis(
    JSON.stringify({
      assets: [{ id: 'USD', kind: 'fiat', precision: 2 }],
      identities: customers.map((i) => `did:ledger:id:c${i}`),
      accounts: [
        { account: 'did:ledger:acct:treasury-USD', owner: 'did:ledger:id:operator', kind: 'treasury', treasury_limits: { USD: '1000000000' } },
        ...customers.map((i) => ({ account: `did:ledger:acct:c${i}`, owner: `did:ledger:id:c${i}`, kind: 'customer' })),
      ],
      openings: customers.flatMap((i) => [
        { account: `did:ledger:acct:c${i}`, asset: 'USD', amount: '50', direction: 'credit' },
        { account: 'did:ledger:acct:treasury-USD', asset: 'USD', amount: '50', direction: 'debit' },
      ]),
    }),
  );
}

/**
 * Runs the child until killed (or done); returns what it acknowledged. The kill comes `killAfterMs` after the
 * first acknowledgement, or at once when `killAtAcks` acknowledgements have come, whichever is first.
 */
function runChild(where: string, start: number, killAfterMs: number, killAtAcks = Number.POSITIVE_INFINITY): Promise<{ acked: Map<number, string>; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child, where, String(start), String(perRun)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked = new Map<number, string>();
    let buffered = '';
    let stderr = '';
    let timer: NodeJS.Timeout | null = null;
    proc.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const [word, n, ref] = line.split(' ');
        if (word === 'ACK') acked.set(Number(n), ref!);
        if (word === 'ACK' && acked.size === killAtAcks) proc.kill('SIGKILL');
        // The first acknowledgement starts the clock to the kill.
        if (timer === null && word === 'ACK') timer = setTimeout(() => proc.kill('SIGKILL'), killAfterMs);
      }
    });
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    proc.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (signal === 'SIGKILL' || code === 0) resolve({ acked, killed: signal === 'SIGKILL' });
      else reject(new Error(`child failed (${code}): ${stderr}`));
    });
  });
}

async function all(store: Store, prefix: string) {
  const out: [string, string][] = [];
  for await (const e of store.entries({ gte: prefix, lt: prefixEnd(prefix), limit: Number.MAX_SAFE_INTEGER })) out.push(e);
  return out;
}

/** Reopens the book, lets it decide its backlog, and checks it against everything ever acknowledged. */
async function verify(where: string, acked: ReadonlyMap<number, string>) {
  const kernel = await Kernel.open({ store: await openCrashStore(where), clock: Date.now, ids: sequentialIds });
  // Commands acknowledged before the kill and not yet decided: the reopen decides them now.
  const recovered = kernel.backlog;
  await kernel.idle();
  const store = kernel.storeForChecks;
  const decided = await all(store, 'op/');
  // An op/ record says where the decided operation is stored (its event chunk).
  const ops = new Map((await decidedOfEntries(store, decided)).map((op) => [op.ref, op]));
  // Nothing acknowledged is lost, and every acknowledged command is decided.
  for (const [n, ref] of acked) {
    const op = ops.get(ref);
    if (isApproval(n)) expect(op?.approval?.approver, `approved command ${n}`).toBe(approverCredential);
    else expect(op?.clientKey, `acknowledged command ${n}`).toBe(`c-${n}`);
    expect(['Completed', 'Rejected']).toContain(op!.state);
  }
  // An approval and its act are one: every approved act approved its proposal, and every approved proposal names its act.
  const proposals = (await all(store, proposalPrefix)).map(([, v]) => decodeProposal(v));
  for (const op of ops.values()) {
    if (op.approval === undefined) continue;
    expect(op.clientKey).toBe(`proposal:${op.approval.proposal.slice('did:ledger:proposal:'.length)}`);
    const p = proposals.find((q) => q.id === op.approval!.proposal)!;
    // Else the proposal lapsed before its approval was decided: the act refused with it, nothing applied.
    if (p.operation === op.ref) expect(p, op.ref).toMatchObject({ state: 'approved', decidedByCredential: approverCredential });
    else expect(op.error?.error, op.ref).toBe('ERR-OperationTerminal');
  }
  for (const p of proposals) if (p.state === 'approved') expect(ops.get(p.operation!)?.approval?.proposal).toBe(p.id);
  // One operation per client key: retries were repeats, never second effects.
  const byKey = new Map<string, number>();
  for (const op of ops.values()) byKey.set(op.clientKey, (byKey.get(op.clientKey) ?? 0) + 1);
  expect([...byKey.values()].filter((count) => count > 1)).toEqual([]);
  expect(await all(store, keys.commandPrefix)).toEqual([]);
  // Postings: exactly two per completed transfer, none for a rejected one; balances follow the journal.
  const perOp = new Map<string, number>();
  const fromJournal = new Map<string, bigint>();
  for (const p of (await all(store, keys.journalPrefix)).flatMap(([k, v]) => journalChunkLeaves(v, parseSeqHex(k.slice(keys.journalPrefix.length))).map((leaf) => decodeLeaf(leaf, null)))) {
    perOp.set(p.operation, (perOp.get(p.operation) ?? 0) + 1);
    const k = keys.balance(p.account, p.asset);
    fromJournal.set(k, (fromJournal.get(k) ?? 0n) + (p.direction === 'credit' ? p.amountMinor : -p.amountMinor));
  }
  for (const op of ops.values()) expect(perOp.get(op.ref) ?? 0, `${op.ref} ${op.state}`).toBe(op.state === 'Completed' && op.command.type === 'transfer' ? 2 : 0);
  let total = 0n;
  for (const [k, v] of await all(store, keys.balancePrefix)) {
    const b = decodeBalance(JSON.parse(v));
    expect(b.available, k).toBe(fromJournal.get(k) ?? 0n);
    expect(b.available >= 0n || k.includes('treasury')).toBe(true);
    total += b.available + b.reserved + b.encumbered;
  }
  expect(total).toBe(0n);
  expect((await verifyTotals(store)).ok).toBe(true);
  const view = await kernel.openView();
  expect((await view.trialBalance(null)).unbalanced).toEqual([]);
  await view.close();
  await kernel.close();
  return recovered;
}

/**
 * The store matrix: LevelDB 25 runs; PostgreSQL 8 (each reopen waits for the killed child's lease to lapse). On
 * PostgreSQL a kill can leave the child's last write running in the server, committed after the child died: the
 * lease keeps it from landing after the next decider opened the book.
 * PostgreSQL's runs took 14-58 s in all on a loaded 2-core machine (load 15), each reopen's check reading every
 * operation so far: the suite's 60 s bound cut two of ten short, so that case has its own. LevelDB's 25 runs
 * went past 60 s too in a whole-suite run beside the other worker (60.9 s), and took 119 s at load 20.
 */
describe.each([
  { kind: 'leveldb' as const, runs: 25, timeoutMs: 180_000 },
  { kind: 'postgres' as const, runs: 8, timeoutMs: 180_000 },
])('crash safety on $kind', ({ kind, runs, timeoutMs }) => {
  it(`survives ${runs} SIGKILLs at random instants with every acknowledged command decided exactly once`, { timeout: timeoutMs }, async () => {
    let store: Store;
    if (kind === 'postgres') {
      const connection = await stores.database();
      // The children and the reopens below find the database here.
      process.env.LEDGER_CRASH_PG_URL = connection.url;
      store = await PgStore.open({ connection, create: true });
    } else store = await openCrashStore(dir);
    const where = kind === 'leveldb' ? dir : 'postgres:ledgerd_kv';
    await importGenesis(store, genesis(), Date.now());
    // Root and a second member, so root's proposals have an approver.
    const members = [rootMember(Date.now()), { ...rootMember(Date.now()), credential: approverCredential, name: 'approver', role: 'operator' as const, addedBy: 'root' }].map(memberWrite);
    // Proposals a kill left open lapse within seconds, so none of root's bound stays taken by them.
    const policy = { type: 'put' as const, key: approvalPolicyKey, value: JSON.stringify({ ...defaultPolicy, ttlMs: 2_000 }) };
    await store.write([...members.map((m) => ({ type: 'put' as const, key: m.key, value: m.value! })), policy], true);
    await store.close();
    const acked = new Map<number, string>();
    let kills = 0;
    let recovered = 0;
    for (let run = 0; run < runs; run++) {
      // The kill comes after a random count of acknowledgements (a time window alone left too few on a fast node, or on
      // PostgreSQL's slower round trips too few approvals: a proposal decided, then its act), whatever the machine's speed.
      const result = await runChild(where, run * perRun, 5_000, 50 + Math.floor(Math.random() * (perRun / 2)));
      for (const [n, ref] of result.acked) {
        // A retried command that was acknowledged before keeps its operation.
        if (acked.has(n)) expect(ref, `retry of ${n}`).toBe(acked.get(n));
        acked.set(n, ref);
      }
      if (result.killed) kills++;
      recovered += await verify(where, acked);
    }
    // The kills must have caught commands between acknowledgement and decision.
    console.log(`crash test: ${kills} kills, ${acked.size} acknowledged, ${recovered} recovered undecided on reopen`);
    expect(recovered).toBeGreaterThan(0);
    expect(kills).toBeGreaterThan(runs / 2);
    expect(acked.size).toBeGreaterThan(runs * 10);
    expect([...acked.keys()].filter(isApproval).length).toBeGreaterThan(runs);
  });
});
