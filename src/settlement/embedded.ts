/**
 * The embedded settlement layer (CONTRACT 7 and 9): a deterministic local layer that
 * makes blocks on request (the daemon's timer asks at `blockIntervalMs`), carries
 * anchors, deposits, instructions and attestations in them, and keeps its state in
 * the book's store under `L/` so that a restart resumes it where it stood.
 *
 * Deterministic: what it holds is a function of the calls made to it (times are
 * passed in). Every change is one atomic write of the records it touches and its
 * meta record; changes are applied one at a time, in call order. Items handed to it
 * wait in its mempool (`L/mp/<n>`, in arrival order) until a serving block takes them.
 */
import { assert } from '../assert.js';
import {
  layerBlockItemsMax,
  layerBlocksPerRequestMax,
  layerBlocksReadMax,
  layerInboxReadMax,
  layerLocationsMax,
  layerMempoolItemsMax,
  layerStatusFreshMs,
} from '../constants.js';
import { refuse } from '../errors.js';
import { canonicalJson } from '../model/canonical.js';
import { type Json, check, damaged, members, recordJson } from '../model/decode.js';
import type { BatchOp, ReadView, Store } from '../store/port.js';
import { SerialChanges } from '../store/serial.js';
import { pagedEntries } from '../store/paged.js';
import type { Anchor, Attestation, InboxRecord, Instruction, LayerBlock, LayerHead, LayerStatus, SettlementAdapter } from './adapter.js';
import { layerKeys, prefixEnd } from '../model/keys.js';
import { sha256Hex } from '../sha256.js';

/** The hash `previous` names for block 1: genesis has no block. */
export const genesisDigest = '0'.repeat(64);

interface Meta {
  readonly height: number;
  readonly lastDigest: string;
  readonly serving: boolean;
  readonly servingSinceMs: number;
  readonly inboxLength: number;
  /** Inbox seqs 1..inboxCut are carried in blocks. */
  readonly inboxCut: number;
  readonly mempoolNext: number;
  readonly held: Readonly<Record<string, bigint>>;
}

type MempoolItem =
  | { readonly kind: 'anchor'; readonly anchor: Anchor }
  | { readonly kind: 'deposit'; readonly seq: number }
  | { readonly kind: 'instruction'; readonly instruction: Instruction; readonly source: string }
  | { readonly kind: 'attestation'; readonly location: string };

/**
 * A run of empty blocks, kept as one record at its first height and rewritten as the run
 * grows, so an idle layer's store stays the same size. Its blocks are rebuilt from it
 * whole (their digests chained from `previous`): each carries the time the run began,
 * nothing, and the holdings and inbox cut it began with.
 */
interface EmptyRun {
  readonly from: number;
  readonly to: number;
  /** When the run began: every block of it carries this time. */
  readonly atMs: number;
  /** When its last block was made (the status declaration on reopen; in no digest). */
  readonly lastAtMs: number;
  /** The digest of the block before `from`. */
  readonly previous: string;
  /** The digest of its last block: a read that reaches it checks the run was rebuilt as made. */
  readonly digest: string;
  readonly serving: boolean;
  readonly inboxCut: number;
  readonly held: Readonly<Record<string, bigint>>;
}

/** The digest of a run's block at some height: where the last read of a run stopped, so reading on from there costs no walk from its start. */
interface RunCursor {
  readonly from: number;
  readonly height: number;
  readonly digest: string;
}

export interface EmbeddedLayerOptions {
  readonly store: Store;
  readonly instance: number;
  readonly finalityDepth: number;
  /** Whether writes are durable before they resolve (tests may drop it). */
  readonly sync?: boolean;
  /**
   * How long its status holds after its last block or serving change (then stale until
   * the next). 0 or absent: it declares afresh at every read, holding layerStatusFreshMs.
   */
  readonly statusFreshMs?: number;
}

