/**
 * The settlement adapter (CONTRACT 7 and 9): everything the core asks of a settlement
 * layer, whichever it is. The daemon embeds a deterministic local layer
 * (`embedded.ts`); a real layer implements the same surface (docs/settlement.md).
 *
 * The core only ever reads what a layer holds through `blocks` and `inbox`, and only
 * ever hands it things to carry through `submit*`: what a block carries and when a
 * block is final is the layer's to say. Heights start at 0 (genesis); the first block
 * made is height 1; a block at height h is final once the head is h + finalityDepth.
 */

/** A checkpoint's anchor: its number (the layer's anchor number for this instance) and commitment. */
export interface Anchor {
  readonly number: number;
  readonly commitment: string;
}

/** Where a record sits on the layer (spec 2.2 Coordinate): its inbox position and digest. */
export interface Coordinate {
  readonly digest: string;
  readonly instance: number;
  readonly seq: number;
}

/** A deposit in the layer's inbox: value placed on the layer for the account `accountRef` names. */
export interface InboxRecord {
  readonly coordinate: Coordinate;
  /** The asset's location on the layer (its binding). */
  readonly location: string;
  readonly amountMinor: bigint;
  /** 32-byte hex: the deposit reference of a ledger account (or of nothing). */
  readonly accountRef: string;
  /** The block that carried it; null while waiting for one. */
  readonly height: number | null;
}

/** Where an outbox instruction sends value: a plain layer account, or an account on another deployment. */
export type Destination = { readonly account: string } | { readonly instance: number; readonly accountRef: string };

/** An outbox instruction as the layer carries it (its identity is `digest`). */
export interface Instruction {
  readonly digest: string;
  readonly location: string;
  readonly amountMinor: bigint;
  readonly destination: Destination;
  /** The last height at which it may take effect. */
  readonly expiryHeight: number;
}

/** What the layer says an asset location is, carried in a block (a binding is `bound` once that block is final). */
export interface Attestation {
  readonly location: string;
  readonly symbol: string;
  readonly decimals: number;
  readonly status: 'active' | 'retired';
}

export interface LayerBlock {
  readonly height: number;
  readonly atMs: number;
  /** Hex SHA-256 of the block's canonical JSON without `digest`; `previous` chains the blocks. */
  readonly digest: string;
  readonly previous: string;
  /** Whether the layer was serving when it made the block: a block made while not serving carries nothing. */
  readonly serving: boolean;
  readonly anchors: readonly Anchor[];
  readonly deposits: readonly InboxRecord[];
  /** Instructions that took effect in this block. */
  readonly instructions: readonly Instruction[];
  /** Digests of instructions dropped at this block because it is past their expiry height. */
  readonly expired: readonly string[];
  readonly attestations: readonly Attestation[];
  /** The inbox length this block brings the layer to: deposits are carried in inbox order, so seqs 1..inboxCut are in blocks up to here. */
  readonly inboxCut: number;
  /** What the layer holds per location once this block applied, minor units. */
  readonly held: Readonly<Record<string, bigint>>;
}

export interface LayerHead {
  readonly height: number;
  /** The highest final height (0 until a block is final: genesis is final). */
  readonly finalHeight: number;
}

/** The adapter's status (spec 2.2 `status`): whether it serves, as declared at a time and until when that holds. */
export interface LayerStatus {
  readonly serving: boolean;
  readonly declaredAtMs: number;
  /** The first time the declaration no longer holds. */
  readonly freshUntilMs: number;
}

export interface SettlementAdapter {
  /** This deployment's instance on the layer (uint32). */
  readonly instance: number;
  readonly finalityDepth: number;
  head(): Promise<LayerHead>;
  status(nowMs: number): Promise<LayerStatus>;
  /** Blocks `fromHeight`..`toHeight` inclusive (heights ≥ 1), at most `layerBlocksReadMax`. */
  blocks(fromHeight: number, toHeight: number): Promise<LayerBlock[]>;
  /** Inbox records `fromSeq`..`toSeq` inclusive (seqs ≥ 1), at most `layerInboxReadMax`; positions the layer does not hold are absent. */
  inbox(fromSeq: number, toSeq: number): Promise<InboxRecord[]>;
  /** Hands the layer an anchor to carry in a block. Submitting the same anchor again changes nothing. */
  submitAnchor(anchor: Anchor): Promise<void>;
  /**
   * Hands the layer an instruction; it takes effect in a block at a height ≤ its expiry, or never.
   * `source` names who asked for it (the withdrawal's principal): a layer that shares its
   * capacity shares it per source, so one caller's instructions never keep others' out.
   */
  submitInstruction(instruction: Instruction, source?: string): Promise<void>;
  /** Asks the layer to attest what `location` is. */
  requestAttestation(location: string): Promise<void>;
  /** Called with each run of new blocks once they are durable; returns the unsubscribe. */
  onBlocks(listener: (blocks: readonly LayerBlock[]) => void): () => void;
}

/** Whether the block at `height` is final under `head`. */
export function isFinal(height: number, head: LayerHead): boolean {
  return height <= head.finalHeight;
}
