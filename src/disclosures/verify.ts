/**
 * Verifying a disclosure (CONTRACT 9, spec endpoint 21). Self-contained on purpose:
 * it imports nothing but node:crypto, canonical JSON and one-line quoting (which import nothing), so that `ledgerctl disclosures verify --offline`
 * (which imports no kernel code) runs the very checks the daemon runs, and so that it
 * reads as the format's reference (docs/disclosures.md).
 *
 * Checks, in order, stopping at the first that fails: `parse` (hex of UTF-8 canonical
 * JSON of the disclosure's shape), `signature` (ed25519 by the trusted clerk key),
 * `checkpoint` (this deployment's instance, one of its final checkpoints, same
 * commitment, root and size), `proofs` (every leaf is the subject's and its RFC 9162
 * path leads to kernel_root) and `assertion` (the evidence supports it as far as the
 * shape allows). A value of the disclosure a report line names is quoted on one line
 * (src/one-line.ts), so no value can add a line of its own to the report.
 */
import { createHash, createPublicKey, verify as verifySignature } from 'node:crypto';
import { canonicalJson } from '../model/canonical.js';
import { oneLine, quoted } from '../one-line.js';

// The checkpoint chain is verified where CONTRACT 12's proofs are; re-exported for the disclosure's readers.
export { chainProblem, checkpointCommitment } from '../checkpoints/verify-proofs.js';
import { liabilitiesChecks } from '../checkpoints/verify-proofs.js';

export const disclosureSignaturePrefix = 'ledger-disclosure:v1:';
/** CONTRACT 12.7: a disclosure carrying the subject's liabilities proof. */
export const disclosureSignaturePrefixV2 = 'ledger-disclosure:v2:';

/** What a verifier trusts: the clerk's key, the deployment's instance, and its final checkpoints. */
export interface Trust {
  readonly clerkPublicKeyHex: string;
  readonly instance: number;
  /** The final checkpoint with this number, or undefined when there is none. */
  finalCheckpoint(number: number): Promise<TrustedCheckpoint | undefined> | TrustedCheckpoint | undefined;
}

export interface TrustedCheckpoint {
  readonly number: number;
  readonly commitment: string;
  readonly kernel_root: string;
  readonly entry_sequence: number;
}

export interface Verification {
  readonly passed: boolean;
  /** One line per check run: `name: ok` or `name: failed: why`. */
  readonly report: string;
}

export type CheckName = 'parse' | 'signature' | 'checkpoint' | 'proofs' | 'liabilities' | 'assertion';

class CheckFailed extends Error {}
const fail = (why: string): never => {
  throw new CheckFailed(why);
};

const sha256 = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const hex64 = /^[0-9a-f]{64}$/;
const decimal = /^(0|-?[1-9][0-9]*)$/;

