/**
 * What the store alone allows, with no kernel logic at all, fsync'd:
 * - `storeCeiling`: what the kernel writes (store layout 6) for decided 1-leg transfers by
 *   the operator, made by the kernel's own encoders and write builders, batched as it
 *   batches them: intake writes (the commands in `cmd/` chunks of 16, an `ot/` and a `ck/`
 *   entry each, the cseq), then decision rounds (per transfer two `aa/` index entries, two
 *   balances, an audit item and an `op/` pointer; per round its journal chunk and time
 *   entry, its event chunks of 16, the `cmd/` chunks it decides deleted, the head).
 * - `rawPuts`: classic-level itself, puts of 300 bytes in batches of 1,000.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { LevelStore } from '../src/store/level.js';
import type { BatchOp } from '../src/store/port.js';
import { keys, seqHex } from '../src/model/keys.js';
import { builtInPrincipals } from '../src/auth/authority.js';
import { AuditTrail } from '../src/auth/audit.js';
import { rootMember } from '../src/auth/members.js';
import { commandChunkWrites } from '../src/book/command-chunks.js';
import { eventRecordWrites } from '../src/book/event-records.js';
import { operationIndexPuts } from '../src/queries/operation-index.js';
import { encodeClientKeyRecord } from '../src/book/client-key-record.js';
import { JournalChunkText, encodeBalanceText, encodeHead, encodeIndexedPosting } from '../src/model/codec.js';
import { sequentialIds } from '../src/model/ids.js';
import type { Authority, Balance, Operation, Posting } from '../src/model/model.js';
import type { AccountId, AssetSymbol, CredentialId } from '../src/model/values.js';
import { journalChunkEntriesMax } from '../src/constants.js';
import { benchAccount } from './genesis.js';

export interface CeilingResult {
  readonly perSec: number;
  readonly cpuUs: number;
  /** What LevelDB's LOG says it flushed from memtables and rewrote in compactions, per item, in bytes. */
  readonly flushedBytes: number;
  readonly compactedBytes: number;
}

/** Store entries and their key+value bytes, per decided transfer, a layout writes. */
export interface LayoutSize {
  readonly entriesPerTransfer: number;
  readonly bytesPerTransfer: number;
}

/** LevelDB's own account of its writes, from the `LOG` it keeps in its directory: bytes flushed to level-0 tables and rewritten by compactions. */
export function levelLogBytes(dir: string): { flushed: number; compacted: number } {
  let flushed = 0;
  let compacted = 0;
  for (const line of readFileSync(join(dir, 'LOG'), 'utf8').split('\n')) {
    const table = /Level-0 table #\d+: (\d+) bytes/.exec(line);
    if (table) flushed += Number(table[1]);
    const merge = /Compacted \d+@\d+ \+ \d+@\d+ files => (\d+) bytes/.exec(line);
    if (merge) compacted += Number(merge[1]);
  }
  return { flushed, compacted };
}

/** Entries and key+value bytes in a batch, added to `into`. */
export function countBatch(ops: readonly { key: { length: number }; value?: { length: number } }[], into: { entries: number; bytes: number }): void {
  into.entries += ops.length;
  for (const op of ops) into.bytes += op.key.length + (op.value?.length ?? 0);
}

/** Runs `fn` off the clock: neither its wall time nor the CPU of the thread running it is counted. */
type Untimed = <T>(fn: () => T) => T;

/**
 * CPU this thread has run, in µs: Linux's schedstat, so that LevelDB's own threads working
 * meanwhile (compactions) are still counted; elsewhere the whole process's.
 */
function threadCpuUs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1000;
  } catch {
    const cpu = process.cpuUsage();
    return cpu.user + cpu.system;
  }
}

async function timed(run: (store: LevelStore, untimed: Untimed) => Promise<void>, count: number): Promise<CeilingResult> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-ceiling-'));
  const store = await LevelStore.open(dir);
  let excludedMs = 0;
  let excludedCpuUs = 0;
  const untimed: Untimed = (fn) => {
    const cpuBefore = threadCpuUs();
    const startedAt = performance.now();
    try {
      return fn();
    } finally {
      excludedMs += performance.now() - startedAt;
      excludedCpuUs += threadCpuUs() - cpuBefore;
    }
  };
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await run(store, untimed);
  const seconds = (performance.now() - started - excludedMs) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  await store.close();
  const log = levelLogBytes(dir);
  rmSync(dir, { recursive: true, force: true });
  return { perSec: count / seconds, cpuUs: (cpu.user + cpu.system - excludedCpuUs) / count, flushedBytes: log.flushed / count, compactedBytes: log.compacted / count };
}

