/**
 * Making a disclosure (spec endpoint 19, CONTRACT 9): a signed assertion about one
 * account, resting on a final checkpoint, with the subject's own journal entries it
 * rests on and their inclusion proofs in the checkpoint's kernel_root. Deterministic:
 * the time and the clerk's signer are passed in; everything is read from one snapshot.
 *
 * Order of refusals: the assertion's shape (ERR-DisclosureUnsupported, malformed
 * members), the authority (ERR-NotAuthorised, ERR-JustificationRequired), the
 * recipient, the checkpoint (ERR-AnchorNotFinal), whether the checkpoint covers the
 * subject (ERR-NotDisclosable), then truth (ERR-DisclosureFalse).
 */
import type { Actor } from '../auth/authority.js';
import { inScope } from '../auth/authority.js';
import type { Checkpoint, Checkpoints } from '../checkpoints/checkpoints.js';
import { inclusionProof } from '../checkpoints/merkle.js';
import { disclosureEvidenceMax, disclosureScanEntriesMax, operationRefLengthMax } from '../constants.js';
import { refuse } from '../errors.js';
import { canonicalJson } from '../model/canonical.js';
import { decodeAccount, decodeIndexedPosting, encodeLeaf } from '../model/codec.js';
import { check, damaged, members as unionMembers, recordJson } from '../model/decode.js';
import type { Posting } from '../model/model.js';
import type { AccountId, AssetSymbol, IdentityId } from '../model/values.js';
import { parseAmountMinor, parseAssetSymbol, parseIdentityId, parseLimitMinor, parseUintNumber } from '../model/values.js';
import { journalLeaves } from '../queries/journal.js';
import type { ReadView } from '../store/port.js';
import { disclosureSignaturePrefix, disclosureSignaturePrefixV2 } from './verify.js';
import { checkpointView } from '../checkpoints/views.js';
import { keys, seqHex } from '../model/keys.js';

export type Assertion =
  | { readonly shape: 'holds_at_least'; readonly amount: string; readonly asset: AssetSymbol; readonly kind: 'available' }
  | { readonly shape: 'operation_occurred'; readonly operation: string }
  | { readonly shape: 'operation_moved'; readonly operation: string; readonly amount: string; readonly asset: AssetSymbol }
  | {
      readonly shape: 'flows_bound';
      readonly asset: AssetSymbol;
      readonly bound: string;
      readonly bound_kind: 'at_least' | 'at_most';
      readonly direction: 'in' | 'out';
      readonly from_sequence: number;
      readonly to_sequence: number;
    };

export type Recipient = { readonly identity: IdentityId } | { readonly reference: string };

const members: Record<Assertion['shape'], readonly string[]> = {
  holds_at_least: ['shape', 'amount', 'asset', 'kind'],
  operation_occurred: ['shape', 'operation'],
  operation_moved: ['shape', 'operation', 'amount', 'asset'],
  flows_bound: ['shape', 'asset', 'bound', 'bound_kind', 'direction', 'from_sequence', 'to_sequence'],
};

const operationRefPattern = new RegExp(`^[A-Za-z0-9_.-]{1,${operationRefLengthMax}}$`);

function operationOf(value: unknown): string {
  if (typeof value !== 'string' || !operationRefPattern.test(value)) refuse('ERR-MalformedCommand', 'assertion.operation is not an operation reference');
  return value;
}

function assetOf(value: unknown, assets: ReadonlySet<string>): AssetSymbol {
  const asset = parseAssetSymbol(value, 'assertion.asset');
  if (!assets.has(asset)) refuse('ERR-UnknownAsset', `no asset ${asset}`);
  return asset;
}