/** RFC 9162 2.1.3.2: the root an inclusion path leads to from a leaf, or null when the path cannot fit the tree. */
export function rootFromInclusionPath(leafText: string, index: number, size: number, pathHex: readonly string[]): string | null {
  if (!(Number.isSafeInteger(index) && Number.isSafeInteger(size) && index >= 0 && index < size)) return null;
  let fn = index;
  let sn = size - 1;
  let r = sha256(Buffer.from([0]), Buffer.from(leafText, 'utf8'));
  for (const hex of pathHex) {
    if (typeof hex !== 'string' || !hex64.test(hex) || sn === 0) return null;
    const p = Buffer.from(hex, 'hex');
    if (fn % 2 === 1 || fn === sn) {
      r = sha256(Buffer.from([1]), p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else r = sha256(Buffer.from([1]), r, p);
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r.toString('hex') : null;
}

/** ed25519 verification under a raw 32-byte public key given as hex. */
function ed25519Verifies(publicKeyHex: string, message: Buffer, signatureHex: string): boolean {
  const spkiPrefix = Buffer.from('302a300506032b6570032100', 'hex');
  const key = createPublicKey({ key: Buffer.concat([spkiPrefix, Buffer.from(publicKeyHex, 'hex')]), format: 'der', type: 'spki' });
  return verifySignature(null, message, key, Buffer.from(signatureHex, 'hex'));
}

interface Leaf {
  readonly seq: number;
  readonly operation: string;
  readonly account: string;
  readonly asset: string;
  readonly direction: string;
  readonly amount: string;
  readonly counterparty: string | null;
  readonly after: { readonly available: string; readonly reserved?: string; readonly encumbered?: string };
}

interface Parsed {
  readonly body: Record<string, unknown>;
  /** 1, or 2 with `liabilities` (CONTRACT 12.7). */
  readonly v: 1 | 2;
  readonly liabilities?: unknown;
  readonly instance: number;
  readonly clerk: string;
  readonly subject: string;
  readonly assertion: Record<string, unknown>;
  readonly checkpoint: TrustedCheckpoint;
  readonly evidence: readonly { leaf: Record<string, unknown>; proof: string[] }[];
  readonly signature: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const sameKeys = (v: Record<string, unknown>, names: readonly string[]) => Object.keys(v).sort().join() === [...names].sort().join();
const isUint = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function parse(hex: string): Parsed {
  if (typeof hex !== 'string' || hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-f]+$/.test(hex)) fail('the disclosure is not lowercase hex of whole bytes');
  let text = '';
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(hex, 'hex'));
  } catch {
    fail('the bytes are not UTF-8');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    fail('the bytes are not JSON (truncated?)');
  }
  if (!isObject(body)) fail('the disclosure is not a JSON object');
  const b = body as Record<string, unknown>;
  if (canonicalJson(b) !== text) fail('the bytes are not canonical JSON');
  if (b.v !== 1 && b.v !== 2) fail(`version ${quoted(b.v)} is neither 1 nor 2`);
  const names = ['v', 'instance', 'clerk', 'subject', 'assertion', 'checkpoint', 'recipient', 'issued_at', 'evidence', 'signature'];
  if (!sameKeys(b, b.v === 2 ? [...names, 'liabilities'] : names)) fail('the members are not those of a disclosure');
  if (!isUint(b.instance) || b.instance > 0xffff_ffff) fail('instance is not a uint32');
  if (typeof b.clerk !== 'string' || !hex64.test(b.clerk)) fail('clerk is not a 32-byte hex key');
  if (typeof b.subject !== 'string') fail('subject is not an account');
  if (!isObject(b.assertion) || typeof b.assertion.shape !== 'string') fail('assertion has no shape');
  const c = b.checkpoint;
  if (!isObject(c) || !sameKeys(c, ['number', 'commitment', 'kernel_root', 'entry_sequence']) || !isUint(c.number) || !isUint(c.entry_sequence) || typeof c.commitment !== 'string' || !hex64.test(c.commitment) || typeof c.kernel_root !== 'string' || !hex64.test(c.kernel_root)) {
    fail('checkpoint is not {number, commitment, kernel_root, entry_sequence}');
  }
  const r = b.recipient;
  const oneRecipient = isObject(r) && ((sameKeys(r, ['identity']) && typeof r.identity === 'string') || (sameKeys(r, ['reference']) && typeof r.reference === 'string' && hex64.test(r.reference)));
  if (!oneRecipient) fail('recipient is not {identity} or {reference}');
  if (!isUint(b.issued_at)) fail('issued_at is not a time');
  if (!Array.isArray(b.evidence) || !b.evidence.every((e) => isObject(e) && sameKeys(e, ['leaf', 'proof']) && isObject(e.leaf) && Array.isArray(e.proof) && e.proof.every((h) => typeof h === 'string'))) {
    fail('evidence is not an array of {leaf, proof}');
  }
  if (typeof b.signature !== 'string' || !/^[0-9a-f]{128}$/.test(b.signature)) fail('signature is not 64 bytes of hex');
  return {
    body: b,
    v: b.v as 1 | 2,
    liabilities: b.liabilities,
    instance: b.instance as number,
    clerk: b.clerk as string,
    subject: b.subject as string,
    assertion: b.assertion as Record<string, unknown>,
    checkpoint: c as unknown as TrustedCheckpoint,
    evidence: b.evidence as Parsed['evidence'],
    signature: b.signature as string,
  };
}

function checkSignature(d: Parsed, trust: Trust): void {
  if (d.clerk !== trust.clerkPublicKeyHex) fail("the clerk key named is not this deployment's clerk");
  const { signature: _signature, ...unsigned } = d.body;
  const message = Buffer.from((d.v === 2 ? disclosureSignaturePrefixV2 : disclosureSignaturePrefix) + canonicalJson(unsigned), 'utf8');
  if (!ed25519Verifies(trust.clerkPublicKeyHex, message, d.signature)) fail("the signature does not verify under the clerk's key");
}

async function checkCheckpoint(d: Parsed, trust: Trust): Promise<void> {
  if (d.instance !== trust.instance) fail(`instance ${d.instance} is another deployment (this one is ${trust.instance})`);
  const trusted = await trust.finalCheckpoint(d.checkpoint.number);
  if (trusted === undefined) fail(`checkpoint ${d.checkpoint.number} is not a final checkpoint of this deployment`);
  const t = trusted!;
  if (t.commitment !== d.checkpoint.commitment) fail(`checkpoint ${t.number} has another commitment`);
  if (t.kernel_root !== d.checkpoint.kernel_root || t.entry_sequence !== d.checkpoint.entry_sequence) fail(`checkpoint ${t.number}'s root or size differs`);
}

function leafOf(leaf: Record<string, unknown>): Leaf {
  const ok =
    isUint(leaf.seq) && typeof leaf.operation === 'string' && typeof leaf.account === 'string' && typeof leaf.asset === 'string' &&
    (leaf.direction === 'debit' || leaf.direction === 'credit') && typeof leaf.amount === 'string' && decimal.test(leaf.amount) &&
    (leaf.counterparty === null || typeof leaf.counterparty === 'string') && isObject(leaf.after) && typeof leaf.after.available === 'string' && decimal.test(leaf.after.available);
  if (!ok) fail('a leaf is not a journal entry');
  return leaf as unknown as Leaf;
}

function checkProofs(d: Parsed): Leaf[] {
  const seen = new Set<number>();
  return d.evidence.map(({ leaf, proof }, i) => {
    const entry = leafOf(leaf);
    if (entry.account !== d.subject) fail(`evidence ${i} is an entry of another account`);
    if (seen.has(entry.seq)) fail(`entry ${entry.seq} is given twice`);
    seen.add(entry.seq);
    if (entry.seq < 1 || entry.seq > d.checkpoint.entry_sequence) fail(`entry ${entry.seq} is not covered by checkpoint ${d.checkpoint.number}`);
    if (rootFromInclusionPath(canonicalJson(leaf), entry.seq - 1, d.checkpoint.entry_sequence, proof) !== d.checkpoint.kernel_root) {
      fail(`the inclusion proof of entry ${entry.seq} does not lead to kernel_root`);
    }
    return entry;
  });
}

const sum = (leaves: readonly Leaf[]) => leaves.reduce((total, l) => total + BigInt(l.amount), 0n);
const amountOf = (value: unknown, name: string): bigint => (typeof value === 'string' && /^[0-9]+$/.test(value) ? BigInt(value) : fail(`the assertion's ${name} is not an amount`));
const completeness = " (completeness rests on the clerk's signature: inclusion proofs cannot show that no other entry exists)";

/** Whether the evidence supports the assertion; returns the note the ok line carries. */
function checkAssertion(d: Parsed, leaves: readonly Leaf[]): string {
  const a = d.assertion;
  switch (a.shape) {
    case 'operation_occurred': {
      if (leaves.length === 0) fail('no entry of the operation is given');
      if (leaves.some((l) => l.operation !== a.operation)) fail('an entry given is of another operation');
      return '';
    }
    case 'operation_moved': {
      if (leaves.some((l) => l.operation !== a.operation)) fail('an entry given is of another operation');
      const amount = amountOf(a.amount, 'amount');
      const inAsset = leaves.filter((l) => l.asset === a.asset);
      const debits = sum(inAsset.filter((l) => l.direction === 'debit'));
      const credits = sum(inAsset.filter((l) => l.direction === 'credit'));
      if (debits !== amount && credits !== amount) fail(`the operation's entries move ${debits} out and ${credits} in, not ${amount}`);
      return '';
    }
    case 'flows_bound': {
      const bound = amountOf(a.bound, 'bound');
      const from = a.from_sequence;
      const to = a.to_sequence;
      if (!isUint(from) || !isUint(to) || from > to) fail('the assertion names no range of entries');
      const direction = a.direction === 'in' ? 'credit' : a.direction === 'out' ? 'debit' : fail('direction is not in or out');
      for (const l of leaves) {
        if (l.asset !== a.asset || l.seq < (from as number) || l.seq > (to as number)) fail(`entry ${l.seq} is outside the asset or the range`);
        if (l.counterparty === null || l.counterparty === d.subject) fail(`entry ${l.seq} does not cross the account's boundary`);
        if (l.direction !== direction) fail(`entry ${l.seq} flows the other way`);
      }
      const total = sum(leaves);
      if (a.bound_kind === 'at_least' ? total < bound : a.bound_kind === 'at_most' ? total > bound : fail('bound_kind is not at_least or at_most')) {
        fail(`the entries sum to ${total}, which is not ${(a.bound_kind as string).replace('_', ' ')} ${bound}`);
      }
      return completeness;
    }
    case 'holds_at_least': {
      if (a.kind !== 'available') fail(`kind ${quoted(a.kind)} is not supported`);
      const amount = amountOf(a.amount, 'amount');
      if (leaves.length !== 1) fail('holds_at_least rests on exactly one entry');
      const [last] = leaves;
      if (last!.asset !== a.asset) fail('the entry is in another asset');
      if (BigInt(last!.after.available) < amount) fail(`the entry leaves ${last!.after.available} available, less than ${amount}`);
      return completeness;
    }
    default:
      return fail(`shape ${quoted(a.shape)} is not one the service makes`);
  }
}

/**
 * CONTRACT 12.7: a `v: 2` disclosure's liabilities proof holds as 12.4 says for the
 * subject in the asserted asset, at the disclosure's own checkpoint (already found final
 * with that commitment). Returns the leaf.
 */
function checkLiabilities(d: Parsed): Record<string, unknown> {
  const asset = d.assertion.asset;
  if (d.assertion.shape !== 'holds_at_least' || typeof asset !== 'string') fail('a liabilities proof goes with holds_at_least only');
  const proof = d.liabilities as Record<string, unknown> | undefined;
  const c = (isObject(proof) && isObject(proof.checkpoint) ? proof.checkpoint : {}) as Record<string, unknown>;
  const same = c.number === d.checkpoint.number && c.commitment === d.checkpoint.commitment && c.kernel_root === d.checkpoint.kernel_root && c.entry_sequence === d.checkpoint.entry_sequence;
  if (!same) fail("the proof's checkpoint is not the disclosure's");
  const anchored = { ...d.checkpoint };
  for (const [name, check] of liabilitiesChecks(proof, { account: d.subject, asset: asset as string, instance: d.instance, anchored })) {
    const problem = check();
    if (problem !== null) fail(`${name}: ${problem}`);
  }
  return proof!.leaf as Record<string, unknown>;
}

/** The v2 `holds_at_least`: the leaf holds at least the amount, and the evidence entry's balance is the leaf's, exactly. */
function checkExactHolding(d: Parsed, leaves: readonly Leaf[], leaf: Record<string, unknown>): string {
  const amount = amountOf(d.assertion.amount, 'amount');
  if (d.assertion.kind !== 'available') fail(`kind ${String(d.assertion.kind)} is not supported`);
  if (leaves.length !== 1) fail('holds_at_least rests on exactly one entry');
  const after = leaves[0]!.after;
  if (leaves[0]!.asset !== d.assertion.asset) fail('the entry is in another asset');
  if (after.available !== leaf.available || after.reserved !== leaf.reserved || after.encumbered !== leaf.encumbered) fail("the entry's balance is not the liabilities leaf's");
  if (BigInt(leaf.available as string) < amount) fail(`the balance at the checkpoint is ${String(leaf.available)} available, less than ${amount}`);
  return ' (exact: the balance at the checkpoint is the one counted in the published liabilities)';
}

/** Runs every check in order, stopping at the first that fails. Never throws for any input. */
export async function verifyDisclosure(hex: unknown, trust: Trust): Promise<Verification> {
  const lines: string[] = [];
  const run = async <T>(name: CheckName, check: () => T | Promise<T>): Promise<T> => {
    try {
      const value = await check();
      lines.push(`${name}: ok${typeof value === 'string' ? value : ''}`);
      return value;
    } catch (error) {
      lines.push(`${name}: failed: ${error instanceof CheckFailed ? error.message : `unexpected: ${oneLine((error as Error).message)}`}`);
      throw new CheckFailed(name);
    }
  };
  try {
    const d = await run('parse', () => parse(hex as string));
    await run('signature', () => checkSignature(d, trust));
    await run('checkpoint', () => checkCheckpoint(d, trust));
    const leaves = await run('proofs', () => checkProofs(d));
    if (d.v === 2) {
      const leaf = await run('liabilities', () => checkLiabilities(d));
      await run('assertion', () => checkExactHolding(d, leaves, leaf));
    } else await run('assertion', () => checkAssertion(d, leaves));
    return { passed: true, report: lines.join('\n') };
  } catch {
    return { passed: false, report: lines.join('\n') };
  }
}
