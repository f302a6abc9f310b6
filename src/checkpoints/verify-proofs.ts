/**
 * Verifying what CONTRACT 12 publishes: checkpoint objects of both versions and their
 * commitment chain (9, 12.3), consistency proofs (12.1) and a holder's liabilities
 * proof (12.4). Self-contained on purpose, like disclosures/verify.ts: node:crypto and
 * canonical JSON only, so `ledgerctl` runs the very checks offline and it reads as the
 * formats' reference (docs/audit.md).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../model/canonical.js';

/** Per asset, the top of a liabilities tree (12.2). */
export interface LiabilitiesRoot {
  readonly leaves: number;
  readonly root: string;
  readonly total: string;
}

/** A checkpoint object as served and exported: version 1 has no `version`, `previous` or `liabilities`. */
export interface CheckpointObject {
  readonly number: number;
  readonly entry_sequence: number;
  readonly kernel_root: string;
  readonly commitment: string;
  readonly version?: number;
  readonly previous?: string;
  readonly liabilities?: Readonly<Record<string, LiabilitiesRoot>>;
  readonly status?: string;
  readonly created_at?: number;
}

export const firstPrevious = '0'.repeat(64);
const hex64 = /^[0-9a-f]{64}$/;
const unsignedDecimal = /^(0|[1-9][0-9]*)$/;
const sumLimit = 2n ** 256n;
const sha256 = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isUint = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const sameKeys = (v: Record<string, unknown>, names: readonly string[]) => Object.keys(v).sort().join() === [...names].sort().join();

/** Section 9's commitment: a version-1 checkpoint's. */
export function checkpointCommitment(c: { instance: number; number: number; entry_sequence: number; kernel_root: string; previous: string }): string {
  const text = canonicalJson({ instance: c.instance, number: c.number, entry_sequence: c.entry_sequence, kernel_root: c.kernel_root, previous: c.previous });
  return sha256(Buffer.from(text, 'utf8')).toString('hex');
}

/** 12.3's commitment: a version-2 checkpoint's. */
export function checkpointCommitmentV2(c: { instance: number; number: number; entry_sequence: number; kernel_root: string; previous: string; liabilities: Readonly<Record<string, LiabilitiesRoot>> }): string {
  const liabilities = Object.fromEntries(Object.entries(c.liabilities).map(([asset, r]) => [asset, { leaves: r.leaves, root: r.root, total: r.total }]));
  const text = canonicalJson({ entry_sequence: c.entry_sequence, instance: c.instance, kernel_root: c.kernel_root, liabilities, number: c.number, previous: c.previous, version: 2 });
  return sha256(Buffer.from(text, 'utf8')).toString('hex');
}

function liabilitiesProblem(liabilities: unknown): string | null {
  if (!isObject(liabilities)) return 'liabilities is not an object';
  for (const [asset, r] of Object.entries(liabilities)) {
    const ok = isObject(r) && sameKeys(r, ['leaves', 'root', 'total']) && isUint(r.leaves) && r.leaves >= 1 && typeof r.root === 'string' && hex64.test(r.root) && typeof r.total === 'string' && unsignedDecimal.test(r.total) && BigInt(r.total) < sumLimit;
    if (!ok) return `liabilities of ${asset} is not {leaves, root, total}`;
  }
  return null;
}

/**
 * Why checkpoint `c` does not hold as the link after `previous` (a commitment, 64 zeros
 * before number 1), or null when it does: its version's members are all there and its
 * commitment recomputes. `afterVersion2`: a checkpoint before it was of version 2.
 */
export function checkpointProblem(instance: number, c: CheckpointObject, previous: string, afterVersion2: boolean): string | null {
  if (!isObject(c) || !isUint(c.number) || !isUint(c.entry_sequence) || typeof c.kernel_root !== 'string' || !hex64.test(c.kernel_root) || typeof c.commitment !== 'string' || !hex64.test(c.commitment)) {
    return 'it is not a checkpoint object';
  }
  if (!('version' in c)) {
    if (afterVersion2) return `checkpoint ${c.number} is of version 1 after one of version 2`;
    if (checkpointCommitment({ instance, ...c, previous }) !== c.commitment) return `checkpoint ${c.number}'s commitment does not follow from its fields and the one before`;
    return null;
  }
  if (c.version !== 2) return `checkpoint ${c.number} is of version ${String(c.version)}, neither 1 nor 2`;
  if (typeof c.previous !== 'string' || !hex64.test(c.previous)) return `checkpoint ${c.number} of version 2 has no previous`;
  const problem = liabilitiesProblem(c.liabilities);
  if (problem !== null) return `checkpoint ${c.number}: ${problem}`;
  if (c.previous !== previous) return `checkpoint ${c.number}'s previous is not the commitment of the one before`;
  if (checkpointCommitmentV2({ instance, ...c, previous, liabilities: c.liabilities! }) !== c.commitment) return `checkpoint ${c.number}'s commitment does not follow from its fields and the one before`;
  return null;
}