/** The assertion as the disclosure carries it: exactly its shape's members, amounts as canonical digits. */
export function parseAssertion(value: unknown, assets: ReadonlySet<string>): Assertion {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse('ERR-MalformedCommand', 'assertion must be an object with a shape');
  const a = value as Record<string, unknown>;
  const shape = a.shape;
  if (typeof shape !== 'string' || !Object.hasOwn(members, shape)) refuse('ERR-DisclosureUnsupported', `shape ${JSON.stringify(shape)} is not one the service makes`);
  const wanted = members[shape as Assertion['shape']];
  for (const name of Object.keys(a)) if (!wanted.includes(name)) refuse('ERR-MalformedCommand', `assertion.${name} is not a member of ${shape}`);
  for (const name of wanted) if (a[name] === undefined) refuse('ERR-MalformedCommand', `assertion.${name} is required for ${shape}`);
  switch (shape as Assertion['shape']) {
    case 'holds_at_least':
      if (a.kind !== 'available') refuse('ERR-DisclosureUnsupported', `holds_at_least of kind ${JSON.stringify(a.kind)} is not supported (only available)`);
      return { shape: 'holds_at_least', amount: parseAmountMinor(a.amount, 'assertion.amount').toString(), asset: assetOf(a.asset, assets), kind: 'available' };
    case 'operation_occurred':
      return { shape: 'operation_occurred', operation: operationOf(a.operation) };
    case 'operation_moved':
      return { shape: 'operation_moved', operation: operationOf(a.operation), amount: parseAmountMinor(a.amount, 'assertion.amount').toString(), asset: assetOf(a.asset, assets) };
    case 'flows_bound': {
      if (a.bound_kind !== 'at_least' && a.bound_kind !== 'at_most') refuse('ERR-DisclosureUnsupported', 'bound_kind is at_least or at_most');
      if (a.direction !== 'in' && a.direction !== 'out') refuse('ERR-DisclosureUnsupported', 'direction is in or out');
      const from = parseUintNumber(a.from_sequence, 'assertion.from_sequence');
      const to = parseUintNumber(a.to_sequence, 'assertion.to_sequence');
      if (from < 1 || from > to) refuse('ERR-MalformedCommand', 'from_sequence is at least 1 and not after to_sequence');
      return {
        shape: 'flows_bound', asset: assetOf(a.asset, assets), bound: parseLimitMinor(a.bound, 'assertion.bound').toString(),
        bound_kind: a.bound_kind, direction: a.direction, from_sequence: from, to_sequence: to,
      };
    }
  }
}

export function parseRecipient(identity: unknown, reference: unknown): Recipient {
  if ((identity === undefined) === (reference === undefined)) refuse('ERR-MalformedCommand', 'exactly one of recipient_identity and recipient_reference');
  if (identity !== undefined) return { identity: parseIdentityId(identity, 'recipient_identity') };
  if (typeof reference !== 'string' || !/^[0-9a-f]{64}$/.test(reference)) refuse('ERR-MalformedCommand', 'recipient_reference is 32 bytes of lowercase hex');
  return { reference };
}

export interface DisclosureRequest {
  readonly actor: Actor;
  readonly operator: IdentityId;
  readonly subject: AccountId;
  readonly assertion: Assertion;
  readonly checkpoint: number | null;
  readonly legalObligation: string | null;
  readonly recipient: Recipient;
  /** CONTRACT 12.7: a `v: 2` disclosure carrying the subject's liabilities proof (holds_at_least only). */
  readonly withLiabilities: boolean;
}

export interface DisclosureContext {
  /** One snapshot of the book: accounts, identities, the journal and its index, the stored subtrees. */
  readonly view: ReadView;
  readonly checkpoints: Checkpoints;
  readonly assets: readonly AssetSymbol[];
  readonly instance: number;
  readonly clerk: { readonly publicKeyHex: string; sign(bytes: Buffer): Buffer };
  /** The journal positions an operation appended, or undefined when there is no such operation. */
  operationPostings(ref: string): Promise<readonly number[] | undefined>;
  readonly nowMs: number;
}

