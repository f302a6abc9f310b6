/**
 * Checkpoints (CONTRACT 9): the RFC 6962 root over journal entries 1..entry_sequence,
 * chained by commitments, anchored on the settlement layer, and moved
 * `pending` → `submitted` (its anchor is in a block) → `final` (that block is final)
 * by the blocks the layer returns.
 *
 * Each checkpoint record (`cp/<number>`) keeps the frontier of its tree, so the next
 * one extends it by the entries added since (cost in proportion to them), and the
 * subtrees completed on the way are written in the same batch (merkle.ts). The last
 * layer height taken in is `cpi/ingested`: a restart reads the blocks after it and
 * catches up. Changes run one at a time; times are passed in.
 */
import { AssertionFailure, assert } from '../assert.js';
import { checkpointsPageMax, checkpointsUnfinishedMax, layerBlocksReadMax } from '../constants.js';
import { refuse } from '../errors.js';
import { decodeHead } from '../model/codec.js';
import { DamagedRecord, check, damaged, members, recordJson } from '../model/decode.js';
import type { SettlementAdapter } from '../settlement/adapter.js';
import type { BatchOp, ReadView, Store } from '../store/port.js';
import { SerialChanges } from '../store/serial.js';
import { randomBytes } from 'node:crypto';
import { type LiabilitiesRoot, checkpointCommitment, checkpointCommitmentV2, firstPrevious } from './verify-proofs.js';
import type { LiabilitiesLeaf, LiabilitiesScope } from './liabilities-leaves.js';
import { buildLiabilities, liabilitiesProof } from './liabilities.js';
import { Frontier, consistencyProof, extendFrontier } from './merkle.js';
import { checkpointKeys, keys, prefixEnd } from '../model/keys.js';

export type CheckpointStatus = 'pending' | 'submitted' | 'final';

export interface Checkpoint {
  readonly number: number;
  readonly entrySequence: number;
  readonly kernelRoot: string;
  readonly commitment: string;
  /** The prior checkpoint's commitment (64 zeros for the first). */
  readonly previous: string;
  readonly createdAtMs: number;
  readonly status: CheckpointStatus;
  /** The layer height whose block carried its anchor; null while pending. */
  readonly height: number | null;
  /** 2 for a checkpoint with liabilities trees (CONTRACT 12.3); absent for version 1. */
  readonly version?: 2;
  /** Version 2: per asset, the root object of its liabilities tree (12.2). */
  readonly liabilities?: Readonly<Record<string, LiabilitiesRoot>>;
}

interface CheckpointRecord extends Checkpoint {
  /** The instance its commitment was made under. */
  readonly instance: number;
  /** The frontier of its tree: peak hashes, largest first (merkle.ts). */
  readonly frontier: readonly string[];
}

export { firstPrevious };

export class Checkpoints {
  private latestRecord: CheckpointRecord | null;
  /** Checkpoints not yet final, oldest first (their anchors wait on the layer). */
  private unfinished: Checkpoint[];
  /** Pending checkpoints whose anchor the layer may not have taken (a submission failed, or since a restart). */
  private unsent = new Set<number>();
  private ingestedHeight: number;
  private readonly listeners = new Set<(changed: readonly Checkpoint[]) => void>();
  /** Changes run one at a time, in call order; a store failure under one is refused and the state read back. */
  /** Aborted by `close`: a liabilities build under way is abandoned (its checkpoint refused, taken again after a restart). */
  private readonly closing = new AbortController();
  private readonly changes = new SerialChanges(() => this.reload(), { code: 'ERR-DecisionUnavailable', what: "the book's store failed under a checkpoint" });

  private constructor(
    private readonly store: Store,
    private readonly adapter: SettlementAdapter,
    private readonly liabilitiesKey: Buffer,
    latest: CheckpointRecord | null,
    unfinished: Checkpoint[],
    ingestedHeight: number,
  ) {
    this.latestRecord = latest;
    this.unfinished = unfinished;
    this.ingestedHeight = ingestedHeight;
    for (const c of unfinished) if (c.status === 'pending') this.unsent.add(c.number);
  }

  /**
   * `liabilitiesKey`: the key of `DIR/liabilities.key`, which the salts of every
   * liabilities leaf derive from (a fresh one when not given: tests and benches).
   */
  static async open(store: Store, adapter: SettlementAdapter, liabilitiesKey: Buffer = randomBytes(32)): Promise<Checkpoints> {
    assert(liabilitiesKey.length === 32, 'the liabilities key is 32 bytes');
    const state = await readState(store);
    return new Checkpoints(store, adapter, liabilitiesKey, state.latest, state.unfinished, state.ingestedHeight);
  }