/**
 * Checks a chain of checkpoints as exported (oldest first, from number 1): each
 * commitment follows from its fields and the one before. Null when it holds, else why not.
 */
export function chainProblem(instance: number, checkpoints: readonly CheckpointObject[]): string | null {
  let previous = firstPrevious;
  let afterVersion2 = false;
  for (const [i, c] of checkpoints.entries()) {
    if (!isObject(c) || c.number !== i + 1) return `checkpoint ${i + 1} is missing from the chain`;
    const problem = checkpointProblem(instance, c, previous, afterVersion2);
    if (problem !== null) return problem;
    afterVersion2 ||= c.version === 2;
    previous = c.commitment;
  }
  return null;
}

/**
 * RFC 9162 2.1.4.2: whether `proof` shows the tree of `first` leaves (root `firstHex`) is
 * a prefix of the tree of `second` leaves (root `secondHex`). CONTRACT 12.1: an empty
 * proof, and only that, holds for `first` = `second` with equal roots and for `first` = 0.
 */
export function consistencyHolds(first: number, second: number, firstHex: string, secondHex: string, proof: unknown): boolean {
  if (!(isUint(first) && isUint(second) && first <= second)) return false;
  if (!Array.isArray(proof) || !proof.every((h) => typeof h === 'string' && hex64.test(h))) return false;
  if (first === 0 || first === second) return proof.length === 0 && (first === 0 || firstHex === secondHex);
  const path = (proof as string[]).map((h) => Buffer.from(h, 'hex'));
  if (Number.isInteger(Math.log2(first))) path.unshift(Buffer.from(firstHex, 'hex'));
  if (path.length === 0) return false;
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = sha256(Buffer.from([1]), c, fr);
      sr = sha256(Buffer.from([1]), c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else sr = sha256(Buffer.from([1]), sr, c);
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && fr.toString('hex') === firstHex && sr.toString('hex') === secondHex;
}

/** `{passed, report}` of checks run in order, stopping at the first that fails. */
export function reportOf(checks: readonly (readonly [string, () => string | null])[]): { passed: boolean; report: string } {
  const lines: string[] = [];
  for (const [name, run] of checks) {
    const problem = run();
    lines.push(problem === null ? `${name}: ok` : `${name}: failed: ${problem}`);
    if (problem !== null) return { passed: false, report: lines.join('\n') };
  }
  return { passed: true, report: lines.join('\n') };
}

/** The members a served checkpoint must share with the holder's copy (its status may have moved on since). */
function sameCheckpoint(served: unknown, copy: CheckpointObject): boolean {
  if (!isObject(served)) return false;
  const { status: _s, ...a } = served;
  const { status: _t, ...b } = copy as unknown as Record<string, unknown>;
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * 12.1's verifier, given a checkpoint chain already checked (oldest first, from 1):
 * `checkpoints` (the reply's `from` and `to` are the chain's `fromNumber` and
 * `toNumber`, so their commitments recompute there) and `proof`.
 */
export function consistencyChecks(chain: readonly CheckpointObject[], fromNumber: number, toNumber: number, reply: unknown): (readonly [string, () => string | null])[] {
  const r = isObject(reply) ? reply : {};
  return [
    ['checkpoints', () => {
      if (!isObject(reply) || !sameKeys(reply, ['from', 'to', 'proof'])) return 'the proof is not {from, to, proof}';
      if (fromNumber > toNumber) return `checkpoint ${fromNumber} is after ${toNumber}`;
      const from = chain[fromNumber - 1];
      const to = chain[toNumber - 1];
      if (from === undefined || to === undefined) return `checkpoints ${fromNumber} and ${toNumber} are not both in the chain`;
      if (!sameCheckpoint(r.from, from)) return `the proof's from is not checkpoint ${fromNumber} as held`;
      if (!sameCheckpoint(r.to, to)) return `the proof's to is not checkpoint ${toNumber} as held`;
      if (from.entry_sequence > to.entry_sequence) return 'the earlier checkpoint covers more entries than the later';
      return null;
    }],
    ['proof', () => {
      const from = chain[fromNumber - 1]!;
      const to = chain[toNumber - 1]!;
      return consistencyHolds(from.entry_sequence, to.entry_sequence, from.kernel_root, to.kernel_root, r.proof) ? null : `the proof does not show entries 1..${from.entry_sequence} unchanged in checkpoint ${toNumber}`;
    }],
  ];
}

const u256 = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex');

/** 12.2's node over two (hash, sum) pairs. */
export function sumNode(left: { hash: Buffer; sum: bigint }, right: { hash: Buffer; sum: bigint }): { hash: Buffer; sum: bigint } {
  return { hash: sha256(Buffer.from([1]), left.hash, u256(left.sum), right.hash, u256(right.sum)), sum: left.sum + right.sum };
}

/** A liabilities leaf's bytes: UTF-8 canonical JSON of its seven members. */
export function liabilitiesLeafHash(leaf: Record<string, unknown>): Buffer {
  return sha256(Buffer.from([0]), Buffer.from(canonicalJson(leaf), 'utf8'));
}

/**
 * 12.4 (3)-(4): the RFC 9162 2.1.3.2 walk of a sum path from (leaf hash, leaf sum) at
 * `index` of `size` leaves; the pair it ends at, or why it cannot be walked.
 */
export function sumPathTop(start: { hash: Buffer; sum: bigint }, index: number, size: number, path: unknown): { hash: Buffer; sum: bigint } | string {
  if (!(isUint(index) && isUint(size) && index < size)) return `index ${String(index)} is not in a tree of ${String(size)} leaves`;
  if (!Array.isArray(path)) return 'path is not an array';
  let fn = index;
  let sn = size - 1;
  let r = start;
  for (const c of path) {
    if (!isObject(c) || !sameKeys(c, ['hash', 'sum']) || typeof c.hash !== 'string' || !hex64.test(c.hash) || typeof c.sum !== 'string' || !unsignedDecimal.test(c.sum)) return 'a path element is not {hash, sum} with an unsigned decimal sum';
    if (sn === 0) return 'the path is longer than the tree is deep';
    const sibling = { hash: Buffer.from(c.hash, 'hex'), sum: BigInt(c.sum) };
    if (fn % 2 === 1 || fn === sn) {
      r = sumNode(sibling, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else r = sumNode(r, sibling);
    if (sibling.sum >= sumLimit || r.sum >= sumLimit) return 'a sum is 2^256 or more';
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : 'the path is shorter than the tree is deep';
}

const leafMembers = ['account', 'asset', 'available', 'checkpoint', 'encumbered', 'reserved', 'salt'];

/**
 * 12.4's verification of a holder's proof against the checkpoint `anchored` as held
 * (the checkpoints file, or the deployment's final checkpoint): the checks
 * `checkpoint`, `leaf` and `path`.
 */
export function liabilitiesChecks(reply: unknown, expected: { account: string; asset: string; instance: number; anchored: CheckpointObject | undefined }): (readonly [string, () => string | null])[] {
  const r = isObject(reply) ? reply : {};
  const c = (isObject(r.checkpoint) ? r.checkpoint : {}) as unknown as CheckpointObject;
  const leaf = (isObject(r.leaf) ? r.leaf : {}) as Record<string, unknown>;
  return [
    ['checkpoint', () => {
      if (!isObject(reply) || !sameKeys(reply, ['account', 'asset', 'instance', 'checkpoint', 'leaf', 'index', 'path'])) return 'the proof is not {account, asset, instance, checkpoint, leaf, index, path}';
      if (r.instance !== expected.instance) return `instance ${String(r.instance)} is another deployment (this one is ${expected.instance})`;
      if (!isObject(r.checkpoint) || c.version !== 2) return 'the checkpoint is not of version 2';
      const problem = checkpointProblem(expected.instance, c, c.previous ?? '', true);
      if (problem !== null) return problem;
      if (expected.anchored === undefined) return `checkpoint ${c.number} is not one held`;
      if (expected.anchored.commitment !== c.commitment) return `checkpoint ${c.number} has another commitment than the one anchored`;
      if (!isObject(c.liabilities![expected.asset])) return `checkpoint ${c.number} has no liabilities tree in ${expected.asset}`;
      return null;
    }],
    ['leaf', () => {
      if (r.account !== expected.account || r.asset !== expected.asset) return 'the proof is of another account or asset';
      if (!isObject(r.leaf) || !sameKeys(leaf, leafMembers)) return 'the leaf is not {account, asset, available, checkpoint, encumbered, reserved, salt}';
      if (leaf.account !== expected.account) return 'the leaf is of another account';
      if (leaf.asset !== expected.asset) return 'the leaf is in another asset';
      if (leaf.checkpoint !== c.number) return "the leaf is of another checkpoint";
      if (typeof leaf.salt !== 'string' || !hex64.test(leaf.salt)) return 'the salt is not 32 bytes of hex';
      for (const layer of ['available', 'reserved', 'encumbered']) {
        const v = leaf[layer];
        if (typeof v !== 'string' || !unsignedDecimal.test(v) || BigInt(v) >= sumLimit) return `${layer} is not an unsigned decimal string`;
      }
      return null;
    }],
    ['path', () => {
      const root = c.liabilities![expected.asset]!;
      const start = { hash: liabilitiesLeafHash(leaf), sum: BigInt(leaf.available as string) + BigInt(leaf.reserved as string) + BigInt(leaf.encumbered as string) };
      if (start.sum >= sumLimit) return 'the leaf sums to 2^256 or more';
      const top = sumPathTop(start, r.index as number, root.leaves, r.path);
      if (typeof top === 'string') return top;
      if (top.hash.toString('hex') !== root.root) return `the path does not lead to the root of ${expected.asset}`;
      if (top.sum.toString() !== root.total) return `the path sums to ${top.sum}, not the total ${root.total}`;
      return null;
    }],
  ];
}