const usd = 'USD' as AssetSymbol;
// As intake makes it for the operator's commands (one object per credential, so its text is encoded once).
const operatorActor: Authority = { principal: builtInPrincipals.operator, credential: rootMember(0).credential as CredentialId, onBehalfOf: null, grant: null, kind: 'operator' };
const operatorMember = rootMember(0);

/** The kernel bench's `n`th 1-leg transfer (bench/kernel.ts transferSubmission), as intake acknowledges it. */
function receivedTransfer(n: number, cseq: number, accounts: number, atMs: number): Operation {
  const leg = { from: benchAccount((n * 7) % accounts), to: benchAccount((n * 7 + 1) % accounts), asset: usd, amountMinor: 1n + BigInt(n % 3) };
  return {
    ref: sequentialIds.operationRef(cseq),
    cseq,
    command: { type: 'transfer', legs: [leg], deadlineMs: Number.MAX_SAFE_INTEGER },
    actor: operatorActor,
    scope: null,
    state: 'Received',
    submittedAtMs: atMs,
    decidedAtMs: null,
    clientKey: `b-1-${n}`,
    clientKeyDerived: false,
    reference: null,
    result: null,
    error: null,
    hold: null,
  };
}

/** An intake write of `ops`, as intake/flushSubmissions builds it. */
function intakeWrite(ops: readonly Operation[]): BatchOp[] {
  const writes: BatchOp[] = [...commandChunkWrites(ops).writes, ...operationIndexPuts(ops)];
  for (const op of ops) {
    const digest = createHash('sha256').update(`1/${op.clientKey.slice(4)}`).digest('hex');
    writes.push({ type: 'put', key: keys.clientKey(op.actor.principal, op.clientKey), value: encodeClientKeyRecord({ digest, ref: op.ref }) });
  }
  writes.push({ type: 'put', key: keys.cseq, value: String(ops[ops.length - 1]!.cseq) });
  return writes;
}

/**
 * A round deciding `ops` (all completed), as round-builder's buildRound writes it: per
 * posting its `aa/` entry and journal entry, audit items, journal chunks, balances, the
 * decided `cmd/` chunks deleted, events and pointers, the head.
 */
function decisionRound(ops: readonly Operation[], state: { postingSeq: number; eventSeq: number; auditSeq: number; balances: Map<string, Balance> }, commandChunks: readonly string[], atMs: number): BatchOp[] {
  const writes: BatchOp[] = [];
  const journal = new JournalChunkText();
  const journalChunks: string[] = [];
  const firstPosting = state.postingSeq + 1;
  const audit = new AuditTrail(state.auditSeq);
  const dirty = new Set<string>();
  const events: Operation[] = [];
  for (const op of ops) {
    if (op.command.type !== 'transfer') throw new Error('the ceiling writes transfers');
    const leg = op.command.legs[0]!;
    const seqs: number[] = [];
    for (const [account, counterparty, direction, signed] of [[leg.from, leg.to, 'debit', -leg.amountMinor], [leg.to, leg.from, 'credit', leg.amountMinor]] as const) {
      const seq = ++state.postingSeq;
      const balanceKey = keys.balance(account, usd);
      const before = state.balances.get(balanceKey) ?? { available: 1_000_000n, reserved: 0n, encumbered: 0n };
      const after = { ...before, available: before.available + signed };
      state.balances.set(balanceKey, after);
      dirty.add(balanceKey);
      const posting: Posting = { seq, atMs, account: account as AccountId, asset: usd, amountMinor: leg.amountMinor, direction, layer: 'available', kind: 'transfer', status: 'completed', operation: op.ref, counterparty: counterparty as AccountId, authorities: [operatorActor], reference: null, after };
      const indexed = encodeIndexedPosting(posting);
      journal.add(account, usd, indexed);
      if (journal.entries === journalChunkEntriesMax) journalChunks.push(journal.take());
      writes.push({ type: 'put', key: keys.accountAsset(account, usd, seq), value: indexed });
      seqs.push(seq);
    }
    const result = { postings: seqs };
    audit.command(operatorMember, op, result, atMs);
    events.push({ ...op, state: 'Completed', decidedAtMs: atMs, result });
  }
  writes.push(...audit.writes());
  state.auditSeq = audit.lastSeq;
  if (journal.entries > 0) journalChunks.push(journal.take());
  for (const [i, chunk] of journalChunks.entries()) {
    const firstSeq = firstPosting + i * journalChunkEntriesMax;
    writes.push({ type: 'put', key: keys.journal(firstSeq), value: chunk }, { type: 'put', key: keys.journalTime(atMs, firstSeq), value: '' });
  }
  for (const key of dirty) writes.push({ type: 'put', key, value: encodeBalanceText(state.balances.get(key)!) });
  for (const key of commandChunks) writes.push({ type: 'del', key });
  writes.push(...eventRecordWrites(events, state.eventSeq).writes);
  state.eventSeq += events.length;
  writes.push({ type: 'put', key: keys.head, value: encodeHead({ decidedCseq: ops[ops.length - 1]!.cseq, postingSeq: state.postingSeq, eventSeq: state.eventSeq, lastAtMs: atMs, accounts: 0, auditSeq: state.auditSeq }) });
  return writes;
}