export class EmbeddedLayer implements SettlementAdapter {
  readonly instance: number;
  readonly finalityDepth: number;
  private readonly store: Store;
  private readonly sync: boolean;
  private readonly statusFreshMs: number;
  /** When it last made a block or changed serving (its status declaration when statusFreshMs > 0). */
  private activeAtMs: number;
  private meta: Meta;
  /** The mempool, in arrival order, as keys and items (bounded by layerMempoolItemsMax). */
  private mempool: { readonly n: number; readonly item: MempoolItem }[];
  private readonly listeners = new Set<(blocks: readonly LayerBlock[]) => void>();
  /**
   * Blocks up to this height carry nothing unless the mempool changes: a block carried
   * nothing, so the next ones do not either until a waiting instruction passes its expiry
   * (held and the mempool stay as they are). Spares a walk over a mempool of unpayable items per block.
   */
  private quietThrough = -1;
  /** The run of empty blocks the head is in, or null when the head block carries something. */
  private run: EmptyRun | null;
  private runCursor: RunCursor | null = null;
  /** Changes run one at a time, in call order; a store failure under one is refused and the state read back. */
  private readonly changes = new SerialChanges(() => this.reload(), { code: 'ERR-SettlementLayerUnavailable', what: "the settlement layer's store failed" });
  /** Changes run one at a time, in call order. */

  private constructor(options: EmbeddedLayerOptions, meta: Meta, mempool: { n: number; item: MempoolItem }[], run: EmptyRun | null, activeAtMs: number) {
    assert(Number.isSafeInteger(options.instance) && options.instance >= 0 && options.instance <= 0xffff_ffff, 'the instance is a uint32');
    assert(Number.isSafeInteger(options.finalityDepth) && options.finalityDepth >= 0, 'the finality depth is a count of blocks');
    this.store = options.store;
    this.instance = options.instance;
    this.finalityDepth = options.finalityDepth;
    this.sync = options.sync ?? true;
    this.statusFreshMs = options.statusFreshMs ?? 0;
    assert(Number.isSafeInteger(this.statusFreshMs) && this.statusFreshMs >= 0, 'how long a status holds is a count of ms');
    this.activeAtMs = activeAtMs;
    this.meta = meta;
    this.mempool = mempool;
    this.run = run;
  }

  /** Opens the layer where the store left it (a fresh store: genesis, serving). */
  static async open(options: EmbeddedLayerOptions): Promise<EmbeddedLayer> {
    const { meta, mempool, run } = await readState(options.store);
    const head = run !== null || meta.height === 0 ? undefined : await options.store.get(layerKeys.block(meta.height));
    const headAtMs = run !== null ? run.lastAtMs : head === undefined ? 0 : decodeBlock(head).atMs;
    return new EmbeddedLayer(options, meta, mempool, run, Math.max(meta.servingSinceMs, headAtMs));
  }

  async head(): Promise<LayerHead> {
    return headOf(this.meta.height, this.finalityDepth);
  }

  get currentHead(): LayerHead {
    return headOf(this.meta.height, this.finalityDepth);
  }

  get serving(): boolean {
    return this.meta.serving;
  }

  get mempoolSize(): number {
    return this.mempool.length;
  }

  /** Declared at its last block or serving change when statusFreshMs > 0; else it answers for itself at once. */
  async status(nowMs: number): Promise<LayerStatus> {
    if (this.statusFreshMs === 0) return { serving: this.meta.serving, declaredAtMs: nowMs, freshUntilMs: nowMs + layerStatusFreshMs };
    return { serving: this.meta.serving, declaredAtMs: this.activeAtMs, freshUntilMs: this.activeAtMs + this.statusFreshMs };
  }

  /** Blocks `from`..`to`: stored blocks as they are, blocks of an empty run rebuilt from its record. */
  async blocks(fromHeight: number, toHeight: number): Promise<LayerBlock[]> {
    assert(Number.isSafeInteger(fromHeight) && fromHeight >= 1 && toHeight - fromHeight < layerBlocksReadMax, 'a read of the layer is bounded');
    const out: LayerBlock[] = [];
    if (toHeight < fromHeight) return out;
    // A run that began before `from` is stored at its first height: the record at or before `from` is read first.
    const records: string[] = [];
    for await (const [, value] of this.store.entries({ gte: layerKeys.blockPrefix, lte: layerKeys.block(fromHeight), reverse: true, limit: 1 })) records.push(value);
    for await (const [, value] of this.store.entries({ gt: layerKeys.block(fromHeight), lte: layerKeys.block(toHeight), limit: layerBlocksReadMax })) records.push(value);
    for (const text of records) {
      const stored = decodeStoredBlock(text);
      if ('from' in stored) out.push(...this.runBlocks(stored, Math.max(fromHeight, stored.from), Math.min(toHeight, stored.to)));
      else if (stored.height >= fromHeight) out.push(stored);
    }
    return out;
  }