/** Makes the disclosure, hex; refuses (throws) as the module comment orders. */
export async function disclose(request: DisclosureRequest, context: DisclosureContext): Promise<string> {
  const { view } = context;
  await authorise(request, view);
  if ('identity' in request.recipient && (await view.get(keys.identity(request.recipient.identity))) === undefined) {
    refuse('ERR-MalformedCommand', 'recipient_identity is not an identity of the book');
  }
  if (request.withLiabilities && request.assertion.shape !== 'holds_at_least') refuse('ERR-DisclosureUnsupported', 'with_liabilities goes with holds_at_least only');
  return signedDisclosure(request, context);
}

/** What a disclosure was made at, kept so that a repeat rebuilds it (`rebuildDisclosure`). */
export interface DisclosureMade {
  readonly checkpoint: number;
  readonly issuedAtMs: number;
}

export function disclosureMade(hex: string): DisclosureMade {
  const made = JSON.parse(Buffer.from(hex, 'hex').toString('utf8')) as { checkpoint: { number: number }; issued_at: number };
  return { checkpoint: made.checkpoint.number, issuedAtMs: made.issued_at };
}

/**
 * The disclosure a request made, byte for byte, from what was kept of it: everything it
 * rests on is fixed once its checkpoint is final (the journal up to the checkpoint, its
 * proofs, the clerk's deterministic ed25519 signature). Its authority was decided when it
 * was made: a repeat answers what was made then.
 */
export function rebuildDisclosure(request: DisclosureRequest, made: DisclosureMade, context: DisclosureContext): Promise<string> {
  return signedDisclosure({ ...request, checkpoint: made.checkpoint }, { ...context, nowMs: made.issuedAtMs });
}

async function signedDisclosure(request: DisclosureRequest, context: DisclosureContext): Promise<string> {
  const { view } = context;
  const checkpoint = await finalCheckpoint(request.checkpoint, context.checkpoints);
  if (request.withLiabilities && checkpoint.version !== 2) refuse('ERR-NotDisclosable', `checkpoint ${checkpoint.number} is of version 1: it has no liabilities trees`);
  if (!(await coversSubject(view, request.subject, context.assets, checkpoint.entrySequence))) {
    refuse('ERR-NotDisclosable', `checkpoint ${checkpoint.number} covers no entry of ${request.subject}`);
  }
  const entries = await evidenceEntries(request, checkpoint, context);
  const evidence = [];
  for (const entry of entries) {
    if (canonicalJson(entry.leaf) !== entry.text) damaged(`journal entry ${entry.seq}`, 'is not canonical JSON');
    evidence.push({ leaf: entry.leaf, proof: await inclusionProof(view, entry.seq - 1, checkpoint.entrySequence) });
  }
  const liabilities = request.withLiabilities ? await liabilitiesOf(request, checkpoint, context) : undefined;
  const unsigned = {
    v: liabilities === undefined ? 1 : 2,
    ...(liabilities === undefined ? {} : { liabilities }),
    instance: context.instance,
    clerk: context.clerk.publicKeyHex,
    subject: request.subject,
    assertion: request.assertion,
    checkpoint: { number: checkpoint.number, commitment: checkpoint.commitment, kernel_root: checkpoint.kernelRoot, entry_sequence: checkpoint.entrySequence },
    recipient: request.recipient,
    issued_at: context.nowMs,
    evidence,
  };
  const prefix = liabilities === undefined ? disclosureSignaturePrefix : disclosureSignaturePrefixV2;
  const signature = context.clerk.sign(Buffer.from(prefix + canonicalJson(unsigned), 'utf8')).toString('hex');
  return Buffer.from(canonicalJson({ ...unsigned, signature }), 'utf8').toString('hex');
}