/** Rounds whose writes are made before they are written (a few tens of MB). */
const roundsPerSegment = 16;

/**
 * Decided 1-leg transfers per second the store allows for the kernel's layout: intake
 * writes of `perIntake` commands, and rounds deciding `perRound` (the intake writes' commands
 * since the last round). bench/kernel, 1,024 submissions in flight, writes 1,000 commands per
 * intake write and per round on average (counted at its store).
 */
export async function storeCeiling(transfers: number, perRound = 1024, accounts = 10_000, perIntake = perRound): Promise<CeilingResult & LayoutSize> {
  const written = { entries: 0, bytes: 0 };
  const state = { postingSeq: 0, eventSeq: 0, auditSeq: 0, balances: new Map<string, Balance>() };
  /** A round's intake writes and its decision write, made by the kernel's encoders. */
  const roundWrites = (first: number): BatchOp[][] => {
    const atMs = Date.now();
    const batches: BatchOp[][] = [];
    const ops: Operation[] = [];
    const chunks: string[] = [];
    for (let from = first; from < Math.min(transfers, first + perRound); from += perIntake) {
      const part: Operation[] = [];
      for (let n = from; n < Math.min(transfers, from + perIntake, first + perRound); n++) part.push(receivedTransfer(n, n + 1, accounts, atMs));
      const acks = intakeWrite(part);
      for (const w of acks) if (w.key.startsWith(keys.commandPrefix)) chunks.push(w.key);
      batches.push(acks);
      ops.push(...part);
    }
    batches.push(decisionRound(ops, state, chunks, atMs));
    for (const batch of batches) countBatch(batch, written);
    return batches;
  };
  // Encoding is the kernel's work, not the store's: a segment of rounds is made off the clock (its
  // thread's CPU and its wall time not counted; LevelDB's compactions running meanwhile are), then written.
  const result = await timed(async (store, untimed) => {
    for (let first = 0; first < transfers; first += perRound * roundsPerSegment) {
      const segment = untimed(() => {
        const batches: BatchOp[][] = [];
        for (let round = first; round < Math.min(transfers, first + perRound * roundsPerSegment); round += perRound) batches.push(...roundWrites(round));
        return batches;
      });
      for (const batch of segment) await store.write(batch, true);
    }
  }, transfers);
  return { ...result, entriesPerTransfer: written.entries / transfers, bytesPerTransfer: written.bytes / transfers };
}

/** Puts per second of classic-level itself: 300-byte values, fsync'd batches of 1,000. */
export function rawPuts(puts: number, perWrite = 1000): Promise<CeilingResult> {
  const value = 'v'.repeat(300);
  return timed(async (store) => {
    for (let first = 0; first < puts; first += perWrite) {
      const batch: BatchOp[] = [];
      for (let i = first; i < Math.min(puts, first + perWrite); i++) batch.push({ type: 'put', key: `k/${seqHex(i)}`, value });
      await store.write(batch, true);
    }
  }, puts);
}