  /** A run's blocks `from`..`to`, their digests chained from the run's start (or from where the last read of it stopped). */
  private runBlocks(run: EmptyRun, from: number, to: number): LayerBlock[] {
    const out: LayerBlock[] = [];
    if (to < from) return out;
    const cursor = this.runCursor;
    let [height, previous] = cursor !== null && cursor.from === run.from && cursor.height < from ? [cursor.height + 1, cursor.digest] : [run.from, run.previous];
    for (; height <= to; height++) {
      const block = runBlock(run, height, previous);
      if (height >= from) out.push(block);
      previous = block.digest;
    }
    if (to === run.to && previous !== run.digest) damaged(`layer block ${to}`, 'does not hash to its digest');
    this.runCursor = { from: run.from, height: to, digest: previous };
    return out;
  }

  inbox(fromSeq: number, toSeq: number): Promise<InboxRecord[]> {
    return this.readRange(fromSeq, toSeq, layerInboxReadMax, layerKeys.inbox, decodeInbox);
  }

  /** Records `from`..`to` (from 1, at most `max` of them) of one numbered kind, in order. */
  private async readRange<T>(from: number, to: number, max: number, keyOf: (n: number) => string, decode: (text: string) => T): Promise<T[]> {
    assert(Number.isSafeInteger(from) && from >= 1 && to - from < max, 'a read of the layer is bounded');
    const out: T[] = [];
    if (to < from) return out;
    for await (const [, value] of this.store.entries({ gte: keyOf(from), lte: keyOf(to), limit: max })) out.push(decode(value));
    return out;
  }

  /** Where an anchor stands: undefined when never submitted, null while waiting, else the height that carried it. */
  async anchorHeight(number: number): Promise<number | null | undefined> {
    const text = await this.store.get(layerKeys.anchor(number));
    return text === undefined ? undefined : check.nullableInteger(recordJson(text, 'layer anchor'), 'height', 'layer anchor');
  }

  submitAnchor(anchor: Anchor): Promise<void> {
    return this.changes.run(async () => {
      assert(Number.isSafeInteger(anchor.number) && anchor.number >= 1 && /^[0-9a-f]{64}$/.test(anchor.commitment), 'an anchor is a number and a commitment');
      if ((await this.store.get(layerKeys.anchor(anchor.number))) !== undefined) return;
      await this.enqueue({ kind: 'anchor', anchor }, [{ type: 'put', key: layerKeys.anchor(anchor.number), value: JSON.stringify({ height: null }) }]);
    });
  }

  submitInstruction(instruction: Instruction, source = ''): Promise<void> {
    return this.changes.run(async () => {
      assert(/^[0-9a-f]{64}$/.test(instruction.digest) && instruction.amountMinor > 0n, 'an instruction is a digest and a positive amount');
      if ((await this.store.get(layerKeys.instruction(instruction.digest))) !== undefined) return;
      await this.enqueue({ kind: 'instruction', instruction, source }, [{ type: 'put', key: layerKeys.instruction(instruction.digest), value: '' }]);
    });
  }

  /** What the layer knows a location to be (embedded only: its registry), or undefined. */
  async location(location: string): Promise<Attestation | undefined> {
    const text = await this.store.get(layerKeys.location(location));
    return text === undefined ? undefined : decodeLocation(text);
  }

  requestAttestation(location: string): Promise<void> {
    return this.changes.run(() => this.enqueue({ kind: 'attestation', location }, []));
  }