/** The subject's proof in the asserted asset's liabilities tree (CONTRACT 12.4), as the liabilities route serves it. */
async function liabilitiesOf(request: DisclosureRequest, checkpoint: Checkpoint, context: DisclosureContext) {
  const asset = (request.assertion as Extract<Assertion, { shape: 'holds_at_least' }>).asset;
  const proof = await context.checkpoints.liabilities(checkpoint.number, asset, request.subject);
  return { account: request.subject, asset, instance: proof.instance, checkpoint: checkpointView(proof.checkpoint), leaf: { ...proof.leaf }, index: proof.index, path: proof.path };
}

/**
 * The subject's owner (within its credential's scope), or the operator with a
 * justification under a legal obligation. Anyone else learns nothing of the account,
 * not even whether it exists.
 */
async function authorise(request: DisclosureRequest, view: ReadView): Promise<void> {
  const { actor, subject } = request;
  const text = await view.get(keys.account(subject));
  const owner = text === undefined ? null : decodeAccount(text, keys.account(subject)).owner;
  if (actor.principal === request.operator) {
    if (owner === null) refuse('ERR-UnknownAccount', `no account ${subject}`);
    if (owner !== actor.principal && (request.legalObligation === null || request.legalObligation.trim() === '')) {
      refuse('ERR-JustificationRequired', 'the operator discloses about an account it does not own only under a legal obligation (legal_obligation)');
    }
    return;
  }
  if (owner === null || owner !== actor.principal || !inScope(actor, subject)) {
    refuse('ERR-NotAuthorised', `the initiating principal holds no authority that covers disclosures about ${subject} (its owner's or the operator's)`);
  }
}

async function finalCheckpoint(number: number | null, checkpoints: Checkpoints): Promise<Checkpoint> {
  const checkpoint = number === null ? await checkpoints.latestFinal() : await checkpoints.get(number);
  if (checkpoint === undefined || checkpoint.status !== 'final') {
    refuse('ERR-AnchorNotFinal', number === null ? 'no checkpoint is final yet' : `checkpoint ${number} is unknown or not final`);
  }
  return checkpoint;
}

/** Whether the subject has an entry at or before `entrySequence`, in any asset. */
async function coversSubject(view: ReadView, subject: AccountId, assets: readonly AssetSymbol[], entrySequence: number): Promise<boolean> {
  for (const asset of assets) {
    const prefix = keys.accountAssetPrefix(subject, asset);
    for await (const [key] of view.entries({ gte: prefix, lte: prefix + seqHex(entrySequence), limit: 1 })) if (key) return true;
  }
  return false;
}

interface Entry {
  readonly seq: number;
  readonly text: string;
  readonly leaf: { operation: string; account: string; asset: string; direction: 'credit' | 'debit'; amount: string; counterparty: string | null; after: { available: string } };
}

const directions = unionMembers<Entry['leaf']['direction']>({ credit: true, debit: true });

/** A journal entry's leaf (CONTRACT 9), its fields read here checked (decode.ts); the leaf is kept whole, as evidence. */
function entryOf(seq: number, text: string): Entry {
  const what = `journal entry ${seq}`;
  const j = recordJson(text, what);
  for (const name of ['operation', 'account', 'asset']) check.string(j, name, what);
  check.oneOf(j, 'direction', directions, what);
  check.decimal(j, 'amount', what);
  check.nullableString(j, 'counterparty', what);
  check.decimal(check.object(j, 'after', what), 'available', what);
  return { seq, text, leaf: j as unknown as Entry['leaf'] };
}

/** An account index entry's journal entry (CONTRACT 9): its leaf, the bytes the journal holds, made again from the entry's posting (codec.ts). */
const postingEntry = (posting: Posting): Entry => entryOf(posting.seq, encodeLeaf(posting));