  /** For closing: a checkpoint being built fails at once (its worker ended), as does any taken after. */
  close(): void {
    this.closing.abort();
  }

  get latest(): Checkpoint | null {
    return this.latestRecord === null ? null : withoutFrontier(this.latestRecord);
  }

  onChange(listener: (changed: readonly Checkpoint[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Takes a checkpoint of the journal as it stands now (`pending`) and hands its anchor
   * to the layer. Refused with ERR-SettlementLayerUnavailable while too many wait for
   * the layer already.
   */
  take(nowMs: number): Promise<Checkpoint> {
    return this.changes.run(async () => {
      if (this.unfinished.length >= checkpointsUnfinishedMax) {
        refuse('ERR-SettlementLayerUnavailable', `${checkpointsUnfinishedMax} checkpoints wait for the settlement layer already`);
      }
      const snapshot = this.store.snapshot();
      let record: CheckpointRecord;
      let writes: BatchOp[];
      try {
        const headText = await snapshot.get(keys.head);
        assert(headText !== undefined, 'a sealed book has a head');
        const entrySequence = decodeHead(headText).postingSeq;
        const last = this.latestRecord;
        const frontier = last === null ? Frontier.empty() : Frontier.of(last.entrySequence, last.frontier);
        assert(entrySequence >= frontier.size, 'the journal never shrinks');
        writes = await extendFrontier(frontier, snapshot, entrySequence);
        const instance = this.adapter.instance;
        const number = (last?.number ?? 0) + 1;
        const previous = last?.commitment ?? firstPrevious;
        const kernelRoot = frontier.rootHex();
        // The trees' records go out in bounded batches ahead of the checkpoint's own (written last, below).
        const liabilities = await buildLiabilities(snapshot, { key: this.liabilitiesKey, instance, number }, (ops) => this.store.write(ops, false), this.closing.signal);
        const commitment = checkpointCommitmentV2({ instance, number, entry_sequence: entrySequence, kernel_root: kernelRoot, previous, liabilities });
        record = { number, entrySequence, kernelRoot, commitment, previous, createdAtMs: nowMs, status: 'pending', height: null, version: 2, liabilities, instance, frontier: frontier.peaksHex };
      } finally {
        await snapshot.close();
      }
      writes.push({ type: 'put', key: checkpointKeys.checkpoint(record.number), value: encodeRecord(record) });
      await this.store.write(writes, true);
      this.latestRecord = record;
      const checkpoint = withoutFrontier(record);
      this.unfinished.push(checkpoint);
      this.unsent.add(record.number);
      this.emit([checkpoint]);
      await this.sendAnchors();
      return checkpoint;
    });
  }

  /**
   * Takes in the layer's blocks after the last height taken in: an anchor of ours in a
   * block makes its checkpoint `submitted`, a final block `final`. One write; resolves
   * with the checkpoints that moved.
   */
  ingest(): Promise<readonly Checkpoint[]> {
    return this.changes.run(async () => {
      await this.sendAnchors();
      const head = await this.adapter.head();
      const moved = new Map<number, Checkpoint>();
      let height = this.ingestedHeight;
      const byNumber = new Map(this.unfinished.map((c) => [c.number, c]));
      while (height < head.height) {
        const to = Math.min(head.height, height + layerBlocksReadMax);
        for (const block of await this.adapter.blocks(height + 1, to)) {
          for (const anchor of block.anchors) {
            const c = byNumber.get(anchor.number);
            // Only our own anchor, as we made it, moves a checkpoint.
            if (c === undefined || c.status !== 'pending' || c.commitment !== anchor.commitment) continue;
            const submitted: Checkpoint = { ...c, status: 'submitted', height: block.height };
            byNumber.set(c.number, submitted);
            moved.set(c.number, submitted);
          }
        }
        height = to;
      }
      for (const c of byNumber.values()) {
        if (c.status === 'submitted' && c.height !== null && c.height <= head.finalHeight) {
          const final: Checkpoint = { ...c, status: 'final' };
          byNumber.set(c.number, final);
          moved.set(c.number, final);
        }
      }
      if (moved.size === 0 && height === this.ingestedHeight) return [];
      const writes: BatchOp[] = [{ type: 'put', key: checkpointKeys.ingested, value: String(height) }];
      const records = await this.store.getMany([...moved.keys()].map(checkpointKeys.checkpoint));
      [...moved.values()].forEach((c, i) => {
        const stored = records[i];
        assert(stored !== undefined, 'a checkpoint that moved is stored');
        writes.push({ type: 'put', key: checkpointKeys.checkpoint(c.number), value: encodeRecord({ ...decodeRecord(checkpointKeys.checkpoint(c.number), stored), status: c.status, height: c.height }) });
      });
      await this.store.write(writes, true);
      this.ingestedHeight = height;
      this.unfinished = [...byNumber.values()].filter((c) => c.status !== 'final').sort((a, b) => a.number - b.number);
      for (const c of moved.values()) this.unsent.delete(c.number);
      const latest = this.latestRecord;
      if (latest !== null && moved.has(latest.number)) this.latestRecord = { ...latest, ...moved.get(latest.number)! };
      const changed = [...moved.values()].sort((a, b) => a.number - b.number);
      this.emit(changed);
      return changed;
    });
  }

  /** Checkpoints newest first, before `beforeNumber` (exclusive) when given, at most `limit`. */
  async list(beforeNumber: number | null, limit: number): Promise<{ items: Checkpoint[]; next: number | null }> {
    assert(Number.isSafeInteger(limit) && limit >= 1 && limit <= checkpointsPageMax, 'a checkpoint page is bounded');
    const lt = beforeNumber === null ? prefixEnd(checkpointKeys.prefix) : checkpointKeys.checkpoint(Math.max(0, beforeNumber));
    const items: Checkpoint[] = [];
    let more = false;
    for await (const [key, value] of this.store.entries({ gte: checkpointKeys.prefix, lt, reverse: true, limit: limit + 1 })) {
      if (items.length === limit) more = true;
      else items.push(withoutFrontier(decodeRecord(key, value)));
    }
    return { items, next: more ? items[items.length - 1]!.number : null };
  }

  async get(number: number, view: ReadView = this.store): Promise<Checkpoint | undefined> {
    if (!Number.isSafeInteger(number) || number < 1) return undefined;
    const key = checkpointKeys.checkpoint(number);
    const text = await view.get(key);
    return text === undefined ? undefined : withoutFrontier(decodeRecord(key, text));
  }

  /**
   * CONTRACT 12.1: final checkpoints `fromNumber` ≤ `toNumber` and the RFC 9162
   * consistency proof between their trees, read from one snapshot: O(log n) stored
   * subtrees and at most two blocks of journal leaves. ERR-AnchorNotFinal when either
   * is unknown or not final.
   */
  async consistency(fromNumber: number, toNumber: number): Promise<{ from: Checkpoint; to: Checkpoint; proof: string[] }> {
    assert(fromNumber >= 1 && fromNumber <= toNumber, 'a consistency proof runs forward');
    const snapshot = this.store.snapshot();
    try {
      const [from, to] = [await this.get(fromNumber, snapshot), await this.get(toNumber, snapshot)];
      for (const [number, c] of [[fromNumber, from], [toNumber, to]] as const) {
        if (c?.status !== 'final') refuse('ERR-AnchorNotFinal', c === undefined ? `no checkpoint ${number}` : `checkpoint ${number} is ${c.status}, not final`);
      }
      assert(from!.entrySequence <= to!.entrySequence, 'a later checkpoint covers at least the entries of an earlier one');
      return { from: from!, to: to!, proof: await consistencyProof(snapshot, from!.entrySequence, to!.entrySequence) };
    } finally {
      await snapshot.close();
    }
  }

  /**
   * CONTRACT 12.4: the final checkpoint `number` and the account's proof in `asset`'s
   * liabilities tree there. ERR-AnchorNotFinal when it is unknown or not final;
   * ERR-NotDisclosable when it is of version 1 or the account has no leaf in `asset` there.
   */
  async liabilities(number: number, asset: string, account: string): Promise<{ checkpoint: Checkpoint; instance: number; leaf: LiabilitiesLeaf; index: number; path: { hash: string; sum: string }[] }> {
    const snapshot = this.store.snapshot();
    try {
      const key = checkpointKeys.checkpoint(number);
      const text = number >= 1 ? await snapshot.get(key) : undefined;
      const record = text === undefined ? undefined : decodeRecord(key, text);
      if (record?.status !== 'final') refuse('ERR-AnchorNotFinal', record === undefined ? `no checkpoint ${number}` : `checkpoint ${number} is ${record.status}, not final`);
      if (record.version !== 2) refuse('ERR-NotDisclosable', `checkpoint ${number} is of version 1: it has no liabilities trees`);
      const root = record.liabilities![asset];
      const scope: LiabilitiesScope = { key: this.liabilitiesKey, instance: record.instance, number };
      const proof = root === undefined ? undefined : await liabilitiesProof(snapshot, scope, asset, root, account);
      if (proof === undefined) refuse('ERR-NotDisclosable', `the account has no leaf in ${asset}'s liabilities tree at checkpoint ${number}`);
      return { checkpoint: withoutFrontier(record), instance: record.instance, ...proof };
    } finally {
      await snapshot.close();
    }
  }

  /** The newest final checkpoint. */
  async latestFinal(): Promise<Checkpoint | undefined> {
    const oldestUnfinished = this.unfinished[0]?.number ?? (this.latestRecord?.number ?? 0) + 1;
    return this.get(oldestUnfinished - 1);
  }

  /**
   * The final checkpoints a comparison at layer height `height` is the record of
   * (spec 2.2 `anchors`), ascending: those whose anchor the newest block at or below
   * `height` that carried an anchor of ours carried. Anchors are handed over in number
   * order and carried in arrival order, so anchor heights never go down as numbers go
   * up: the newest one is found by bisection, in O(log n) reads.
   */
  async anchoredAt(height: number): Promise<number[]> {
    const finalAt = (c: Checkpoint | undefined): c is Checkpoint => c !== undefined && c.status === 'final' && c.height !== null && c.height <= height;
    let low = 0;
    let high = this.latestRecord?.number ?? 0;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (finalAt(await this.get(middle))) low = middle;
      else high = middle - 1;
    }
    const newest = await this.get(low);
    if (!finalAt(newest)) return [];
    const numbers = [newest.number];
    // One block carries at most layerBlockItemsMax anchors.
    for (let number = newest.number - 1; number >= 1 && (await this.get(number))?.height === newest.height; number--) numbers.unshift(number);
    return numbers;
  }

  /** Hands the layer every anchor it may not have taken; one that fails stays to be sent again. */
  private async sendAnchors(): Promise<void> {
    for (const c of this.unfinished) {
      if (!this.unsent.has(c.number)) continue;
      try {
        await this.adapter.submitAnchor({ number: c.number, commitment: c.commitment });
        this.unsent.delete(c.number);
      } catch {
        // The layer is away: the checkpoint stays pending and is sent again at the next block or checkpoint.
        return;
      }
    }
  }

  private emit(changed: readonly Checkpoint[]): void {
    if (changed.length === 0) return;
    for (const listener of this.listeners) listener(changed);
  }

  private async reload(): Promise<void> {
    const state = await readState(this.store);
    this.latestRecord = state.latest;
    this.unfinished = state.unfinished;
    this.ingestedHeight = state.ingestedHeight;
    this.unsent = new Set(state.unfinished.filter((c) => c.status === 'pending').map((c) => c.number));
  }
}

/** The newest checkpoint, those not yet final (oldest first) and the last layer height taken in. */
async function readState(store: Store): Promise<{ latest: CheckpointRecord | null; unfinished: Checkpoint[]; ingestedHeight: number }> {
  const newestFirst: CheckpointRecord[] = [];
  const range = { gte: checkpointKeys.prefix, lt: prefixEnd(checkpointKeys.prefix), reverse: true, limit: checkpointsUnfinishedMax + 1 };
  for await (const [key, value] of store.entries(range)) {
    const record = decodeRecord(key, value);
    newestFirst.push(record);
    if (record.status === 'final') break;
  }
  const unfinished = newestFirst.filter((c) => c.status !== 'final').reverse().map(withoutFrontier);
  assert(unfinished.length <= checkpointsUnfinishedMax, 'the checkpoints not yet final are bounded');
  const ingested = await store.get(checkpointKeys.ingested);
  if (ingested !== undefined && !/^(0|[1-9][0-9]{0,14})$/.test(ingested)) damaged('checkpoint ingestion', `${checkpointKeys.ingested} is not a layer height`);
  return { latest: newestFirst[0] ?? null, unfinished, ingestedHeight: ingested === undefined ? 0 : Number(ingested) };
}

/**
 * For `ledgerd check`: every checkpoint, oldest first, against the journal read from
 * `view` in one pass: its kernel_root recomputed, its commitment recomputed, and its
 * link to the one before. Each problem goes to `problem`; resolves with the count read.
 */
export async function checkCheckpoints(view: ReadView, problem: (text: string) => void): Promise<number> {
  const frontier = Frontier.empty();
  // Null once unknown: after a damaged checkpoint (its commitment), or a journal the roots cannot be recomputed from.
  let previous: string | null = firstPrevious;
  let rootsCheckable = true;
  let count = 0;
  for await (const [key, value] of view.entries({ gte: checkpointKeys.prefix, lt: prefixEnd(checkpointKeys.prefix), limit: Number.MAX_SAFE_INTEGER })) {
    count++;
    let c: CheckpointRecord;
    try {
      c = decodeRecord(key, value);
    } catch (error) {
      // A damaged checkpoint is one problem; the check goes on with the next (its link cannot be checked).
      if (!(error instanceof DamagedRecord)) throw error;
      problem(error.message);
      previous = null;
      continue;
    }
    if (c.number !== count) problem(`checkpoint ${count} is missing (found ${c.number} next)`);
    if (previous !== null && c.previous !== previous) problem(`checkpoint ${c.number} does not link to the checkpoint before it`);
    if (rootsCheckable) rootsCheckable = await checkRoot(c, frontier, view, problem);
    if (recordCommitment(c) !== c.commitment) problem(`checkpoint ${c.number}: its commitment does not follow from its fields`);
    previous = c.commitment;
  }
  return count;
}

/** Checks `c`'s kernel_root, extending `frontier` to it; false when the journal cannot be read that far (no later root can be checked either: reported once). */
async function checkRoot(c: CheckpointRecord, frontier: Frontier, view: ReadView, problem: (text: string) => void): Promise<boolean> {
  if (c.entrySequence < frontier.size) {
    problem(`checkpoint ${c.number} covers fewer entries (${c.entrySequence}) than the one before`);
    return true;
  }
  try {
    await extendFrontier(frontier, view, c.entrySequence);
  } catch (error) {
    // A damaged journal entry, or a journal shorter than the checkpoint.
    if (!(error instanceof AssertionFailure)) throw error;
    problem(`checkpoint ${c.number}: its kernel_root cannot be recomputed, nor those after it: ${error.message}`);
    return false;
  }
  if (frontier.rootHex() !== c.kernelRoot) problem(`checkpoint ${c.number}: kernel_root is not the root of journal entries 1..${c.entrySequence}`);
  return true;
}

/** A record's commitment as its version computes it (CONTRACT 9, 12.3). */
function recordCommitment(c: CheckpointRecord): string {
  const fields = { instance: c.instance, number: c.number, entry_sequence: c.entrySequence, kernel_root: c.kernelRoot, previous: c.previous };
  return c.version === 2 ? checkpointCommitmentV2({ ...fields, liabilities: c.liabilities! }) : checkpointCommitment(fields);
}

function withoutFrontier(record: CheckpointRecord): Checkpoint {
  const { frontier: _frontier, instance: _instance, ...checkpoint } = record;
  return checkpoint;
}

function encodeRecord(record: CheckpointRecord): string {
  return JSON.stringify(record);
}

const checkpointStatuses = members<CheckpointStatus>({ pending: true, submitted: true, final: true });

/** The checkpoint stored under `key` (`cp/<number>`), each field checked (decode.ts); a damaged one is named by its key's number. */
function decodeRecord(key: string, text: string): CheckpointRecord {
  const number = parseInt(key.slice(checkpointKeys.prefix.length), 16);
  const what = `checkpoint ${number} (${key})`;
  const j = recordJson(text, what);
  if (check.integer(j, 'number', what) !== number) damaged(what, 'number is not its key\'s');
  for (const name of ['instance', 'entrySequence', 'createdAtMs']) check.integer(j, name, what);
  for (const name of ['kernelRoot', 'commitment', 'previous']) check.digestHex(j, name, what);
  check.oneOf(j, 'status', checkpointStatuses, what);
  check.nullableInteger(j, 'height', what);
  check.strings(j, 'frontier', what);
  if (j.version !== undefined) {
    if (j.version !== 2) damaged(what, 'version is neither absent nor 2');
    const liabilities = check.object(j, 'liabilities', what);
    for (const [asset, root] of Object.entries(liabilities)) {
      const r = root as Record<string, unknown>;
      const ok = typeof r === 'object' && r !== null && Number.isSafeInteger(r.leaves) && (r.leaves as number) >= 1 && typeof r.root === 'string' && /^[0-9a-f]{64}$/.test(r.root) && typeof r.total === 'string' && /^(0|[1-9][0-9]*)$/.test(r.total);
      if (!ok) damaged(what, `liabilities of ${asset} is not {leaves, root, total}`);
    }
  }
  return j as unknown as CheckpointRecord;
}