  onBlocks(listener: (blocks: readonly LayerBlock[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ------------------------------------------------------------ controls (embedded only)

  /**
   * Makes `count` blocks at `atMs`, in one write. A serving layer puts in each block
   * what waits in its mempool and can be carried (at most layerBlockItemsMax items each),
   * shared fairly (`fairOrder`): each source's items in arrival order, the sources taken
   * in turn. An instruction the layer cannot pay yet takes no place and keeps no one
   * out: it waits where it is (until its expiry). A layer that is not serving still
   * advances its height but carries nothing.
   */
  produceBlocks(count: number, atMs: number): Promise<LayerBlock[]> {
    return this.changes.run(async () => {
      assert(Number.isSafeInteger(count) && count >= 1 && count <= layerBlocksPerRequestMax, 'blocks are made a bounded number at a time');
      const writes: BatchOp[] = [];
      const made: LayerBlock[] = [];
      let { height, lastDigest, inboxCut } = this.meta;
      let held = { ...this.meta.held };
      let mempool = this.mempool;
      let run = this.run;
      const locations = await this.loadLocations(mempool);
      for (let i = 0; i < count; i++) {
        height++;
        const content = this.meta.serving && height > this.quietThrough ? await this.fill(height, mempool, held, locations, writes) : { block: emptyBlock(), held, carried: new Set<number>() };
        if (this.meta.serving && content.carried.size === 0) this.quietThrough = mempool.reduce((low, { item }) => (item.kind === 'instruction' ? Math.min(low, item.instruction.expiryHeight) : low), Number.MAX_SAFE_INTEGER);
        held = content.held;
        mempool = mempool.filter(({ n }) => !content.carried.has(n));
        for (const n of content.carried) writes.push({ type: 'del', key: layerKeys.mempool(n) });
        inboxCut = content.block.deposits.reduce((cut, d) => Math.max(cut, d.coordinate.seq), inboxCut);
        let block: LayerBlock;
        if (isEmpty(content.block)) {
          // An empty block extends the run the head is in (same serving), or begins one: one record, rewritten.
          const extended = run !== null && run.to === height - 1 && run.serving === this.meta.serving
            ? { ...run, to: height, lastAtMs: atMs }
            : { from: height, to: height, atMs, lastAtMs: atMs, previous: lastDigest, digest: lastDigest, serving: this.meta.serving, inboxCut, held };
          block = runBlock(extended, height, lastDigest);
          run = { ...extended, digest: block.digest };
          writes.push({ type: 'put', key: layerKeys.block(run.from), value: encodeRun(run) });
        } else {
          run = null;
          const body = { height, atMs, previous: lastDigest, serving: this.meta.serving, ...content.block, inboxCut, held };
          block = { ...body, digest: blockDigest(body) };
          writes.push({ type: 'put', key: layerKeys.block(height), value: encodeBlock(block) });
        }
        made.push(block);
        lastDigest = block.digest;
      }
      const meta: Meta = { ...this.meta, height, lastDigest, inboxCut, held };
      writes.push({ type: 'put', key: layerKeys.meta, value: encodeMeta(meta) });
      await this.store.write(writes, this.sync);
      this.meta = meta;
      this.mempool = mempool;
      this.run = run;
      this.activeAtMs = Math.max(this.activeAtMs, atMs);
      for (const listener of this.listeners) listener(made);
      return made;
    });
  }

  /** Places a deposit in the inbox: it takes the next seq now and enters the next serving block. */
  placeDeposit(deposit: { location: string; amountMinor: bigint; accountRef: string }): Promise<InboxRecord> {
    return this.changes.run(async () => {
      assert(deposit.amountMinor > 0n && /^[0-9a-f]{64}$/.test(deposit.accountRef), 'a deposit is a positive amount for a 32-byte reference');
      const seq = this.meta.inboxLength + 1;
      const digest = sha256Hex(canonicalJson({ instance: this.instance, seq, location: deposit.location, amount: deposit.amountMinor.toString(), account_ref: deposit.accountRef }));
      const record: InboxRecord = { ...deposit, coordinate: { digest, instance: this.instance, seq }, height: null };
      await this.enqueue({ kind: 'deposit', seq }, [{ type: 'put', key: layerKeys.inbox(seq), value: encodeInbox(record) }], { inboxLength: seq });
      return record;
    });
  }

  /** Declares what a location is (the embedded layer's asset registry), so that it can attest it. */
  registerLocation(attestation: Attestation): Promise<void> {
    return this.changes.run(async () => {
      const known = await this.store.get(layerKeys.location(attestation.location));
      if (known === undefined && (await this.countLocations()) >= layerLocationsMax) refuse('ERR-SettlementLayerUnavailable', `the embedded layer holds at most ${layerLocationsMax} locations`);
      await this.store.write([{ type: 'put', key: layerKeys.location(attestation.location), value: JSON.stringify(attestation) }], this.sync);
    });
  }

  /** Stops or resumes serving (a stopped layer's blocks carry nothing; see produceBlocks). */
  setServing(serving: boolean, atMs: number): Promise<void> {
    return this.changes.run(async () => {
      // Asked to serve or stop, it declares its status again either way.
      this.activeAtMs = Math.max(this.activeAtMs, atMs);
      if (serving === this.meta.serving) return;
      const meta: Meta = { ...this.meta, serving, servingSinceMs: atMs };
      await this.store.write([{ type: 'put', key: layerKeys.meta, value: encodeMeta(meta) }], this.sync);
      this.meta = meta;
      this.quietThrough = -1;
    });
  }

  // ------------------------------------------------------------ inside

  private async reload(): Promise<void> {
    const { meta, mempool, run } = await readState(this.store);
    this.meta = meta;
    this.mempool = mempool;
    this.run = run;
    this.runCursor = null;
    this.quietThrough = -1;
  }

  private async enqueue(item: MempoolItem, more: BatchOp[], metaChange: Partial<Meta> = {}): Promise<void> {
    if (this.mempool.length >= layerMempoolItemsMax) refuse('ERR-SettlementLayerUnavailable', `the embedded layer holds at most ${layerMempoolItemsMax} items waiting for a block`);
    const n = this.meta.mempoolNext;
    const meta: Meta = { ...this.meta, ...metaChange, mempoolNext: n + 1 };
    await this.store.write([...more, { type: 'put', key: layerKeys.mempool(n), value: encodeMempoolItem(item) }, { type: 'put', key: layerKeys.meta, value: encodeMeta(meta) }], this.sync);
    this.meta = meta;
    // Appended in place (changes run one at a time): a copy per item would make a flood of submissions quadratic, and hold up the anchors queued behind it.
    this.mempool.push({ n, item });
    this.quietThrough = -1;
  }

  /**
   * What one block at `height` carries of the mempool (at most layerBlockItemsMax items,
   * in `fairOrder`), the holdings after it, and the mempool numbers it carried. An
   * instruction not payable now is passed over and stays; one past its expiry is carried
   * as `expired`.
   */
  private async fill(height: number, mempool: readonly { n: number; item: MempoolItem }[], heldBefore: Record<string, bigint>, locations: ReadonlyMap<string, Attestation>, writes: BatchOp[]) {
    const held = { ...heldBefore };
    const block = emptyBlock();
    const carried = new Set<number>();
    for (const { n, item } of fairOrder(mempool)) {
      if (carried.size >= layerBlockItemsMax) break;
      if (item.kind === 'anchor') {
        block.anchors.push(item.anchor);
        writes.push({ type: 'put', key: layerKeys.anchor(item.anchor.number), value: JSON.stringify({ height }) });
      } else if (item.kind === 'deposit') {
        const text = await this.store.get(layerKeys.inbox(item.seq));
        assert(text !== undefined, 'a deposit in the mempool is in the inbox');
        const record: InboxRecord = { ...decodeInbox(text), height };
        block.deposits.push(record);
        held[record.location] = (held[record.location] ?? 0n) + record.amountMinor;
        writes.push({ type: 'put', key: layerKeys.inbox(item.seq), value: encodeInbox(record) });
      } else if (item.kind === 'instruction') {
        const { instruction } = item;
        const available = held[instruction.location] ?? 0n;
        if (height > instruction.expiryHeight) block.expired.push(instruction.digest);
        // The layer cannot pay out what it does not hold: the instruction waits (until its expiry), taking no place.
        else if (available < instruction.amountMinor) continue;
        else {
          block.instructions.push(instruction);
          held[instruction.location] = available - instruction.amountMinor;
        }
      } else {
        const attestation = locations.get(item.location);
        // A location the layer does not know is not attested: the request is dropped.
        if (attestation !== undefined) block.attestations.push(attestation);
      }
      carried.add(n);
    }
    return { block, held, carried };
  }

  private async loadLocations(mempool: readonly { item: MempoolItem }[]): Promise<Map<string, Attestation>> {
    const wanted = [...new Set(mempool.flatMap(({ item }) => (item.kind === 'attestation' ? [item.location] : [])))];
    const texts = await this.store.getMany(wanted.map(layerKeys.location));
    const out = new Map<string, Attestation>();
    wanted.forEach((location, i) => {
      const text = texts[i];
      if (text !== undefined) out.set(location, decodeLocation(text));
    });
    return out;
  }

  private async countLocations(): Promise<number> {
    let count = 0;
    for await (const _ of this.store.entries({ gte: layerKeys.locationPrefix, lt: prefixEnd(layerKeys.locationPrefix), limit: layerLocationsMax })) count++;
    return count;
  }
}

async function readState(store: Store): Promise<{ meta: Meta; mempool: { n: number; item: MempoolItem }[]; run: EmptyRun | null }> {
  const text = await store.get(layerKeys.meta);
  const meta = text === undefined ? freshMeta() : decodeMeta(text);
  const mempool: { n: number; item: MempoolItem }[] = [];
  const range = { gte: layerKeys.mempoolPrefix, lt: prefixEnd(layerKeys.mempoolPrefix), limit: layerMempoolItemsMax };
  for await (const [key, value] of store.entries(range)) {
    const n = parseInt(key.slice(layerKeys.mempoolPrefix.length), 16);
    assert(n < meta.mempoolNext, 'a mempool item was numbered before the meta was written');
    mempool.push({ n, item: decodeMempoolItem(value) });
  }
  // The head is in a run of empty blocks when the last record of blocks is a run that reaches it.
  let run: EmptyRun | null = null;
  for await (const [, value] of store.entries({ gte: layerKeys.blockPrefix, lt: prefixEnd(layerKeys.blockPrefix), reverse: true, limit: 1 })) {
    const last = decodeStoredBlock(value);
    if ('from' in last && last.to === meta.height) run = last;
  }
  return { meta, mempool, run };
}

const isEmpty = (b: ReturnType<typeof emptyBlock>) =>
  b.anchors.length + b.deposits.length + b.instructions.length + b.expired.length + b.attestations.length === 0;

/** The block a run holds at `height`, after the block whose digest is `previous`. */
function runBlock(run: EmptyRun, height: number, previous: string): LayerBlock {
  const body = { height, atMs: run.atMs, previous, serving: run.serving, ...emptyBlock(), inboxCut: run.inboxCut, held: run.held };
  return { ...body, digest: blockDigest(body) };
}

function emptyBlock() {
  return { anchors: [] as Anchor[], deposits: [] as InboxRecord[], instructions: [] as Instruction[], expired: [] as string[], attestations: [] as Attestation[] };
}

/** Which queue of the mempool an item waits in: instructions per source (who asked), the rest per kind. */
const laneOf = (item: MempoolItem): string => (item.kind === 'instruction' ? `instruction:${item.source}` : item.kind);

/**
 * The mempool in the order a block takes it: each lane (laneOf) in arrival order, the
 * lanes in turn (one item of each, round after round, lanes ordered by their oldest
 * item), so one source with many items waiting delays others by at most one item per turn.
 */
function* fairOrder<T extends { readonly item: MempoolItem }>(mempool: readonly T[]): Generator<T> {
  const lanes = new Map<string, T[]>();
  for (const entry of mempool) {
    const lane = lanes.get(laneOf(entry.item));
    if (lane === undefined) lanes.set(laneOf(entry.item), [entry]);
    else lane.push(entry);
  }
  const queues = [...lanes.values()];
  for (let turn = 0; queues.length > 0; turn++) {
    for (let i = 0; i < queues.length; ) {
      const queue = queues[i]!;
      if (turn < queue.length) {
        yield queue[turn]!;
        i++;
      } else queues.splice(i, 1);
    }
  }
}

function headOf(height: number, finalityDepth: number): LayerHead {
  return { height, finalHeight: Math.max(0, height - finalityDepth) };
}

function freshMeta(): Meta {
  return { height: 0, lastDigest: genesisDigest, serving: true, servingSinceMs: 0, inboxLength: 0, inboxCut: 0, mempoolNext: 0, held: {} };
}

/** A block's digest: hex SHA-256 of its canonical JSON (amounts as decimal strings) without `digest`. */
export function blockDigest(block: Omit<LayerBlock, 'digest'> & { digest?: string }): string {
  const { digest: _digest, ...body } = block;
  return sha256Hex(canonicalJson(blockJson(body)));
}

// ------------------------------------------------------------ encodings (bigint as decimal text)

const heldJson = (held: Readonly<Record<string, bigint>>) => Object.fromEntries(Object.entries(held).map(([k, v]) => [k, v.toString()]));
const inboxJson = (r: InboxRecord) => ({ ...r, amountMinor: r.amountMinor.toString() });
const instructionJson = (i: Instruction) => ({ ...i, amountMinor: i.amountMinor.toString() });

function blockJson<T extends Omit<LayerBlock, 'digest'>>(block: T) {
  return {
    ...block,
    deposits: block.deposits.map(inboxJson),
    instructions: block.instructions.map(instructionJson),
    held: heldJson(block.held),
  };
}

function encodeBlock(block: LayerBlock): string {
  return JSON.stringify(blockJson(block));
}

// Decoders check what they read (decode.ts); a block's content is vouched for by its digest once its amounts decode.
const withAmount = <T>(j: Json, what: string): T => ({ ...(j as unknown as T), amountMinor: check.decimal(j, 'amountMinor', what) });

function decodeBlock(text: string): LayerBlock {
  const what = 'layer block';
  const j = recordJson(text, what);
  const height = check.integer(j, 'height', what);
  const named = `layer block ${height}`;
  for (const name of ['atMs', 'inboxCut']) check.integer(j, name, named);
  check.boolean(j, 'serving', named);
  for (const name of ['digest', 'previous']) check.digestHex(j, name, named);
  for (const name of ['anchors', 'attestations']) check.objects(j, name, named);
  check.strings(j, 'expired', named);
  const block: LayerBlock = {
    ...(j as unknown as LayerBlock),
    deposits: check.objects(j, 'deposits', named).map((d) => withAmount<InboxRecord>(d, named)),
    instructions: check.objects(j, 'instructions', named).map((i) => withAmount<Instruction>(i, named)),
    held: check.decimals(j, 'held', named),
  };
  if (blockDigest(block) !== block.digest) damaged(named, 'does not hash to its digest');
  return block;
}

function encodeRun(run: EmptyRun): string {
  return JSON.stringify({ run: { ...run, held: heldJson(run.held) } });
}

/** A record of `L/b/`: a block, or a run of empty blocks (`{run}`). */
function decodeStoredBlock(text: string): LayerBlock | EmptyRun {
  const what = 'layer block';
  const j = recordJson(text, what);
  if (j.run === undefined) return decodeBlock(text);
  const run = check.object(j, 'run', what);
  const from = check.integer(run, 'from', what);
  const named = `layer block run from ${from}`;
  for (const name of ['to', 'atMs', 'lastAtMs', 'inboxCut']) check.integer(run, name, named);
  for (const name of ['previous', 'digest']) check.digestHex(run, name, named);
  check.boolean(run, 'serving', named);
  return { ...(run as unknown as EmptyRun), held: check.decimals(run, 'held', named) };
}

function encodeMeta(meta: Meta): string {
  return JSON.stringify({ ...meta, held: heldJson(meta.held) });
}

function decodeMeta(text: string): Meta {
  const what = 'layer meta';
  const j = recordJson(text, what);
  for (const name of ['height', 'servingSinceMs', 'inboxLength', 'inboxCut', 'mempoolNext']) check.integer(j, name, what);
  check.digestHex(j, 'lastDigest', what);
  check.boolean(j, 'serving', what);
  return { ...(j as unknown as Meta), held: check.decimals(j, 'held', what) };
}

function encodeInbox(record: InboxRecord): string {
  return JSON.stringify(inboxJson(record));
}

function decodeInbox(text: string): InboxRecord {
  const what = 'layer inbox';
  const j = recordJson(text, what);
  const coordinate = check.object(j, 'coordinate', what);
  check.string(coordinate, 'digest', what);
  check.integer(coordinate, 'instance', what);
  check.integer(coordinate, 'seq', what);
  check.string(j, 'location', what);
  check.string(j, 'accountRef', what);
  check.nullableInteger(j, 'height', what);
  return withAmount<InboxRecord>(j, what);
}

function encodeMempoolItem(item: MempoolItem): string {
  return JSON.stringify(item.kind === 'instruction' ? { ...item, instruction: instructionJson(item.instruction) } : item);
}

const mempoolKinds = members<MempoolItem['kind']>({ anchor: true, deposit: true, instruction: true, attestation: true });

function decodeMempoolItem(text: string): MempoolItem {
  const what = 'layer mempool item';
  const j = recordJson(text, what);
  switch (check.oneOf(j, 'kind', mempoolKinds, what)) {
    case 'anchor': {
      const anchor = check.object(j, 'anchor', what);
      return { kind: 'anchor', anchor: { number: check.integer(anchor, 'number', what), commitment: check.digestHex(anchor, 'commitment', what) } };
    }
    case 'deposit':
      return { kind: 'deposit', seq: check.integer(j, 'seq', what) };
    case 'attestation':
      return { kind: 'attestation', location: check.string(j, 'location', what) };
    case 'instruction': {
      const instruction = check.object(j, 'instruction', what);
      // Items stored before sources were kept share one lane.
      const source = j.source === undefined ? '' : check.string(j, 'source', what);
      check.string(instruction, 'digest', what);
      check.string(instruction, 'location', what);
      check.object(instruction, 'destination', what);
      check.integer(instruction, 'expiryHeight', what);
      return { kind: 'instruction', instruction: withAmount<Instruction>(instruction, what), source };
    }
  }
}

const attestationStatuses = members<Attestation['status']>({ active: true, retired: true });

/** The layer's registry entry of a location (embedded only). */
function decodeLocation(text: string): Attestation {
  const what = 'layer location';
  const j = recordJson(text, what);
  return {
    location: check.string(j, 'location', what),
    symbol: check.string(j, 'symbol', what),
    decimals: check.integer(j, 'decimals', what),
    status: check.oneOf(j, 'status', attestationStatuses, what),
  };
}

/**
 * `ledgerd check`: the embedded layer's chain as its records hold it, against its meta:
 * every block from 1 to the meta's height present, hashing to its digest and naming the
 * one before (genesisDigest for the first), the last one the meta's `lastDigest`. A store
 * that silently lost records (a damaged write-ahead log replayed past the damage) leaves a
 * gap or a broken link here, though every record left decodes. Returns the meta's height
 * (null: no embedded layer in this book).
 */
export async function checkLayerChain(store: ReadView, problem: (text: string) => void): Promise<number | null> {
  const text = await store.get(layerKeys.meta);
  if (text === undefined) return null;
  const meta = decodeMeta(text);
  let expected = 1;
  let previous = genesisDigest;
  let reported = false;
  const broken = (what: string) => {
    // The first break only: past it every link is off by the same gap.
    if (!reported) problem(`settlement layer: ${what} (its meta says height ${meta.height}): records were lost`);
    reported = true;
  };
  for await (const [, value] of pagedEntries(store, layerKeys.blockPrefix, layerBlocksReadMax)) {
    // A run of empty blocks is one record (its first height to its last): it links like one block spanning them.
    const stored = decodeStoredBlock(value);
    const [first, last] = 'from' in stored ? [stored.from, stored.to] : [stored.height, stored.height];
    if (first !== expected) broken(`block ${expected}${first > expected + 1 ? `..${first - 1}` : ''} missing before block ${first}`);
    else if (stored.previous !== previous) broken(`block ${first} does not name block ${expected - 1}'s digest`);
    expected = last + 1;
    previous = stored.digest;
  }
  if (expected - 1 !== meta.height) broken(`its last block is ${expected - 1}`);
  else if (previous !== meta.lastDigest) broken(`block ${meta.height} is not the one its meta names`);
  return meta.height;
}