/** The subject's entries the assertion rests on (CONTRACT 9), refusing ERR-DisclosureFalse when they do not bear it out. */
async function evidenceEntries(request: DisclosureRequest, checkpoint: Checkpoint, context: DisclosureContext): Promise<Entry[]> {
  const { assertion: a, subject } = request;
  const covered = checkpoint.entrySequence;
  switch (a.shape) {
    case 'operation_occurred':
    case 'operation_moved': {
      const entries = await operationEntries(context, a.operation, subject, covered);
      if (entries.length > disclosureEvidenceMax) refuse('ERR-NotDisclosable', `the operation made more than ${disclosureEvidenceMax} entries of ${subject}`);
      if (entries.length === 0) refuse('ERR-DisclosureFalse', `operation ${a.operation} made no entry of ${subject} covered by checkpoint ${checkpoint.number}`);
      if (a.shape === 'operation_moved') {
        const inAsset = entries.filter((e) => e.leaf.asset === a.asset);
        const moved = (direction: string) => inAsset.filter((e) => e.leaf.direction === direction).reduce((t, e) => t + BigInt(e.leaf.amount), 0n);
        if (moved('debit') !== BigInt(a.amount) && moved('credit') !== BigInt(a.amount)) refuse('ERR-DisclosureFalse', `operation ${a.operation} did not move exactly ${a.amount} ${a.asset} on ${subject}`);
      }
      return entries;
    }
    case 'holds_at_least': {
      const prefix = keys.accountAssetPrefix(subject, a.asset);
      let last: Entry | null = null;
      for await (const [key, text] of context.view.entries({ gte: prefix, lte: prefix + seqHex(covered), reverse: true, limit: 1 })) last = postingEntry(decodeIndexedPosting(key, text));
      if (last === null || BigInt(last.leaf.after.available) < BigInt(a.amount)) refuse('ERR-DisclosureFalse', `${subject} did not hold ${a.amount} ${a.asset} available at checkpoint ${checkpoint.number}`);
      return [last];
    }
    case 'flows_bound': {
      if (a.to_sequence > covered) refuse('ERR-NotDisclosable', `checkpoint ${checkpoint.number} covers entries up to ${covered} only`);
      const prefix = keys.accountAssetPrefix(subject, a.asset);
      const direction = a.direction === 'in' ? 'credit' : 'debit';
      const entries: Entry[] = [];
      let scanned = 0;
      const range = { gte: prefix + seqHex(a.from_sequence), lte: prefix + seqHex(a.to_sequence), limit: disclosureScanEntriesMax + 1 };
      for await (const [key, text] of context.view.entries(range)) {
        if (++scanned > disclosureScanEntriesMax) refuse('ERR-NotDisclosable', `the range holds more than ${disclosureScanEntriesMax} entries of ${subject}; name a shorter one`);
        const posting = decodeIndexedPosting(key, text);
        const crosses = posting.counterparty !== null && posting.counterparty !== subject;
        if (crosses && posting.direction === direction) entries.push(postingEntry(posting));
      }
      if (entries.length > disclosureEvidenceMax) refuse('ERR-NotDisclosable', `the flow rests on more than ${disclosureEvidenceMax} entries; name a shorter range`);
      const total = entries.reduce((t, e) => t + BigInt(e.leaf.amount), 0n);
      const holds = a.bound_kind === 'at_least' ? total >= BigInt(a.bound) : total <= BigInt(a.bound);
      if (!holds) refuse('ERR-DisclosureFalse', `the ${a.direction} flow of ${subject} over entries ${a.from_sequence}..${a.to_sequence} is not ${a.bound_kind.replace('_', ' ')} ${a.bound}`);
      return entries;
    }
  }
}

/** The subject's entries of an operation covered by the checkpoint, in order. */
async function operationEntries(context: DisclosureContext, ref: string, subject: AccountId, covered: number): Promise<Entry[]> {
  const seqs = (await context.operationPostings(ref)) ?? [];
  const entries: Entry[] = [];
  for (const seq of [...seqs].filter((s) => s <= covered).sort((x, y) => x - y)) {
    for await (const text of journalLeaves(context.view, seq, seq)) {
      const entry = entryOf(seq, text);
      if (entry.leaf.account === subject && entry.leaf.operation === ref) entries.push(entry);
    }
  }
  return entries;
}
